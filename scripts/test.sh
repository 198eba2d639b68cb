#!/usr/bin/env bash
# `make test`: make sure MySQL and Redis are up (the machine's, or private ones the sandbox
# starts), then run every test, the desktop end-to-end test included, under Xvfb when there
# is no display.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# Tests write no profile into the user's config.
export STOCKGUARD_CONFIG_DIR="$PWD/.sandbox/test-config"
export STOCKGUARD_SANDBOX_DIR="$PWD/.sandbox/test"

cargo build --quiet -p stockguard --bin stockguard
./target/debug/stockguard sandbox up
# shellcheck disable=SC1091
source "$STOCKGUARD_SANDBOX_DIR/env"
export STOCKGUARD_TEST_REDIS_URL="$STOCKGUARD_REDIS_URL"

run=(cargo test --workspace --no-fail-fast)
if [ -n "${DISPLAY:-}" ]; then
  "${run[@]}" "$@"
else
  echo "test: no DISPLAY, running under Xvfb"
  xvfb-run --auto-servernum --server-args="-screen 0 1280x1024x24" "${run[@]}" "$@"
fi
