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

# A database of this run's own: a shared, long-lived one could hold migrations of another
# checkout (newer or older) and fail this one. Dropped at the end.
run_db="stockguard_test_$(date +%s)_$$"
export STOCKGUARD_MYSQL_URL="${STOCKGUARD_MYSQL_URL:-mysql://root@127.0.0.1:3306/$run_db}"

# Gates before the tests: formatting, lints (a warning fails the run), front-end types.
cargo fmt --all --check
cargo clippy --quiet --workspace --all-targets -- -D warnings
scripts/typecheck-ui.sh

cargo build --quiet -p stockguard --bin stockguard
# Where cargo put it: CARGO_TARGET_DIR when set (the e2e test and the app look beside
# themselves, in the same folder).
"${CARGO_TARGET_DIR:-target}/debug/stockguard" sandbox up
# shellcheck disable=SC1091
source "$STOCKGUARD_SANDBOX_DIR/env"
export STOCKGUARD_TEST_REDIS_URL="$STOCKGUARD_REDIS_URL"

drop_run_db() {
  if [[ "$STOCKGUARD_MYSQL_URL" =~ ^mysql://([^:@/]+)@([^:/]+):([0-9]+)/(stockguard_test_[0-9_]+)$ ]] && command -v mariadb >/dev/null; then
    mariadb -u "${BASH_REMATCH[1]}" -h "${BASH_REMATCH[2]}" -P "${BASH_REMATCH[3]}" \
      -e "DROP DATABASE IF EXISTS \`${BASH_REMATCH[4]}\`" || true
  fi
}
trap drop_run_db EXIT

# With arguments (say `-p stockguard-desktop --test e2e`), only what they name.
run=(cargo test --no-fail-fast)
[ $# -gt 0 ] || run+=(--workspace)
if [ -n "${DISPLAY:-}" ]; then
  "${run[@]}" "$@"
else
  echo "test: no DISPLAY, running under Xvfb"
  xvfb-run --auto-servernum --server-args="-screen 0 1280x1024x24" "${run[@]}" "$@"
fi
