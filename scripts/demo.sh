#!/usr/bin/env bash
# `make demo`: a local sale, seeded, with an engine selling and buyers buying, and the
# console opened against it.
set -euo pipefail
cd "$(dirname "$0")/.."
# rustup's cargo, for a shell that read no profile (as scripts/install-deps.sh says).
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

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
# The plan (crates/stockguard-engine/src/sandbox/demo.rs): the buyers never pay, the engine
# closes an unpaid order after a short pay window and its unit goes back on sale through the
# outbox, so the demo's products never sell out however long it runs.
engine_args=$($sg sandbox demo-args engine)
# shellcheck disable=SC2086 # the plan's arguments are words without spaces, split on purpose
$sg --profile sandbox engine serve --listen "127.0.0.1:$port" $engine_args > "$logs/demo-engine.log" 2>&1 &
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
# Buyers in rounds, one after another: each round checks its own answers against the DB when
# it ends (in the log), and none holds more than a round's answers in memory. SIGTERM ends the
# round under way, then the rounds; so does Ctrl-C. The round runs with SIGINT ignored (a
# script's background command does), but this loop, a bash of its own, gets the terminal's
# SIGINT too and, untrapped, died of it and left its round running: a terminal that stays
# open sends no SIGHUP to end it either.
load_args=$($sg sandbox demo-args load)
buy() {
  trap 'kill -TERM $(jobs -p) 2>/dev/null; wait; exit 0' TERM INT
  while :; do
    # shellcheck disable=SC2086 # the plan's arguments, split on purpose
    $sg --profile sandbox load --target "http://127.0.0.1:$port" $load_args &
    wait $! || sleep 1  # a round that failed at once (the engine gone) is not retried in a busy loop
  done
}
buy > "$logs/demo-load.log" 2>&1 &
load=$!
echo "demo: engine on http://127.0.0.1:$port (log $logs/demo-engine.log), buyers: $load_args (log $logs/demo-load.log)"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "demo: opening the Stockguard console against the sandbox"
  "${CARGO_TARGET_DIR:-target}/debug/stockguard-desktop" --profile sandbox
else
  echo "demo: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the desktop window cannot open;"
  echo "demo: showing the live drift table in the terminal instead (Ctrl-C to stop)"
  $sg --profile sandbox drift watch --interval 1
fi
