#!/usr/bin/env bash
# The front end's type check: every module of ui/ against the types generated from Rust
# (ui/types.d.ts), strict, with the TypeScript that package-lock.json pins; every t() key and
# every data-i18n key of index.html against the catalogue of ui/i18n.js. Installs the npm
# tools (npm ci) when one is missing or they are older than the lockfile: TypeScript, and
# axe-core, which the desktop e2e test injects into the window (tests/e2e/accessibility.rs).
# `make test` runs this after the lints, so before the tests; `make typecheck-ui` runs it alone.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x node_modules/.bin/tsc ] || [ ! -f node_modules/axe-core/axe.min.js ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  if ! command -v npm >/dev/null; then
    echo "typecheck-ui: npm is not installed: run \`make deps\` (installs nodejs and npm)" >&2
    exit 1
  fi
  echo "typecheck-ui: installing TypeScript and axe-core from package-lock.json (npm ci)"
  npm ci --no-audit --no-fund
fi
node_modules/.bin/tsc -p .
# The page's data-i18n keys, which tsc cannot see, against the same catalogue.
node scripts/check-i18n-html.mjs
echo "typecheck-ui: no type errors in ui/"
