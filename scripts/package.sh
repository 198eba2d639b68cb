#!/usr/bin/env bash
# `make package`: a .deb of the desktop app, with the CLI beside it, made by the Tauri CLI that
# package-lock.json pins (@tauri-apps/cli, prebuilt: no compile of the CLI itself).
#   /usr/bin/stockguard-desktop   the app (the Tauri CLI's main binary)
#   /usr/bin/stockguard           the CLI: the app runs drills through the `stockguard` it finds
#                                 beside itself (src-tauri/src/state.rs, drill_runner)
#   /usr/share/applications/Stockguard.desktop and the icon, for the desktop's menu
# Depends: what the Tauri CLI finds the app needs (libwebkit2gtk-4.1-0, libgtk-3-0, and the
# tray's libayatana-appindicator3-1 once the app has one) and tauri.conf.json's `bundle` adds.
#
# Usage: scripts/package.sh [--debug]
#   (none)   a release build (optimised, what to hand out)
#   --debug  the debug profile, reusing what `cargo build`/`make test` already compiled: the
#            test of the installed package (tests/package/installed_app.sh) takes this one
# Prints the .deb's path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

profile=release
tauri_flags=()
cargo_flags=(--release)
case "${1:-}" in
  --debug) profile=debug; tauri_flags=(--debug); cargo_flags=() ;;
  "") ;;
  *) echo "package: unknown option $1 (usage: scripts/package.sh [--debug])" >&2; exit 2 ;;
esac

if [ ! -x node_modules/.bin/tauri ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  command -v npm >/dev/null || { echo "package: npm is not installed: run \`make deps\`" >&2; exit 1; }
  echo "package: installing the Tauri CLI from package-lock.json (npm ci)"
  npm ci --no-audit --no-fund
fi

# Where cargo puts binaries (CARGO_TARGET_DIR when set), as an absolute path for the mapping.
target_dir="$(cargo metadata --no-deps --format-version 1 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
cli="$target_dir/$profile/stockguard"

started=$SECONDS
cargo build --quiet "${cargo_flags[@]}" -p stockguard --bin stockguard

# The Tauri CLI takes as its project the folder holding tauri.conf.json and bundles the package
# whose Cargo.toml sits beside it. Ours sits at the root, beside the CLI's package (whose binary
# it would take for the app), and the app's crate is src-tauri/. So the Tauri CLI is run in
# src-tauri/ on a copy of the root's config written there for the run (git-ignored, removed
# after): its relative paths rebased onto src-tauri/, and the CLI's binary mapped to
# /usr/bin/stockguard from wherever this run's target folder is. The app's own compile still
# reads the root's config (src-tauri/build.rs names it), so the copy changes nothing in the app.
generated=src-tauri/tauri.conf.json
trap 'rm -f "$generated"' EXIT
node -e '
  const fs = require("fs");
  const [cli, out] = process.argv.slice(1);
  const config = JSON.parse(fs.readFileSync("tauri.conf.json", "utf8"));
  config.build.frontendDist = "../" + config.build.frontendDist;
  config.bundle.icon = config.bundle.icon.map((icon) => "../" + icon);
  const deb = ((config.bundle.linux ??= {}).deb ??= {});
  deb.files = { ...deb.files, "/usr/bin/stockguard": cli };
  fs.writeFileSync(out, JSON.stringify(config, null, 2) + "\n");
' "$cli" "$generated"

(cd src-tauri && ../node_modules/.bin/tauri build "${tauri_flags[@]}" --bundles deb --ci)

version="$(node -p 'require("./tauri.conf.json").version')"
deb="$target_dir/$profile/bundle/deb/Stockguard_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { echo "package: the Tauri CLI made no $deb" >&2; ls -l "$target_dir/$profile/bundle/deb" >&2 || true; exit 1; }
# The bundler's unpacked copy of the package's files, as large as what it installs (the debug
# build's: ~700 MB); the .deb holds them all.
rm -rf "${deb%.deb}"
echo "package: $profile build and bundle took $((SECONDS - started)) s"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Depends\|Installed-Size\):/package:   \1:/p'
echo "$deb"
