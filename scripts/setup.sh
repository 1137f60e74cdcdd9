#!/usr/bin/env bash
# Installs what headroom needs (Debian 12 packages only), builds it, and then either tells the
# seed story (`setup.sh run`: the crash forecast, diagnosed and fixed; `setup.sh run VERB ...`
# runs one verb) or runs the whole test suite (`setup.sh test`). Run as root on a fresh machine;
# re-running skips what is already installed.
set -euo pipefail
mode=${1:-run}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

pkgs=(cmake make g++ python3 nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev
      libbenchmark-dev libcpp-httplib-dev libcurl4-openssl-dev libyaml-cpp-dev pkg-config ccache)
if [ "$mode" = test ]; then
  # The browser end-to-end test of `headroom serve` drives Debian's Chromium through its driver.
  pkgs+=(chromium chromium-driver python3-selenium)
  # The libFuzzer targets (scripts/fuzz.sh, run by .ci/run) build with Debian's clang.
  pkgs+=(clang libclang-rt-14-dev)  # libFuzzer and the sanitizer runtimes (only recommended by clang)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

# The seed story (tests/data/seed/README.md), end to end: the forecast of the launch that crashed,
# the doctor on its crash log alone, and the forecast at the doctor's fix. Exits 0 when each step
# says what it should (the forecast fails, the doctor finds the failure, the fix fits).
seed_story() {
  local h=./build/headroom log=tests/data/seed/seed-crash.log rc fix json
  local dep=(--engine sglang --model nvidia/GLM-5-NVFP4 --gpu rtx-pro-6000 --tp 8)
  echo "== 1/3 before the first launch: headroom plan ${dep[*]} --mem-fraction-static 0.95 --brief"
  rc=0; "$h" plan "${dep[@]}" --mem-fraction-static 0.95 --brief || rc=$?
  [ "$rc" = 1 ] || { echo "setup: the forecast at 0.95 should fail (exit 1), got exit $rc" >&2; return 1; }
  echo; echo "== 2/3 after the crash: headroom doctor $log"
  rc=0; "$h" doctor "$log" || rc=$?
  [ "$rc" = 1 ] || { echo "setup: the doctor should find the failure (exit 1), got exit $rc" >&2; return 1; }
  json=$("$h" doctor "$log" --json || true)  # exit 1: the failure it found
  fix=$(python3 -c 'import json,sys; print(next(f["value"] for f in json.load(sys.stdin)["fix"] if f["flag"] == "--mem-fraction-static"))' <<<"$json")
  echo; echo "== 3/3 the fix: headroom plan ${dep[*]} --mem-fraction-static $fix --brief"
  "$h" plan "${dep[@]}" --mem-fraction-static "$fix" --brief
}

case "$mode" in
  run)  shift || true
        if [ $# -gt 0 ]; then ./build/headroom "$@"; else seed_story; fi ;;
  test) cd build && ctest --output-on-failure -j"$(nproc)" ;;
  *)    echo "usage: scripts/setup.sh [run [VERB ARGS...] | test]" >&2; exit 2 ;;
esac
