#!/usr/bin/env bash
# The front end's type check: every module of ui/ against the types generated from Rust
# (ui/types.d.ts), strict, with the TypeScript that ui/package-lock.json pins. Installs it
# (npm ci) when it is missing or older than the lockfile. `make test` runs this after the
# lints; `make typecheck-ui` runs it alone.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x ui/node_modules/.bin/tsc ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  if ! command -v npm >/dev/null; then
    echo "typecheck-ui: npm is not installed: run \`make deps\` (installs nodejs and npm)" >&2
    exit 1
  fi
  echo "typecheck-ui: installing TypeScript from ui/package-lock.json (npm ci)"
  npm ci --prefix ui --no-audit --no-fund
fi
ui/node_modules/.bin/tsc -p ui
echo "typecheck-ui: no type errors in ui/"
