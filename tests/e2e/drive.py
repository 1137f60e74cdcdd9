"""Drives the `headroom serve` page in headless Chromium (issue 7's end-to-end test).

usage: drive.py URL ARTIFACTS_DIR SEED_LOG

Enters the seed deployment (tests/data/seed/README.md: SGLang, nvidia/GLM-5-NVFP4, 8 x RTX PRO
6000, TP 8) through the form, reads the verdict at --mem-fraction-static 0.95 (OOM at CUDA-graph
capture, as the real launch died) and at 0.88 (fits, as the second launch started), checks that
the URL alone restores the deployment, and saves screenshots at 1280x800 and at phone width.
The tune and doctor tabs are exercised and photographed too; their answers belong to their own
tests, so only the plan verdicts are asserted here. The Host tab plans and tunes its example (two
vLLM 0.8.5 servers at 0.5 on one H100: the second is refused; tune raises it to 0.61) and shows a
garbled host state as one line. The Versions tab compares vLLM 0.8.2 and 0.10.2 for Qwen2.5-7B on an
A100-80GB (its example chip): KV tokens 1,030,784 -> 1,039,200, the stage table and a pair of bars
per stage, and PR #19312's per-instance budget among the rules new in 0.10.2. Last, llama.cpp: Qwen/Qwen3-8B as a derived Q4_K_M GGUF on an RTX
4090 (fits: one bar for the GPU, one for the host RAM), then Q8_0 split 1,5 over an RTX 4090 and an
RTX 3060 with f32 K and --fit off (the 3060 is OVER, the 4090 fits), with the llama-server command.
"""
import base64
import os
import sys
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

URL, ART, SEED_LOG = sys.argv[1], sys.argv[2], sys.argv[3]
TIMEOUT = 150  # a plan of the 744B-parameter seed model takes seconds of CPU; machines under load are slower
failures = []


def log(msg):
    print(f"web_e2e: {msg}", flush=True)


def make_driver(profile):
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,800",
                 "--force-device-scale-factor=1"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=opts)


def viewport(driver, width, height, mobile=False):
    """Sets the page's viewport exactly (the window size would include the browser's frame)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def shot(driver, name, full=False):
    path = os.path.join(ART, name)
    if full:
        # The whole page, not just the viewport (Chrome DevTools protocol).
        h = driver.execute_script("return Math.ceil(document.documentElement.scrollHeight)")
        w = driver.execute_script("return Math.ceil(document.documentElement.scrollWidth)")
        data = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
    else:
        driver.save_screenshot(path)
    log(f"screenshot {path}")


def typed(driver, element_id, text):
    """Replaces the field's text the way a person would (select all, type)."""
    e = driver.find_element(By.ID, element_id)
    e.click()
    e.send_keys(Keys.CONTROL, "a")
    e.send_keys(Keys.DELETE)
    e.send_keys(text)
    return e


def verdict(driver, box="verdict"):
    e = driver.find_element(By.ID, box)
    return e.get_attribute("data-verdict"), e.get_attribute("data-stage") or "", e.text.replace("\n", " ")


def wait_verdict(driver, want, fraction):
    """Waits until the page shows the forecast for this fraction (URL updated, no request in flight).

    The URL changes as the field is typed, a moment before the request starts, so the previous
    verdict can still be on the page then: wait for the wanted one; a wrong final verdict still
    fails the caller's check once TIMEOUT has passed."""
    def ready(d):
        v, _, _ = verdict(d)
        busy = d.find_element(By.ID, "busy").is_displayed()
        return (f"--mem-fraction-static={fraction}" in d.current_url and not busy and v == want) and v
    try:
        WebDriverWait(driver, TIMEOUT, poll_frequency=0.1).until(ready)
    except TimeoutException:
        pass
    v, stage, text = verdict(driver)
    log(f"at {fraction}: verdict={v} stage={stage} text={text!r}")
    return v, stage, text


def check(cond, msg):
    if not cond:
        failures.append(msg)
        log("FAIL: " + msg)


def main():
    os.makedirs(ART, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="headroom-e2e-chromium-") as profile:
        driver = make_driver(profile)
        try:
            run(driver)
        finally:
            logs = []
            try:
                logs = driver.get_log("browser")
            except Exception:  # the log is a nicety; some drivers do not offer it
                pass
            with open(os.path.join(ART, "browser-console.log"), "w") as f:
                for entry in logs:
                    f.write(f"{entry.get('level')} {entry.get('message')}\n")
            driver.quit()
    if failures:
        log(f"{len(failures)} failure(s):")
        for f in failures:
            log("  " + f)
        return 1
    log("all checks passed")
    return 0


def run(driver):
    viewport(driver, 1280, 800)
    driver.get(URL)
    WebDriverWait(driver, TIMEOUT).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    check("headroom" in driver.title, f"page title is {driver.title!r}")
    gpus = [o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#gpu option")]
    check("rtx-pro-6000" in gpus, "the GPU picker does not offer rtx-pro-6000")
    models = [o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#model-list option")]
    check("nvidia/GLM-5-NVFP4" in models, "the model picker does not offer nvidia/GLM-5-NVFP4")

    # The seed deployment, entered through the form.
    Select(driver.find_element(By.ID, "engine")).select_by_value("sglang")
    Select(driver.find_element(By.ID, "gpu")).select_by_value("rtx-pro-6000")
    typed(driver, "tp", "8")
    typed(driver, "flag-mem-fraction-static", "0.95")
    typed(driver, "model", "nvidia/GLM-5-NVFP4")

    v, stage, text = wait_verdict(driver, "oom", "0.95")
    shot(driver, "e2e-seed-0.95.png")
    shot(driver, "e2e-seed-0.95-full.png", full=True)
    check(v == "oom", f"at 0.95 the verdict is {v!r}, want 'oom' ({text})")
    check(stage == "cuda_graph", f"at 0.95 the failing stage is {stage!r}, want 'cuda_graph'")
    check("OOM at CUDA-graph capture" in text, f"at 0.95 the page says {text!r}, want 'OOM at CUDA-graph capture'")
    bars = driver.find_elements(By.CSS_SELECTOR, "#bars svg.bar")
    check(len(bars) >= 1, "no memory bar drawn")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#bars rect.overflow")) >= 1, "the request that does not fit is not drawn")

    typed(driver, "flag-mem-fraction-static", "0.88")
    v, stage, text = wait_verdict(driver, "fits", "0.88")
    shot(driver, "e2e-seed-0.88.png")
    shot(driver, "e2e-seed-0.88-full.png", full=True)
    check(v == "fits", f"at 0.88 the verdict is {v!r}, want 'fits' ({text})")
    check(text.lower().find("fits") >= 0, f"at 0.88 the page says {text!r}, want 'fits'")

    # An error after a good run: nothing of the old forecast stays under "No forecast", and the
    # message shows once (in the banner).
    typed(driver, "flag-mem-fraction-static", "7")
    v_err, _, text_err = wait_verdict(driver, "error", "7")
    check(v_err == "error", f"at 7 the verdict is {v_err!r}, want 'error' ({text_err})")
    stats = driver.find_elements(By.CSS_SELECTOR, "#stats .stat")
    check(len(stats) == 0, f"after an error {len(stats)} figures of the previous forecast stay on the page")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#bars svg")) == 0, "after an error the previous memory bars stay on the page")
    banner = driver.find_element(By.ID, "error")
    check(banner.is_displayed(), "after an error the banner does not show")
    msg = banner.text.replace("Problem: ", "").strip()
    check(msg != "" and driver.find_element(By.ID, "verdict").text.count(msg[:40]) == 0,
          "the error shows twice (banner and verdict)")
    typed(driver, "flag-mem-fraction-static", "0.88")
    wait_verdict(driver, "fits", "0.88")

    # The link alone restores the deployment.
    link = driver.current_url
    driver.get("about:blank")
    driver.get(link)
    WebDriverWait(driver, TIMEOUT).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    v2, _, text2 = wait_verdict(driver, "fits", "0.88")
    check(v2 == v, f"reopening the link gives {v2!r} ({text2}), the page gave {v!r}")
    check(driver.find_element(By.ID, "model").get_attribute("value") == "nvidia/GLM-5-NVFP4", "the link lost the model")

    # Narrow screen: one column, nothing wider than the viewport.
    viewport(driver, 414, 900, mobile=True)
    # The relayout after the resize can lag on a loaded machine: poll for it, then measure.
    try:
        WebDriverWait(driver, 15, poll_frequency=0.2).until(
            lambda d: d.execute_script("return document.documentElement.scrollWidth - window.innerWidth") <= 1)
    except TimeoutException:
        pass
    overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    check(overflow <= 1, f"at 414 px the page is {overflow}px wider than the screen")
    shot(driver, "e2e-narrow.png")
    shot(driver, "e2e-narrow-full.png", full=True)
    viewport(driver, 1280, 800)
    time.sleep(0.3)

    # Tune and doctor tabs (answers asserted by their own tests; here: they render).
    tab = driver.find_element(By.ID, "tab-tune")
    tab.click()
    try:
        WebDriverWait(driver, 60).until(
            lambda d: d.find_element(By.ID, "tune-verdict").get_attribute("data-verdict") not in ("none", "")
            and "pending" not in (d.find_element(By.ID, "tune-verdict").get_attribute("class") or ""))
    except TimeoutException:
        log("tune: no answer in time")
    log("tune: " + driver.find_element(By.ID, "tune-verdict").text.replace("\n", " "))
    # The other-knobs table of the CLI is on the page too.
    want_alt = driver.execute_script("return state.tune ? (state.tune.alternatives || []).length : -1")
    alt = driver.find_elements(By.CSS_SELECTOR, "#tune-alt-table tr")
    check(want_alt > 0 and len(alt) == want_alt + 1, f"tune: the other-knobs table has {len(alt)} rows for {want_alt} alternatives")
    # A refused row (the engine would not start) is never plotted: one KV point per other row.
    rows = driver.execute_script("return state.tune ? state.tune.tradeoffs.map(r => r.verdict) : null")
    if rows is None:
        check(False, "tune: no answer to count the plotted points against")
    else:
        points = len(driver.find_elements(By.CSS_SELECTOR, "#tune-chart circle.pt-kv"))
        plotted = sum(1 for v in rows if v != "refused")
        check(points == plotted, f"tune: {points} KV points plotted for {plotted} rows that are not refused ({rows})")
    shot(driver, "e2e-tune.png", full=True)

    # Keyboard: the tab list is one tab stop; the arrow keys move between the tabs.
    tab.send_keys(Keys.ARROW_RIGHT)
    time.sleep(0.2)
    check(driver.find_element(By.ID, "tab-doctor").get_attribute("aria-selected") == "true"
          and driver.switch_to.active_element.get_attribute("id") == "tab-doctor",
          "keyboard: ArrowRight on the Tune tab selects and focuses Doctor")
    check(driver.find_element(By.ID, "tab-tune").get_attribute("tabindex") == "-1", "keyboard: only the selected tab is a tab stop")
    driver.switch_to.active_element.send_keys(Keys.HOME)
    time.sleep(0.2)
    check(driver.find_element(By.ID, "tab-plan").get_attribute("aria-selected") == "true", "keyboard: Home selects the first tab")

    # The crashed launch used 0.95: the form fills what the log does not say.
    driver.find_element(By.ID, "tab-plan").click()
    typed(driver, "flag-mem-fraction-static", "0.95")
    wait_verdict(driver, "oom", "0.95")
    driver.find_element(By.ID, "tab-doctor").click()
    with open(SEED_LOG) as f:
        seed_log = f.read()
    area = driver.find_element(By.ID, "log-text")
    driver.execute_script("arguments[0].value = arguments[1];", area, seed_log)
    driver.find_element(By.ID, "diagnose").click()
    try:
        WebDriverWait(driver, TIMEOUT).until(
            lambda d: d.find_elements(By.ID, "doctor-verdict") or d.find_elements(By.CSS_SELECTOR, "#diagnosis .error, #diagnosis .bad"))
    except TimeoutException:
        log("doctor: no answer in time")
    log("doctor: " + driver.find_element(By.ID, "diagnosis").text[:300].replace("\n", " | "))
    shot(driver, "e2e-doctor.png", full=True)

    run_host(driver)
    run_versions(driver)
    run_llamacpp(driver)


def wait_plan(driver, url_part, want):
    """Waits for the plan whose link holds url_part to show verdict `want` (or TIMEOUT)."""
    def ready(d):
        v, _, _ = verdict(d)
        return url_part in d.current_url and not d.find_element(By.ID, "busy").is_displayed() and v == want
    try:
        WebDriverWait(driver, TIMEOUT, poll_frequency=0.1).until(ready)
    except TimeoutException:
        pass
    v, stage, text = verdict(driver)
    log(f"llama.cpp ({url_part}): verdict={v} stage={stage} text={text!r}")
    return v, stage


def device_bars(driver):
    """{device name: verdict} of the per-device chart."""
    return {b.get_attribute("data-device"): b.get_attribute("data-verdict")
            for b in driver.find_elements(By.CSS_SELECTOR, "#bars svg.device-bar")}


def run_llamacpp(driver):
    """llama.cpp on the Plan tab: the per-device chart, OVER on the card that does not fit."""
    driver.find_element(By.ID, "tab-plan").click()
    Select(driver.find_element(By.ID, "engine")).select_by_value("llamacpp")
    check(not driver.find_element(By.ID, "tp").is_displayed(), "llama.cpp: the TP field still shows")
    check(driver.find_element(By.ID, "quant").is_displayed(), "llama.cpp: no quant field")
    check(driver.find_element(By.ID, "quant").get_attribute("placeholder") == "Q4_K_M", "llama.cpp: the quant's default is not shown")
    Select(driver.find_element(By.ID, "gpu")).select_by_value("rtx-4090")
    typed(driver, "model", "Qwen/Qwen3-8B")
    typed(driver, "flag-ctx-size", "32768")
    v, _ = wait_plan(driver, "--ctx-size=32768", "fits")
    check(v == "fits", f"llama.cpp on an RTX 4090: verdict {v!r}, want 'fits'")
    bars = device_bars(driver)
    check(bars == {"CUDA0": "fits", "CPU_Mapped": "host"}, f"llama.cpp: device bars {bars}, want CUDA0 fits and the host")
    # The bar's model buffer is the plan's, and the defaults llama.cpp takes show grey.
    drawn = driver.execute_script(
        "const r = document.querySelector('#bars svg[data-device=CUDA0] rect[data-part=\"model buffer\"]');"
        "return r ? Number(r.getAttribute('data-bytes')) : -1")
    want = driver.execute_script("return state.plan.devices[0].model_buffer_bytes")
    check(drawn == want and want > 0, f"llama.cpp: the model buffer drawn is {drawn} B, the plan says {want} B")
    ngl = driver.find_element(By.ID, "flag-n-gpu-layers").get_attribute("placeholder")
    check(ngl == "37", f"llama.cpp: -ngl's default shows {ngl!r}, want '37' (36 layers + output)")
    cmd = driver.find_element(By.ID, "llama-command").text
    check("llama-server" in cmd and "--ctx-size 32768" in cmd, f"llama.cpp: the command is {cmd!r}")
    shot(driver, "e2e-llamacpp-fits.png", full=True)

    typed(driver, "quant", "Q8_0")
    typed(driver, "gpu-mix", "rtx-4090,rtx-3060")
    typed(driver, "flag-tensor-split", "1,5")
    typed(driver, "flag-cache-type-k", "f32")
    typed(driver, "extra", "--fit off")
    typed(driver, "flag-ctx-size", "40960")
    v, stage = wait_plan(driver, "--ctx-size=40960", "oom")
    check(v == "oom" and stage == "kv_pool", f"llama.cpp split over 4090 + 3060: verdict {v!r} at {stage!r}, want 'oom' at kv_pool")
    bars = device_bars(driver)
    check(bars == {"CUDA0": "fits", "CUDA1": "over", "CPU_Mapped": "host"}, f"llama.cpp: device bars {bars}, want CUDA1 OVER")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#bars svg[data-device=CUDA1] rect.overflow")) == 1, "llama.cpp: OVER is not drawn on CUDA1")
    check("OVER" in driver.find_element(By.CSS_SELECTOR, "#bars .device[data-device=CUDA1]").text, "llama.cpp: CUDA1 does not say OVER")
    shot(driver, "e2e-llamacpp-over.png", full=True)

    # A bad value is one line in the banner.
    typed(driver, "flag-cache-type-k", "q9")
    v, _ = wait_plan(driver, "--cache-type-k=q9", "error")
    banner = driver.find_element(By.ID, "error")
    check(v == "error" and banner.is_displayed() and "q9" in banner.text and "\n" not in banner.text.strip(),
          f"llama.cpp: a bad --cache-type-k shows {banner.text!r}, want one line naming q9")


def run_versions(driver):
    """The Versions tab: the vLLM 0.8.2 -> 0.10.2 chip on Qwen2.5-7B / A100-80GB, drawn answer first."""
    driver.find_element(By.ID, "tab-versions").click()
    check(driver.find_element(By.ID, "tab-versions").get_attribute("aria-selected") == "true", "the Versions tab is not selected")
    Select(driver.find_element(By.ID, "engine")).select_by_value("vllm")
    Select(driver.find_element(By.ID, "gpu")).select_by_value("a100-80gb")
    typed(driver, "tp", "")  # the seed's TP 8: one GPU here
    typed(driver, "model", "Qwen/Qwen2.5-7B-Instruct")
    chip = WebDriverWait(driver, 10).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "#versions-examples button[data-from='0.8.2'][data-to='0.10.2']"))
    chip.click()

    def ready(d):
        res = d.find_element(By.ID, "versions-result")
        return (not d.find_element(By.ID, "versions-busy").is_displayed() and res.get_attribute("data-pair") == "0.8.2>0.10.2"
                and "Qwen2.5-7B" in d.current_url and "to=0.10.2" in d.current_url)
    try:
        WebDriverWait(driver, TIMEOUT, poll_frequency=0.1).until(ready)
    except TimeoutException:
        log("versions: no answer in time; the banner says " + repr(driver.find_element(By.ID, "error").text))
    # A plan answered after the diff redraws the tab once more: read it when it holds still.
    last = [None]

    def still(d):
        html = d.execute_script("const r = document.getElementById('versions-result'); return r ? r.innerHTML : ''")
        same, last[0] = html == last[0], html
        return same
    try:
        WebDriverWait(driver, TIMEOUT, poll_frequency=0.5).until(still)
    except TimeoutException:
        log("versions: the answer kept changing")
    text = driver.find_element(By.ID, "versions-result").text.replace("\n", " ")
    log("versions: " + text[:300])
    kv = driver.find_element(By.ID, "versions-kv").text if driver.find_elements(By.ID, "versions-kv") else ""
    check("1,030,784 → 1,039,200" in kv and "+8,416" in kv and "+0.8%" in kv,
          f"versions: the KV line is {kv!r}, want 1,030,784 → 1,039,200 (+8,416, +0.8%)")
    rules = [li.get_attribute("data-rule") for li in driver.find_elements(By.CSS_SELECTOR, "#versions-rules-to li.rule")]
    check(rules[:1] == ["vllm.per_instance_budget"], f"versions: rules new in 0.10.2 are {rules}, want vllm.per_instance_budget first")
    budget = driver.execute_script("const b = document.querySelector(\"#versions-rules-to li[data-rule='vllm.per_instance_budget']\");"
                                   "return b ? b.textContent : ''")
    check("PR #19312" in budget, "versions: the per-instance budget rule does not name PR #19312")
    gone = [li.get_attribute("data-rule") for li in driver.find_elements(By.CSS_SELECTOR, "#versions-rules-from li.rule")]
    check("vllm.graph_outputs_per_size" in gone, f"versions: rules only in 0.8.2 are {gone}")
    stages = [tr.get_attribute("data-stage") for tr in driver.find_elements(By.CSS_SELECTOR, "#versions-stages tr[data-stage]")]
    want = driver.execute_script("return versionsState.answer ? versionsState.answer.stages.map((s) => s.name) : []")
    check(stages == want and "kv_pool" in stages, f"versions: stage rows {stages}, the answer has {want}")
    for stage, arrow in (("kv_pool", "▲"), ("cuda_graph", "▼")):  # more KV memory, smaller graphs: both better
        cell = driver.find_elements(By.CSS_SELECTOR, f"#versions-stages tr[data-stage={stage}] td.delta")
        text = cell[0].text if cell else "(no row)"
        check(bool(cell) and "better" in cell[0].get_attribute("class") and arrow in text,
              f"versions: the {stage} change is {text!r}, want {arrow} and 'better'")
    bars = driver.find_elements(By.CSS_SELECTOR, "#versions-chart svg.vbar")
    check(len(bars) == 2 * len(want) and len(want) > 0, f"versions: {len(bars)} bars for {len(want)} stages, want a pair each")
    drawn = driver.execute_script("const b = document.querySelector('#versions-chart .vpair[data-stage=kv_pool] svg.vbar.to');"
                                  "return b ? Number(b.getAttribute('data-bytes')) : -1")
    check(drawn == 59591884800, f"versions: the 0.10.2 KV pool bar is {drawn} B, want 59591884800")
    era = driver.find_element(By.ID, "engine-era").text
    check("0.8.2" in era, f"versions: the form's 'Rules used' line is {era!r}, want the 'from' version 0.8.2")
    shot(driver, "e2e-versions.png", full=True)
    viewport(driver, 390, 844, mobile=True)
    shot(driver, "e2e-versions-narrow.png", full=True)
    viewport(driver, 1280, 800)

    # A version the engine never had is one line in the banner.
    typed(driver, "versions-to", "99.1")
    try:
        WebDriverWait(driver, TIMEOUT, poll_frequency=0.1).until(
            lambda d: "to=99.1" in d.current_url and not d.find_element(By.ID, "versions-busy").is_displayed()
            and d.find_element(By.ID, "versions-result").get_attribute("data-state") == "error")
    except TimeoutException:
        log("versions: no error in time")
    banner = driver.find_element(By.ID, "error")
    check(banner.is_displayed() and "99.1" in banner.text and "\n" not in banner.text.strip(),
          f"versions: an unknown version shows {banner.text!r}, want one line naming 99.1")
    # Leave the form as the next steps expect it: the newest version, the Plan tab.
    typed(driver, "versions-to", "")
    typed(driver, "engine-version", "")


def wait_host(driver, verb):
    """Waits for the Host tab's answer to this verb (or an error), no request in flight."""
    def ready(d):
        res = d.find_element(By.ID, "host-result")
        done = not d.find_element(By.ID, "host-busy").is_displayed() and d.find_elements(By.ID, "host-verdict")
        return done and (res.get_attribute("data-verb") == verb or d.find_element(By.ID, "host-verdict").get_attribute("data-verdict") == "error")
    try:
        WebDriverWait(driver, 60, poll_frequency=0.1).until(ready)
    except TimeoutException:
        log(f"host {verb}: no answer in time")
    return driver.find_element(By.ID, "host-result").text.replace("\n", " ")


def run_host(driver):
    """The Host tab: the example's plan and tune, and a garbled host state."""
    driver.find_element(By.ID, "tab-host").click()
    check(driver.find_element(By.ID, "tab-host").get_attribute("aria-selected") == "true", "the Host tab is not selected")
    check(driver.find_element(By.ID, "host-state").is_displayed(), "the host-state box is hidden on the Host tab")
    driver.find_element(By.ID, "host-plan").click()
    text = wait_host(driver, "plan")
    log("host plan: " + text[:300])
    check("1 of 2 servers start" in text, f"host plan: the page says {text[:200]!r}, want '1 of 2 servers start'")
    check("Why:" in text, "host plan: no 'why' beside the refused server")
    moments = driver.execute_script("return hostState.answer ? hostState.answer.gpus.reduce((n, g) => n + g.timeline.length, 0) : -1")
    bars = len(driver.find_elements(By.CSS_SELECTOR, "#host-result svg.moment-bar"))
    check(moments > 0 and bars == moments, f"host plan: {bars} bars for {moments} moments")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#host-result svg.moment-bar svg[data-holder=chat]")) >= 1, "host plan: 'chat' is not drawn")
    shot(driver, "e2e-host-plan.png", full=True)

    driver.find_element(By.ID, "host-tune").click()
    text = wait_host(driver, "tune")
    log("host tune: " + text[:300])
    check("0.61" in text or "let every server start" in text, f"host tune: the page says {text[:200]!r}, want 0.61")
    check(len(driver.find_elements(By.ID, "copy-host-launch")) == 1, "host tune: no Copy button for the launch commands")
    shot(driver, "e2e-host-tune.png", full=True)

    # Garbled nvidia-smi output: one line in the banner, as the plan's errors show.
    area = driver.find_element(By.ID, "host-state")
    driver.execute_script("arguments[0].value = arguments[1];", area, "index, memory.used [MiB]\n0, lots\n")
    driver.find_element(By.ID, "host-plan").click()
    wait_host(driver, "error")
    banner = driver.find_element(By.ID, "error")
    check(banner.is_displayed() and "\n" not in banner.text.strip(), f"host: a garbled host state shows {banner.text!r}, want one line")
    log("host garbled: " + banner.text)
    driver.execute_script("arguments[0].value = '';", area)


if __name__ == "__main__":
    sys.exit(main())
