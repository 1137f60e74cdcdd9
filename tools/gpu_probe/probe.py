#!/usr/bin/env python3
"""Measures on a real GPU the terms headroom can only estimate from logs: the CUDA context and
library workspaces (cuBLAS, SDPA, NCCL), the memory a CUDA-graph capture of a decode step takes
(pool growth vs driver-side graph memory), the caching allocator's rounding, PyTorch's exact OOM
text, and a real torch.cuda.memory snapshot for `headroom replay`'s tests.

usage: probe.py OUTDIR            (runs every section, each in a fresh process)
       probe.py OUTDIR SECTION [ARGS...]
Writes OUTDIR/results.jsonl (one JSON object per measurement) and snapshot pickles.
Figures recorded in docs/measurements/ with the date and machine they came from.
"""
import json
import os
import subprocess
import sys
import time

OUT = sys.argv[1]
MiB = 1 << 20
GiB = 1 << 30


def emit(obj):
    with open(os.path.join(OUT, "results.jsonl"), "a") as f:
        f.write(json.dumps(obj) + "\n")
    print(json.dumps(obj), flush=True)


def nvml_used():
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        m = pynvml.nvmlDeviceGetMemoryInfo(h)
        return {"nvml_total": m.total, "nvml_used": m.used, "nvml_free": m.free}
    except Exception as e:  # noqa: BLE001
        return {"nvml_error": str(e)}


def snap(torch, label):
    free, total = torch.cuda.mem_get_info()
    d = {"label": label, "free": free, "total": total, "used": total - free,
         "reserved": torch.cuda.memory_reserved(), "allocated": torch.cuda.memory_allocated()}
    d.update(nvml_used())
    return d


def section_context():
    before = nvml_used()
    import torch
    import torch.nn.functional as F
    rows = [dict(label="before_cuda", **before)]
    torch.cuda.init()
    x = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    props = torch.cuda.get_device_properties(0)
    rows.append(snap(torch, "context"))
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = a @ a
    torch.cuda.synchronize()
    rows.append(snap(torch, "after_bf16_matmul"))
    try:
        s = torch.tensor(1.0, device="cuda")
        af = a.to(torch.float8_e4m3fn)
        bf = a.t().contiguous().to(torch.float8_e4m3fn).t()
        torch._scaled_mm(af, bf, scale_a=s, scale_b=s, out_dtype=torch.bfloat16)
        torch.cuda.synchronize()
        rows.append(snap(torch, "after_fp8_scaled_mm"))
    except Exception as e:  # noqa: BLE001
        rows.append({"label": "after_fp8_scaled_mm", "error": str(e)[:200]})
    q = torch.randn(8, 32, 1024, 128, device="cuda", dtype=torch.bfloat16)
    F.scaled_dot_product_attention(q, q, q, is_causal=True)
    torch.cuda.synchronize()
    rows.append(snap(torch, "after_sdpa"))
    try:
        import torch.distributed as dist
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517", world_size=1, rank=0,
                                device_id=torch.device("cuda", 0))
        t = torch.ones(1 << 20, device="cuda")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        rows.append(snap(torch, "after_nccl_world1_allreduce"))
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001
        rows.append({"label": "after_nccl_world1_allreduce", "error": str(e)[:300]})
    emit({"section": "context", "module_loading": os.environ.get("CUDA_MODULE_LOADING", "(default)"),
          "torch": torch.__version__, "cuda": torch.version.cuda, "device": props.name,
          "total_memory": props.total_memory, "multiprocessors": props.multi_processor_count, "rows": rows})
    del x, b


def section_graphs(layers, n_sizes, max_bs, hidden=4096, inter=14336, heads=32, kv_heads=8, ctx=512):
    import torch
    torch.manual_seed(0)
    dev = "cuda"
    dt = torch.bfloat16
    hd = hidden // heads
    start = snap(torch, "start")
    W = []
    for _ in range(layers):
        W.append(dict(
            n1=torch.ones(hidden, device=dev, dtype=dt), n2=torch.ones(hidden, device=dev, dtype=dt),
            qkv=torch.randn(hidden, (heads + 2 * kv_heads) * hd, device=dev, dtype=dt) * 0.01,
            o=torch.randn(heads * hd, hidden, device=dev, dtype=dt) * 0.01,
            gu=torch.randn(hidden, 2 * inter, device=dev, dtype=dt) * 0.01,
            d=torch.randn(inter, hidden, device=dev, dtype=dt) * 0.01))
    # Static inputs / KV sized for the largest batch (what the engines allocate up front).
    xin = torch.randn(max_bs, hidden, device=dev, dtype=dt)
    kc = torch.randn(max_bs, kv_heads, ctx, hd, device=dev, dtype=dt)
    vc = torch.randn(max_bs, kv_heads, ctx, hd, device=dev, dtype=dt)

    def rms(x, w):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w

    def step(bs):
        x = xin[:bs]
        for w in W:
            h = rms(x, w["n1"])
            qkv = h @ w["qkv"]
            q, k, v = qkv.split([heads * hd, kv_heads * hd, kv_heads * hd], dim=-1)
            q = q.view(bs, heads, 1, hd)
            a = torch.nn.functional.scaled_dot_product_attention(q, kc[:bs], vc[:bs], enable_gqa=True)
            x = x + a.reshape(bs, heads * hd) @ w["o"]
            h = rms(x, w["n2"])
            g, u = (h @ w["gu"]).chunk(2, dim=-1)
            x = x + (torch.nn.functional.silu(g) * u) @ w["d"]
        return x

    torch.cuda.synchronize()
    loaded = snap(torch, "weights_loaded")
    # Kernels per layer-step (eager), from the profiler.
    kernels = None
    try:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step(1)
            torch.cuda.synchronize()
        kernels = sum(1 for e in prof.events() if e.device_type.name == "CUDA")
    except Exception as e:  # noqa: BLE001
        kernels = "error: " + str(e)[:100]
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = snap(torch, "before_capture")
    # SGLang-style capture list (1, 2, 4, 8, then steps of 8 up to max_bs), truncated to n_sizes, largest first.
    sizes = [1, 2, 4] + list(range(8, max_bs + 1, 8))
    sizes = sorted(set(sizes[-n_sizes:] if n_sizes < len(sizes) else sizes), reverse=True)
    pool = torch.cuda.graph_pool_handle()
    graphs = []
    stream = torch.cuda.Stream()
    t0 = time.time()
    after_warm = None
    for i, bs in enumerate(sizes):
        with torch.cuda.stream(stream):
            for _ in range(2):
                step(bs)
        torch.cuda.synchronize()
        if i == 0:
            after_warm = snap(torch, "after_first_warmup")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool, stream=stream):
            out = step(bs)
        graphs.append((g, out))
        if i == 0:
            first = snap(torch, "after_first_capture")
    torch.cuda.synchronize()
    end = snap(torch, "after_all_captures")
    for g, _ in graphs:
        g.replay()
    torch.cuda.synchronize()
    replayed = snap(torch, "after_replay")
    emit({"section": "graphs", "layers": layers, "n_graphs": len(sizes), "max_bs": max_bs, "hidden": hidden,
          "inter": inter, "ctx": ctx, "kernels_per_step_bs1": kernels, "capture_s": time.time() - t0,
          "sizes": sizes, "rows": [start, loaded, base, after_warm, first, end, replayed],
          "graph_used_delta": end["used"] - base["used"], "graph_reserved_delta": end["reserved"] - base["reserved"],
          "driver_side": (end["used"] - base["used"]) - (end["reserved"] - base["reserved"])})


def section_rounding():
    import torch
    rows = []
    sizes = [1, 512, 513, 1 * MiB - 1, 1 * MiB, 1 * MiB + 1, 2 * MiB + 1, 10 * MiB, 10 * MiB + 1,
             12 * MiB + 1, 20 * MiB + 1, 100 * MiB + 1, 1 * GiB + 1]
    torch.zeros(1, device="cuda")
    for s in sizes:
        torch.cuda.empty_cache()
        r0 = torch.cuda.memory_reserved()
        t = torch.empty(s, dtype=torch.uint8, device="cuda")
        r1 = torch.cuda.memory_reserved()
        st = torch.cuda.memory_stats()
        rows.append({"request": s, "reserved_growth": r1 - r0, "allocated_bytes": st["allocated_bytes.all.current"]})
        del t
    emit({"section": "rounding", "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "rows": rows})


def section_alloc(tag):
    import torch
    torch.zeros(1, device="cuda")
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=200000)
    # A serving-like pattern: weights, a KV pool, then prefill steps whose per-layer temporaries
    # are freed in reverse, with chunk sizes that change between steps (what fragments pools).
    keep = [torch.empty(s, dtype=torch.uint8, device="cuda") for s in (300 * MiB, 700 * MiB, 123 * MiB + 7)]
    kv = torch.empty(8 * GiB, dtype=torch.uint8, device="cuda")
    hidden, inter = 4096, 14336
    for tokens in (8192, 3000, 8192, 5000, 16384, 1000):
        live = []
        for layer in range(4):
            live.append(torch.empty(tokens * hidden * 2, dtype=torch.uint8, device="cuda"))
            live.append(torch.empty(tokens * inter * 4, dtype=torch.uint8, device="cuda"))
            live.append(torch.empty(tokens * 48 * 128 * 2, dtype=torch.uint8, device="cuda"))
            del live[-2]
        small = [torch.empty(4096 * (i + 1), dtype=torch.uint8, device="cuda") for i in range(64)]
        del small[::2]
        del live, small
    st = torch.cuda.memory_stats()
    torch.cuda.memory._dump_snapshot(os.path.join(OUT, f"snapshot_{tag}.pickle"))
    emit({"section": "alloc", "tag": tag, "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
          "reserved_peak": st["reserved_bytes.all.peak"], "allocated_peak": st["allocated_bytes.all.peak"],
          "reserved_now": st["reserved_bytes.all.current"], "allocated_now": st["allocated_bytes.all.current"],
          "segments": st["segment.all.current"], "num_alloc_retries": st["num_alloc_retries"]})
    torch.cuda.memory._record_memory_history(enabled=None)
    del kv, keep


def section_oom():
    import torch
    torch.zeros(1, device="cuda")
    msgs = []
    try:
        torch.empty(400 * GiB, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as e:
        msgs.append(str(e))
    free, total = torch.cuda.mem_get_info()
    fill = torch.empty(free - 1 * GiB, dtype=torch.uint8, device="cuda")
    try:
        torch.empty(2 * GiB, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as e:
        msgs.append(str(e))
    emit({"section": "oom", "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "messages": msgs})
    del fill


def run_child(args, env_extra=None, timeout=150):
    env = dict(os.environ)
    env.update(env_extra or {})
    t0 = time.time()
    r = subprocess.run([sys.executable, __file__, OUT] + [str(a) for a in args], env=env, timeout=timeout,
                       capture_output=True, text=True)
    with open(os.path.join(OUT, "log.txt"), "a") as f:
        f.write(f"== {args} {env_extra} rc={r.returncode} {time.time() - t0:.1f}s\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}\n")
    print(f"== {args} {env_extra} rc={r.returncode} {time.time() - t0:.1f}s", flush=True)
    if r.returncode != 0:
        print(r.stderr[-1500:], flush=True)


def main():
    if len(sys.argv) > 2:
        sec = sys.argv[2]
        a = sys.argv[3:]
        if sec == "context":
            section_context()
        elif sec == "graphs":
            section_graphs(int(a[0]), int(a[1]), int(a[2]))
        elif sec == "rounding":
            section_rounding()
        elif sec == "alloc":
            section_alloc(a[0])
        elif sec == "oom":
            section_oom()
        return
    os.makedirs(OUT, exist_ok=True)
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,memory.used,driver_version",
                              "--format=csv"], capture_output=True, text=True, timeout=30).stdout
    except Exception as e:  # noqa: BLE001
        smi = str(e)
    emit({"section": "smi", "text": smi})
    run_child(["context"])
    run_child(["context"], {"CUDA_MODULE_LOADING": "EAGER"})
    run_child(["rounding"])
    run_child(["alloc", "default"])
    run_child(["alloc", "expandable"], {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    run_child(["oom"])
    run_child(["oom"], {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    # CUDA graphs: (layers, number of captured sizes, max batch)
    for layers, n, bs in ((32, 4, 8), (32, 35, 256), (8, 35, 256), (32, 35, 64), (16, 35, 256)):
        run_child(["graphs", layers, n, bs])


if __name__ == "__main__":
    main()
