#!/usr/bin/env bash
# Installs what Stockguard needs on Debian/Ubuntu, and only what is missing:
#   build:   pkg-config libssl-dev libwebkit2gtk-4.1-dev librsvg2-dev libayatana-appindicator3-dev
#   servers: mariadb-server redis-server (used only when no MySQL/Redis is reachable; the TLS
#            tests start private ones with certificates that openssl makes);
#            rabbitmq-server (the adapter tests' RabbitMQ sale; `make test` starts it when
#            127.0.0.1:5672 does not answer);
#            openssh-server (sshd and ssh-keygen: the SSH bastion tests start their own sshd
#            on a free loopback port, nothing to start beforehand)
#   e2e:     xvfb xauth webkit2gtk-driver fonts-noto-cjk, and tauri-driver (cargo install);
#            dbus (dbus-daemon), for the test's own desktop bus (notifications and the tray)
#   package: xdotool imagemagick dbus, for the test of the installed .deb (finds the window,
#            photographs it; the single-instance check needs a D-Bus session bus); the .deb
#            itself is made by the Tauri CLI of package-lock.json (npm), needing nothing more
#   types:   nodejs npm, for the front end's type check (any Node.js with npm will do)
#   rules:   promtool, to check deploy/prometheus/alerts.yml: taken out of Debian's
#            `prometheus` package into ~/.cache/stockguard/bin (installing the package would
#            start a Prometheus server on the machine)
set -euo pipefail

packages=(pkg-config libssl-dev libwebkit2gtk-4.1-dev librsvg2-dev libayatana-appindicator3-dev
          xvfb xauth webkit2gtk-driver fonts-noto-cjk mariadb-server redis-server rabbitmq-server
          xdotool imagemagick curl openssl openssh-server)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm by command, not by package: a Node.js from elsewhere (nodesource's carries
# its own npm, and Debian's npm package would conflict with it) will do.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
# By command too: Debian 12 moved dbus-daemon into a package of that name, `dbus` pulls it in
# on every release.
command -v dbus-daemon >/dev/null || missing+=(dbus)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: system packages present"
fi

# rustup's cargo lives in ~/.cargo/bin, which a shell that read no profile (cron, a bare CI
# job, `env -i`) does not have on its PATH.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! command -v cargo >/dev/null; then
  echo "install-deps: cargo not found in PATH or ${CARGO_HOME:-$HOME/.cargo}/bin; install the Rust toolchain (rustup) first" >&2
  exit 1
fi
# `make test` checks formatting and lints before it tests.
if command -v rustup >/dev/null; then
  for c in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
  done
fi
if ! command -v tauri-driver >/dev/null; then
  echo "install-deps: installing tauri-driver (cargo install tauri-driver --locked)"
  cargo install tauri-driver --locked --quiet
fi

promtool_home="${XDG_CACHE_HOME:-$HOME/.cache}/stockguard/bin"
if ! command -v promtool >/dev/null && [ ! -x "$promtool_home/promtool" ]; then
  echo "install-deps: fetching promtool (Debian's prometheus package, unpacked, not installed)"
  work="$(mktemp -d)"
  (cd "$work" && apt-get download -qq prometheus 2>/dev/null || { $sudo apt-get update -qq && apt-get download -qq prometheus; })
  dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
  mkdir -p "$promtool_home"
  cp "$work/x/usr/bin/promtool" "$promtool_home/promtool"
  rm -rf "$work"
fi
