// The replay of a finished (or dead) run: its recorded timeline played at 1x, 4x or 16x, or
// scrubbed by hand. Each frame redraws the run panel at the cursor's offset; nothing is asked
// of the database after the timeline is loaded.
import { t } from "../../i18n.js";
import { byId } from "../../dom.js";
import { render, clock } from "./view.js";

/** @typedef {import("../../types").RunDetail} RunDetail */
/** @typedef {import("../../types").TimedEvent} TimedEvent */
/** @typedef {import("../../types").DrillInfo} DrillInfo */
/** @typedef {import("../../types").TimelineCharts} TimelineCharts */

const bar = byId("replay-bar");
const scrub = /** @type {HTMLInputElement} */ (byId("replay-scrub"));
const speed = /** @type {HTMLSelectElement} */ (byId("replay-speed"));
const playButton = byId("replay-play");
const atLabel = byId("replay-at");

/** @type {{ run: RunDetail, timeline: TimedEvent[], charts: TimelineCharts, drills: DrillInfo[] } | null} */
let loaded = null;
/** The frame request while playing, and the wall clock and offset it started from. */
let frame = 0;
let playedFrom = { wall: 0, at: 0 };

function at() {
  return Number(scrub.value);
}

function draw() {
  if (!loaded) return;
  atLabel.textContent = `${clock(at())} / ${clock(Number(scrub.max))}`;
  render({ ...loaded, at: at(), replay: true });
}

function pause() {
  cancelAnimationFrame(frame);
  frame = 0;
  playButton.textContent = t("replayPlay");
  playButton.dataset.playing = "false";
}

/** @param {number} now */
function step(now) {
  const next = playedFrom.at + (now - playedFrom.wall) * Number(speed.value);
  scrub.value = String(Math.min(next, Number(scrub.max)));
  draw();
  if (next >= Number(scrub.max)) return pause();
  frame = requestAnimationFrame(step);
}

function play() {
  if (at() >= Number(scrub.max)) scrub.value = scrub.min;
  playedFrom = { wall: performance.now(), at: at() };
  playButton.textContent = t("replayPause");
  playButton.dataset.playing = "true";
  frame = requestAnimationFrame(step);
}

/**
 * Loads a run for the replay, its cursor at the start of the load.
 * @param {RunDetail} run
 * @param {TimedEvent[]} timeline in offset order
 * @param {TimelineCharts} charts the core's, of the whole timeline
 * @param {DrillInfo[]} drills
 */
export function open(run, timeline, charts, drills) {
  pause();
  loaded = { run, timeline, charts, drills };
  const [x0, x1] = charts.span_s;
  scrub.min = String(Math.floor(x0 * 1000));
  scrub.max = String(Math.ceil(x1 * 1000));
  scrub.value = String(Math.max(0, Number(scrub.min)));
  bar.hidden = false;
  draw();
}

/** Leaves the replay (the panel is the live run's again). */
export function close() {
  pause();
  loaded = null;
  bar.hidden = true;
}

export function active() {
  return loaded !== null;
}

export function redraw() {
  if (loaded) {
    if (!frame) playButton.textContent = t("replayPlay");
    draw();
  }
}

export function init() {
  playButton.addEventListener("click", () => (frame ? pause() : play()));
  scrub.addEventListener("input", () => {
    if (frame) playedFrom = { wall: performance.now(), at: at() };
    draw();
  });
  speed.addEventListener("change", () => {
    if (frame) playedFrom = { wall: performance.now(), at: at() };
  });
}
