#!/usr/bin/env bash
# The .deb, installed: `make test` runs this after the cargo tests (scripts/test.sh), against the
# MySQL and Redis of the sandbox it started (STOCKGUARD_MYSQL_URL / STOCKGUARD_REDIS_URL).
#
#  1. builds the package (scripts/package.sh --debug: the debug build `make test` compiled, so
#     no second, optimised compile; the subject here is the package, not the optimiser), or
#     takes STOCKGUARD_DEB (say, the release .deb `make package` made);
#  2. installs it with `dpkg -i` (root, or sudo), checks what it put in /usr/bin, and runs
#     `/usr/bin/stockguard --help`;
#  3. loads the demo sale into a database and key prefix of its own with the INSTALLED CLI
#     (`stockguard sandbox up`, `sandbox seed`), then starts the INSTALLED app on that `sandbox`
#     profile, under an Xvfb and a D-Bus session bus of its own (a private display: on a
#     developer's desktop, their own Stockguard would count as a second window);
#  4. waits for the app's log (STOCKGUARD_LOG_DIR) to say "connected", photographs the window
#     (target/screenshots/installed-app.png; docs/screenshots/ with STOCKGUARD_WRITE_SCREENSHOTS=1);
#  5. launches the app a second time: that process must exit by itself, the first must say
#     it brought its window forward, and exactly one Stockguard window must remain;
#  6. removes the package (`dpkg -r`), the database and the keys: the machine is left as found.
#
# A script, not a cargo test: it changes the machine (dpkg), so it runs once, alone, after the
# cargo tests, and it drives only installed binaries and X tools.
#
# Anything missing (root, Xvfb, xdotool, ImageMagick, D-Bus, the sandbox's servers) fails the
# test, saying what to run; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
# dpkg runs ldconfig and start-stop-daemon from the system folders, which a user's (or a
# bare CI job's) PATH may lack: it then refuses to install at all.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "package test: $*"; }
fail() { echo "package test: FAILED: $*" >&2; exit 1; }

# What the test needs, checked before anything is installed.
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || fail "installing a .deb needs root or sudo"
  sudo="sudo"
fi
for tool in dpkg Xvfb xdotool import identify dbus-daemon mariadb redis-cli node; do
  command -v "$tool" >/dev/null || fail "\`$tool\` is not installed: run \`make deps\` (scripts/install-deps.sh)"
done
[ -n "${STOCKGUARD_MYSQL_URL:-}" ] && [ -n "${STOCKGUARD_REDIS_URL:-}" ] ||
  fail "STOCKGUARD_MYSQL_URL and STOCKGUARD_REDIS_URL are not set: run it through \`make test\` (scripts/test.sh), which starts the sandbox"
if dpkg-query -W -f='${Status}' stockguard 2>/dev/null | grep -q "install ok installed"; then
  fail "a stockguard package is already installed here; this test installs and removes its own: \`dpkg -r stockguard\` first"
fi
for f in /usr/bin/stockguard /usr/bin/stockguard-desktop; do
  [ ! -e "$f" ] || fail "$f exists (not from a package): the test would overwrite it"
done

work="$(mktemp -d /tmp/stockguard-package-test.XXXXXX)"
# A database and a key prefix of this test's own, on the sandbox's servers.
[[ "$STOCKGUARD_MYSQL_URL" =~ ^mysql://([^:@/]+)@([^:/]+):([0-9]+)/([A-Za-z0-9_]+)$ ]] ||
  fail "STOCKGUARD_MYSQL_URL=$STOCKGUARD_MYSQL_URL is not of the form mysql://user@host:port/database (no password) that the sandbox writes"
db_user="${BASH_REMATCH[1]}" db_host="${BASH_REMATCH[2]}" db_port="${BASH_REMATCH[3]}"
database="${BASH_REMATCH[4]}_pkg"
mysql_url="mysql://$db_user@$db_host:$db_port/$database"
redis_url="$STOCKGUARD_REDIS_URL"
prefix="pkgtest$$"

installed=0 app_pid="" bus_pid="" xvfb_pid="" built_deb=""
cleanup() {
  local status=$?
  set +e
  for pid in $app_pid; do
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
  done
  [ -z "$bus_pid" ] || kill "$bus_pid" 2>/dev/null
  [ -z "$xvfb_pid" ] || kill "$xvfb_pid" 2>/dev/null
  if [ "$installed" = 1 ]; then
    $sudo dpkg -r stockguard >/dev/null && say "removed the package" || { echo "package test: dpkg -r stockguard failed" >&2; status=1; }
    [ ! -e /usr/bin/stockguard-desktop ] || { echo "package test: /usr/bin/stockguard-desktop is still there after dpkg -r" >&2; status=1; }
  fi
  mariadb -u "$db_user" -h "$db_host" -P "$db_port" -e "DROP DATABASE IF EXISTS \`$database\`"
  redis-cli -u "$redis_url" --scan --pattern "$prefix*" | xargs -r redis-cli -u "$redis_url" del >/dev/null
  # The debug build's package (~190 MB) is of no use after the test; a given one is kept.
  [ -z "$built_deb" ] || rm -f "$built_deb"
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# 1. The package.
if [ -n "${STOCKGUARD_DEB:-}" ]; then
  deb="$STOCKGUARD_DEB"
else
  say "building the package (scripts/package.sh --debug)"
  deb="$(scripts/package.sh --debug | tail -n 1)"
  built_deb="$deb"
fi
[ -f "$deb" ] || fail "no package at $deb"

# 2. Installed.
say "dpkg -i $deb"
$sudo dpkg -i "$deb" >/dev/null || fail "dpkg -i $deb failed"
installed=1
listed="$(dpkg -L stockguard)"
for f in /usr/bin/stockguard-desktop /usr/bin/stockguard /usr/share/applications/Stockguard.desktop; do
  grep -qx "$f" <<<"$listed" || fail "the package does not install $f (it lists: $listed)"
done
[ -x /usr/bin/stockguard-desktop ] && [ -x /usr/bin/stockguard ] || fail "/usr/bin/stockguard(-desktop) is not executable"

# The CLI beside the app answers.
help="$(/usr/bin/stockguard --help)" || fail "/usr/bin/stockguard --help failed"
grep -q "^Usage: stockguard" <<<"$help" || fail "/usr/bin/stockguard --help says: $help"

# 3. A sale of its own, loaded by the installed CLI; the app gets only the `sandbox` profile.
world=(env -u STOCKGUARD_PROFILE -u STOCKGUARD_MYSQL_URL -u STOCKGUARD_MYSQL_REPLICA_URL
       -u STOCKGUARD_REDIS_URL -u STOCKGUARD_KEY_PREFIX -u STOCKGUARD_ENVIRONMENT -u STOCKGUARD_BIN
       STOCKGUARD_CONFIG_DIR="$work/config" STOCKGUARD_SANDBOX_DIR="$work/sandbox"
       STOCKGUARD_LOG_DIR="$work/logs")
"${world[@]}" STOCKGUARD_MYSQL_URL="$mysql_url" STOCKGUARD_REDIS_URL="$redis_url" STOCKGUARD_KEY_PREFIX="$prefix" \
  /usr/bin/stockguard sandbox up >"$work/sandbox-up.log" 2>&1 || { cat "$work/sandbox-up.log" >&2; fail "stockguard sandbox up failed"; }
"${world[@]}" /usr/bin/stockguard --profile sandbox sandbox seed >"$work/seed.log" 2>&1 ||
  { cat "$work/seed.log" >&2; fail "stockguard sandbox seed failed"; }

# A display and a session bus of the test's own. Xvfb writes its display number to -displayfd.
Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$work/display" 2>"$work/xvfb.log" &
xvfb_pid=$!
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
[ -s "$work/display" ] || { cat "$work/xvfb.log" >&2; fail "Xvfb did not start"; }
display=":$(head -n 1 "$work/display")"
mapfile -t bus < <(dbus-daemon --session --fork --nopidfile --print-address=1 --print-pid=1)
[ "${#bus[@]}" -ge 2 ] || fail "dbus-daemon --session did not start"
bus_pid="${bus[1]}"
world+=(DISPLAY="$display" DBUS_SESSION_BUS_ADDRESS="${bus[0]}")

# 4. The installed app connects and shows its window.
say "starting /usr/bin/stockguard-desktop on display $display"
"${world[@]}" /usr/bin/stockguard-desktop --profile sandbox >"$work/app.out" 2>&1 &
app_pid=$!
log() { cat "$work"/logs/stockguard-desktop.*.log 2>/dev/null || true; }
for _ in $(seq 300); do
  log | grep -qE ' connected( |$)' && break
  log | grep -q 'cannot connect' && break
  kill -0 "$app_pid" 2>/dev/null || break
  sleep 0.2
done
if ! log | grep -qE ' connected( |$)'; then
  log >&2; tail -n 20 "$work/app.out" >&2
  fail "the installed app did not log \"connected\" within 60 s (log above)"
fi
say "$(log | grep -E ' connected( |$)' | head -n 1 | sed 's/^.*connected/connected/')"

windows() { DISPLAY="$display" xdotool search --onlyvisible --name '^Stockguard$' 2>/dev/null || true; }
for _ in $(seq 100); do [ -n "$(windows)" ] && break; sleep 0.2; done
[ "$(windows | wc -l)" -eq 1 ] || fail "expected one Stockguard window, found: $(windows | wc -l)"
window="$(windows)"
# The board fills on the sampler's first ticks (one a second).
sleep 4
if [ "${STOCKGUARD_WRITE_SCREENSHOTS:-}" = 1 ]; then shots="$repo/docs/screenshots"; else shots="$repo/target/screenshots"; fi
mkdir -p "$shots"
DISPLAY="$display" import -window "$window" "$shots/installed-app.png" || fail "could not photograph the window"
# A window that painted nothing is one colour: no spread in its pixels.
spread="$(identify -format '%[fx:standard_deviation]' "$shots/installed-app.png")"
node -e 'process.exit(Number(process.argv[1]) > 0.02 ? 0 : 1)' "$spread" ||
  fail "the photograph $shots/installed-app.png is blank (pixel spread $spread)"
say "photographed the window: $shots/installed-app.png ($(identify -format '%wx%h' "$shots/installed-app.png"))"

# 5. A second launch focuses the first and exits.
set +e
"${world[@]}" timeout 30 /usr/bin/stockguard-desktop --profile sandbox >"$work/second.out" 2>&1
second=$?
set -e
[ "$second" -ne 124 ] || fail "the second launch was still running after 30 s (single instance broken)"
[ "$second" -eq 0 ] || { cat "$work/second.out" >&2; fail "the second launch exited with status $second"; }
kill -0 "$app_pid" 2>/dev/null || fail "the first app stopped when the second was launched"
for _ in $(seq 50); do log | grep -q 'a second launch' && break; sleep 0.2; done
log | grep -q 'a second launch' || fail "the first app did not hear of the second launch (its log: $(log))"
count="$(windows | wc -l)"
[ "$count" -eq 1 ] || fail "after a second launch there are $count Stockguard windows, not one"
say "a second launch exited (status 0); the first brought its window forward; one window"
say "passed"
