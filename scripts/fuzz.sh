#!/usr/bin/env bash
# Builds the libFuzzer targets with Debian's clang (CMake preset `fuzz`: ASan + UBSan) and runs
# each for SECONDS (default 60) from its seeds and fuzz/regressions/, then replays the
# regressions. Prints runs/s and coverage (cov, ft) per target; any crash, leak, timeout or
# sanitizer report fails it and leaves the input in build-fuzz/findings/<target>/.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
secs=${1:-${HEADROOM_FUZZ_SECONDS:-60}}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
command -v clang++ >/dev/null || { echo "fuzz: clang++ missing (apt-get install clang)" >&2; exit 1; }
cmake --preset fuzz >/dev/null
targets=()
for src in fuzz/fuzz_*.cpp; do targets+=("$(basename "$src" .cpp)"); done
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"
status=0
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t findings=build-fuzz/findings/$t
  mkdir -p "$corpus" "$findings"
  dirs=("$corpus" "fuzz/seeds/$t")
  [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
  dict=(); [ -f "fuzz/dicts/$t.dict" ] && dict=(-dict="fuzz/dicts/$t.dict")
  log=build-fuzz/$t.log
  if ! "build-fuzz/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -artifact_prefix="$findings/" "${dict[@]}" "${dirs[@]}" >"$log" 2>&1; then
    echo "fuzz: $t FOUND A FAILURE (see $log and $findings/)" >&2
    status=1
  fi
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  echo "fuzz: $t ${secs}s: ${last:-no stats}"
done
exit $status
