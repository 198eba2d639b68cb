#!/usr/bin/env bash
# CPU per accepted order, per process, with one engine under steady load on this machine.
#
#   scripts/cpu-per-order.sh [SECONDS] [CONCURRENCY]    (defaults: 8 s, 50)
#
# Needs the sandbox (`stockguard sandbox up && stockguard sandbox seed`) on the machine's own
# MariaDB and Redis, and a release build (`cargo build --release`). Starts an engine on
# 127.0.0.1:18080 and a load generator against a scratch product, reads each process's CPU
# time from /proc over a window of steady sending, and prints CPU per accepted order for the
# engine, the load generator, mariadbd and redis-server. Accepted orders are counted from the
# Redis stock key. The scratch product and its orders are deleted afterwards.
# Extra engine flags: EXTRA="--batch-size 100" scripts/cpu-per-order.sh
set -euo pipefail
SECS=${1:-8}
CONC=${2:-50}
BIN=${BIN:-target/release/stockguard}
DB=${DB:-stockguard}
PREFIX=${PREFIX:-sg}
P=$((8000000000 + RANDOM * 1000 + RANDOM))

mysql -uroot "$DB" -e "INSERT INTO inventory (product_id, name, initial_stock, stock, per_user_limit)
  VALUES ($P, 'cpu-per-order', 100000000, 100000000, 1)"
redis-cli SET "$PREFIX:{$P}:stock" 100000000 >/dev/null
redis-cli XGROUP CREATE "$PREFIX:{$P}:orders" persist 0 MKSTREAM >/dev/null

# shellcheck disable=SC2086
STOCKGUARD_PROFILE=${STOCKGUARD_PROFILE:-sandbox} "$BIN" engine serve --listen 127.0.0.1:18080 \
  --per-user-rate 0 ${EXTRA:-} >/tmp/cpu-per-order-engine.log 2>&1 &
ENGINE=$!
sleep 1.5
STOCKGUARD_PROFILE=${STOCKGUARD_PROFILE:-sandbox} "$BIN" load --target http://127.0.0.1:18080 \
  --product "$P" --buyers 2000000 --rate 1000000 --duration $((SECS + 3))s \
  --concurrency "$CONC" >/tmp/cpu-per-order-load.log 2>&1 &
LOAD=$!
sleep 1.5  # past the start: connections open, script loaded

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # utime + stime, in clock ticks
MARIADB=$(pgrep -x mariadbd | head -1)
REDIS=$(pgrep -x redis-server | head -1)
read -r e1 l1 m1 r1 <<<"$(cpu $ENGINE) $(cpu $LOAD) $(cpu "$MARIADB") $(cpu "$REDIS")"
t1=$(date +%s.%N); s1=$(redis-cli GET "$PREFIX:{$P}:stock")
sleep "$SECS"
read -r e2 l2 m2 r2 <<<"$(cpu $ENGINE) $(cpu $LOAD) $(cpu "$MARIADB") $(cpu "$REDIS")"
t2=$(date +%s.%N); s2=$(redis-cli GET "$PREFIX:{$P}:stock")

kill "$LOAD" 2>/dev/null || true; wait "$LOAD" 2>/dev/null || true
sleep 2; kill -INT "$ENGINE"; wait "$ENGINE" || true
python3 - "$t1" "$t2" "$s1" "$s2" "$(getconf CLK_TCK)" "$e1" "$e2" "$l1" "$l2" "$m1" "$m2" "$r1" "$r2" <<'PY'
import sys
t1, t2, s1, s2, hz = (float(x) for x in sys.argv[1:6])
ticks = [float(x) for x in sys.argv[6:]]
dt, rate = t2 - t1, (s1 - s2) / (t2 - t1)
total = 0.0
for i, name in enumerate(["engine", "load generator", "mariadbd", "redis-server"]):
    cores = (ticks[2 * i + 1] - ticks[2 * i]) / hz / dt
    total += cores
    print(f"{name:15s} {100 * cores:6.1f}% of a core  {1e6 * cores / rate:6.1f} us per order")
print(f"{'all four':15s} {100 * total:6.1f}% of a core  {1e6 * total / rate:6.1f} us per order")
print(f"accepted orders/s in the window: {rate:.0f}")
PY
mysql -uroot "$DB" -e "DELETE FROM orders WHERE product_id = $P; DELETE FROM inventory WHERE product_id = $P"
redis-cli DEL "$PREFIX:{$P}:stock" "$PREFIX:{$P}:orders" "$PREFIX:{$P}:inflight" "$PREFIX:{$P}:buyers" \
  "$PREFIX:{$P}:idem" "$PREFIX:{$P}:seq" >/dev/null
