// Small line charts of a drill's timeline, drawn as inline SVG from the series, span and fault
// windows the core worked out (drills/report/shown.rs `TimelineCharts`): nothing is computed
// here but pixels. The HTML report's charts are drawn in Rust (plotters); these are not, as the
// replay redraws its cursor on every animation frame (a round trip to Rust per frame, and a
// plotters SVG exposes no mapping from seconds to pixels to lay a cursor over), and they follow
// the window's language switch and size without asking Rust again.
import { t } from "../../i18n.js";

const NS = "http://www.w3.org/2000/svg";
const WIDTH = 300;
const HEIGHT = 110;
const PAD = { left: 34, right: 6, top: 16, bottom: 16 };

/**
 * @typedef {{ label: string, color: string, points: Array<[number, number]> }} Line
 * @typedef {{
 *   title: string,
 *   lines: Line[],
 *   span: [number, number],
 *   windows: Array<[number, number]>,
 *   cursor: number | null,
 * }} ChartSpec
 */

/**
 * @param {string} name
 * @param {Record<string, string | number>} attrs
 * @param {string} [text]
 */
function el(name, attrs, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A round number a little above `v`, so the axis label reads well. @param {number} v */
function niceMax(v) {
  if (v <= 1) return 1;
  const step = 10 ** Math.floor(Math.log10(v));
  return Math.ceil(v / step) * step;
}

/**
 * One chart: the lines over the span, the fault windows shaded, a cursor line if any.
 * @param {ChartSpec} spec
 * @returns {SVGSVGElement}
 */
export function lineChart(spec) {
  const svg = /** @type {SVGSVGElement} */ (el("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "chart" }));
  const values = spec.lines.flatMap((l) => l.points.map((p) => p[1]));
  const low = Math.min(0, ...values);
  const high = niceMax(Math.max(1, ...values));
  const [x0, x1] = spec.span;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  /** @param {number} x */
  const sx = (x) => PAD.left + ((x - x0) / (x1 - x0 || 1)) * plotW;
  /** @param {number} y */
  const sy = (y) => PAD.top + plotH - ((y - low) / (high - low || 1)) * plotH;

  svg.append(el("text", { x: PAD.left, y: 11, class: "chart-title" }, spec.title));
  for (const [from, to] of spec.windows) {
    const a = sx(Math.max(from, x0));
    const b = sx(Math.min(to, x1));
    if (b > a) svg.append(el("rect", { x: a, y: PAD.top, width: b - a, height: plotH, class: "fault-window" }));
  }
  svg.append(el("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: sy(0), y2: sy(0), class: "axis" }));
  svg.append(el("text", { x: PAD.left - 3, y: PAD.top + 4, class: "tick-label", "text-anchor": "end" }, String(high)));
  if (low < 0) svg.append(el("text", { x: PAD.left - 3, y: sy(low), class: "tick-label", "text-anchor": "end" }, String(low)));
  svg.append(el("text", { x: PAD.left - 3, y: sy(0) + 3, class: "tick-label", "text-anchor": "end" }, "0"));
  svg.append(el("text", { x: PAD.left, y: HEIGHT - 3, class: "tick-label" }, t("seconds", { n: Math.round(x0) })));
  svg.append(el("text", { x: WIDTH - PAD.right, y: HEIGHT - 3, class: "tick-label", "text-anchor": "end" }, t("seconds", { n: Math.round(x1) })));

  let legendX = WIDTH - PAD.right;
  for (const line of [...spec.lines].reverse()) {
    const label = el("text", { x: legendX, y: 11, class: "legend", fill: line.color, "text-anchor": "end" }, line.label);
    svg.append(label);
    legendX -= line.label.length * 5.5 + 10;
    if (!line.points.length) continue;
    const d = line.points.map(([x, y], i) => `${i ? "L" : "M"}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join("");
    svg.append(el("path", { d, class: "series", stroke: line.color }));
  }
  if (spec.cursor !== null) {
    const x = sx(Math.min(Math.max(spec.cursor, x0), x1));
    svg.append(el("line", { x1: x, x2: x, y1: PAD.top, y2: PAD.top + plotH, class: "cursor" }));
  }
  return svg;
}
