// The keys ui/index.html names in its data-i18n, data-i18n-placeholder, data-i18n-label and
// data-i18n-title attributes, held to the catalogue of ui/i18n.js: `tsc` checks every t() call
// of the code against the catalogue's keys, but cannot see the page. Run by
// scripts/typecheck-ui.sh.
import { readFileSync } from "node:fs";

// i18n.js reads the chosen language at load; nothing else of the browser is touched.
globalThis.localStorage = { getItem: () => null, setItem: () => {} };
const { isMessageKey } = await import("../ui/i18n.js");

const page = readFileSync(new URL("../ui/index.html", import.meta.url), "utf8");
const unknown = [...page.matchAll(/data-i18n(?:-placeholder|-label|-title)?="([^"]*)"/g)]
  .map((found) => found[1])
  .filter((key) => !isMessageKey(key));
if (unknown.length) {
  console.error(`check-i18n-html: ui/index.html names keys ui/i18n.js does not hold: ${[...new Set(unknown)].join(", ")}`);
  process.exit(1);
}
