#!/usr/bin/env bash
# Installs what headroom needs (Debian 12 packages only), builds it, and then either runs the
# main job (`setup.sh run`) or the whole test suite (`setup.sh test`). Run as root on a fresh
# machine; re-running skips what is already installed.
set -euo pipefail
mode=${1:-run}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

pkgs=(cmake make g++ python3 nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev
      libbenchmark-dev libcpp-httplib-dev pkg-config ccache)
if [ "$mode" = test ]; then
  # The browser end-to-end test of `headroom serve` drives Debian's Chromium through its driver.
  pkgs+=(chromium chromium-driver python3-selenium)
  # The libFuzzer targets (scripts/fuzz.sh, run by .ci/run) build with Debian's clang.
  pkgs+=(clang)
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

case "$mode" in
  run)  shift || true; ./build/headroom "${@:-plan}" ;;
  test) cd build && ctest --output-on-failure -j"$(nproc)" ;;
  *)    echo "usage: scripts/setup.sh [run [VERB ARGS...] | test]" >&2; exit 2 ;;
esac
