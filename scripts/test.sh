#!/usr/bin/env bash
# `make test`: make sure MySQL and Redis are up (the machine's, or private ones the sandbox
# starts) and RabbitMQ (the machine's), then run every test, the desktop end-to-end test
# included, under Xvfb when there is no display.
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
# The Grafana dashboards against Grafana's published schema (@grafana/schema, installed by
# the type check above).
node scripts/check-grafana.mjs

cargo build --quiet -p stockguard --bin stockguard
# Where cargo put it: CARGO_TARGET_DIR when set (the e2e test and the app look beside
# themselves, in the same folder).
"${CARGO_TARGET_DIR:-target}/debug/stockguard" sandbox up
# shellcheck disable=SC1091
source "$STOCKGUARD_SANDBOX_DIR/env"
export STOCKGUARD_TEST_REDIS_URL="$STOCKGUARD_REDIS_URL"
# The adapter tests create their sales' databases on the run's server (a user that may create
# databases), and run one sale on RabbitMQ (issue 28).
export STOCKGUARD_TEST_MYSQL_ADMIN="${STOCKGUARD_TEST_MYSQL_ADMIN:-${STOCKGUARD_MYSQL_URL%/*}}"
export STOCKGUARD_TEST_AMQP_URL="${STOCKGUARD_TEST_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/%2f}"

# RabbitMQ: the machine's, started when nothing answers on its port (the sandbox has none of
# its own). A test that cannot reach it fails; this says why first.
amqp_answers() { (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; }
if ! amqp_answers; then
  # Debian puts the server's commands in /usr/sbin, which a user's PATH may lack.
  export PATH="$PATH:/usr/sbin"
  if ! command -v rabbitmq-server >/dev/null; then
    echo "test: RabbitMQ does not answer on 127.0.0.1:5672 and rabbitmq-server is not installed (make deps installs it)" >&2
    exit 1
  fi
  echo "test: starting RabbitMQ (rabbitmq-server -detached)"
  rabbitmq-server -detached
  if ! timeout 120 rabbitmqctl await_startup >/dev/null || ! amqp_answers; then
    echo "test: RabbitMQ did not start within 120 s (see /var/log/rabbitmq/)" >&2
    exit 1
  fi
fi

# Its management HTTP API (issue 47): the only place the messages a consumer holds
# unacknowledged can be seen. The plugin is enabled when the API does not answer (enabling is
# idempotent, and needs the server's own rights), then awaited, a minute at most.
export STOCKGUARD_TEST_RABBIT_MANAGEMENT_URL="${STOCKGUARD_TEST_RABBIT_MANAGEMENT_URL:-http://guest:guest@127.0.0.1:15672}"
management_answers() {
  curl --silent --fail --max-time 5 --output /dev/null "${STOCKGUARD_TEST_RABBIT_MANAGEMENT_URL%/}/api/overview"
}
if ! command -v curl >/dev/null; then
  echo "test: curl is not installed; it asks the RabbitMQ management API whether it answers (apt-get install curl)" >&2
  exit 1
fi
# The TLS tests (issue 52) make their certificates with openssl, in each test's own folder, and
# start private servers with them (redis-server on a TLS port, mariadbd with --ssl-ca).
if ! command -v openssl >/dev/null; then
  echo "test: openssl is not installed; the TLS tests make their certificates with it (make deps installs it)" >&2
  exit 1
fi
if ! management_answers; then
  export PATH="$PATH:/usr/sbin"
  echo "test: enabling RabbitMQ's management plugin (rabbitmq-plugins enable rabbitmq_management)"
  if ! rabbitmq-plugins enable rabbitmq_management >/dev/null; then
    echo "test: rabbitmq-plugins could not enable rabbitmq_management (run it as a user that may manage the server)" >&2
    exit 1
  fi
  deadline=$((SECONDS + 60))
  until management_answers; do
    if ((SECONDS >= deadline)); then
      echo "test: the RabbitMQ management API does not answer at ${STOCKGUARD_TEST_RABBIT_MANAGEMENT_URL#*@}/api/overview within 60 s of enabling its plugin (check the URL's user and password; see /var/log/rabbitmq/)" >&2
      exit 1
    fi
    sleep 1
  done
fi

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
under_display() {
  if [ -n "${DISPLAY:-}" ]; then
    "$@"
  else
    xvfb-run --auto-servernum --server-args="-screen 0 1280x1024x24" "$@"
  fi
}
[ -n "${DISPLAY:-}" ] || echo "test: no DISPLAY, running under Xvfb"
status=0
under_display "${run[@]}" "$@" || status=$?

# The .deb of this run's debug build, installed on this machine, its app started against this
# sandbox on a display of its own, photographed, launched twice, then removed.
if [ $# -eq 0 ]; then
  tests/package/installed_app.sh || status=$?
fi

# Then the engine, reconciliation, rewrite and degrade suites again on a Redis Cluster the
# sandbox starts (three masters, three replicas on loopback). One test is left out, by name:
# it cuts a single Redis off through a TCP proxy, and a cluster's clients reach its nodes at
# the addresses the cluster hands out, past any proxy.
# `--workspace` as above, so cargo reuses the test binaries it built (the workspace's
# features are unified; `-p stockguard` alone would build them again).
if [ $# -eq 0 ]; then
  cluster_dir="$PWD/.sandbox/test-cluster"
  (
    export STOCKGUARD_SANDBOX_DIR="$cluster_dir" STOCKGUARD_CONFIG_DIR="$cluster_dir/config"
    "${CARGO_TARGET_DIR:-target}/debug/stockguard" sandbox up --redis-cluster
  )
  cluster_url="$(sed -n "s/^export STOCKGUARD_REDIS_URL='\(.*\)'$/\1/p" "$cluster_dir/env")"
  echo "test: the cluster suites, on $cluster_url"
  STOCKGUARD_TEST_REDIS_URL="$cluster_url" cargo test --no-fail-fast --workspace --test engine || status=$?
  STOCKGUARD_TEST_REDIS_URL="$cluster_url" cargo test --no-fail-fast --workspace --test console -- \
    degrade:: exit_guard:: exit_batch:: ledger:: recon_exact:: recon_inject:: rewrite:: \
    --skip degrade::redis_cut_off_mid_sale_trips_the_engines_and_the_guided_exit_brings_them_back_with_nothing_lost \
    || status=$?
  STOCKGUARD_SANDBOX_DIR="$cluster_dir" "${CARGO_TARGET_DIR:-target}/debug/stockguard" sandbox down || true
fi
exit "$status"
