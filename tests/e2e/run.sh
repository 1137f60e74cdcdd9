#!/usr/bin/env bash
# Browser end-to-end test of `headroom serve` (issue 7), run by ctest as web_e2e:
#   tests/e2e/run.sh HEADROOM_BINARY ARTIFACTS_DIR
# Starts the server on a free loopback port, drives the page in Debian's headless Chromium
# (chromium + chromium-driver + python3-selenium; `scripts/setup.sh test` installs them) and
# leaves screenshots and the server log in ARTIFACTS_DIR.
set -euo pipefail
bin=${1:?usage: tests/e2e/run.sh HEADROOM_BINARY ARTIFACTS_DIR}
art=${2:-$PWD/artifacts}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$art"

# Debian's selenium lives in the system Python, which may not be the first python3 on PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
missing=()
[ -x "$bin" ] || missing+=("the headroom binary at $bin")
command -v chromium >/dev/null || missing+=("chromium")
command -v chromedriver >/dev/null || missing+=("chromium-driver")
"$py" -c 'import selenium' 2>/dev/null || missing+=("python3-selenium")
if [ ${#missing[@]} -gt 0 ]; then
  echo "web_e2e: missing: ${missing[*]} (scripts/setup.sh test installs them)" >&2
  exit 1
fi

serve_log="$art/serve.log"
"$bin" serve --host 127.0.0.1 --port 0 >"$serve_log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT

url=""
for _ in $(seq 200); do
  url=$(grep -o 'http://[^ ]*' "$serve_log" | head -n1 || true)
  [ -n "$url" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "web_e2e: headroom serve exited before listening:" >&2
    cat "$serve_log" >&2
    exit 1
  fi
  sleep 0.05
done
[ -n "$url" ] || { echo "web_e2e: headroom serve printed no address in 10 s" >&2; cat "$serve_log" >&2; exit 1; }
echo "web_e2e: server at $url"

"$py" "$here/drive.py" "$url" "$art" "$here/../data/seed/seed-crash.log"
