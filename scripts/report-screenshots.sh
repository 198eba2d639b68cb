#!/usr/bin/env bash
# Photographs a drill run's HTML report, in English and in Chinese, with headless Chromium,
# into docs/screenshots/ (the README shows them). Usage: scripts/report-screenshots.sh RUN
# against the sale the STOCKGUARD_* variables (or --profile) point at.
set -euo pipefail
cd "$(dirname "$0")/.."
run="${1:?usage: scripts/report-screenshots.sh RUN}"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "report-screenshots: no Chromium; install it with: sudo apt-get install -y chromium" >&2
  exit 2
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for lang in en zh; do
  ./target/debug/stockguard drill report "$run" --format html --lang "$lang" --out "$out/report-$lang.html"
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2600 \
    --screenshot="$PWD/docs/screenshots/drill-report-$lang.png" "file://$out/report-$lang.html" 2>/dev/null
  echo "docs/screenshots/drill-report-$lang.png"
done
