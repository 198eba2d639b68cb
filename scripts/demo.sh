#!/usr/bin/env bash
# `make demo`: a local sale, seeded, and the console opened against it.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --workspace
./target/debug/stockguard sandbox up
./target/debug/stockguard --profile sandbox sandbox seed

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "demo: opening the Stockguard console against the sandbox"
  exec ./target/debug/stockguard-desktop --profile sandbox
else
  echo "demo: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the desktop window cannot open;"
  echo "demo: showing the live drift table in the terminal instead (Ctrl-C to stop)"
  exec ./target/debug/stockguard --profile sandbox drift watch --interval 1
fi
