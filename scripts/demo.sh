#!/usr/bin/env bash
# `make demo`: a local sale, seeded, with an engine selling and buyers buying, and the
# console opened against it.
set -euo pipefail
cd "$(dirname "$0")/.."

# STOCKGUARD_DEMO_NO_BUILD=1: the binaries are built already (the test that presses Ctrl-C on
# `make demo` runs inside `cargo test`, which holds the build directory).
[ -n "${STOCKGUARD_DEMO_NO_BUILD:-}" ] || cargo build --workspace
sg="${CARGO_TARGET_DIR:-target}/debug/stockguard"
$sg sandbox up
$sg --profile sandbox sandbox seed

# Live traffic: one engine and a steady trickle of buyers on three healthy products, so the
# board moves. Both stop when the demo ends, however it ends (Ctrl-C included).
logs="${STOCKGUARD_SANDBOX_DIR:-.sandbox}"
mkdir -p "$logs"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
$sg --profile sandbox engine serve --listen "127.0.0.1:$port" > "$logs/demo-engine.log" 2>&1 &
engine=$!
load=""
# A script's background jobs start with SIGINT ignored (bash does so without job control), so
# Ctrl-C reaches only the foreground window: they are stopped with SIGTERM, given 5 s to end
# (the engine finishes what it holds), then killed.
stop_traffic() {
  kill -TERM $load $engine 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 $load $engine 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL $load $engine 2>/dev/null || true
  wait $load $engine 2>/dev/null || true
}
trap stop_traffic EXIT
sleep 1
$sg --profile sandbox load --target "http://127.0.0.1:$port" --product 1001 --product 1003 --product 1006 \
  --buyers 100000 --rate 40 --concurrency 4 --duration 60m --drain-timeout 5s > "$logs/demo-load.log" 2>&1 &
load=$!
echo "demo: engine on http://127.0.0.1:$port (log $logs/demo-engine.log), buyers at 40/s (log $logs/demo-load.log)"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "demo: opening the Stockguard console against the sandbox"
  "${CARGO_TARGET_DIR:-target}/debug/stockguard-desktop" --profile sandbox
else
  echo "demo: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the desktop window cannot open;"
  echo "demo: showing the live drift table in the terminal instead (Ctrl-C to stop)"
  $sg --profile sandbox drift watch --interval 1
fi
