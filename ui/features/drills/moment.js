// A drill run at one moment of its timeline, worked out from the recorded events and the
// fault windows the core computed (drills/report/windows.rs, sent with the timeline as its
// `charts`): the live view asks for the latest moment, the replay for the moment under its
// cursor. The windows, series and span themselves come from Rust; nothing here derives them.

/** @typedef {import("../../types").TimedEvent} TimedEvent */
/** @typedef {import("../../types").TickFigures} TickFigures */
/** @typedef {import("../../types").LoadSecond} LoadSecond */
/** @typedef {import("../../types").FaultWindow} FaultWindow */

/**
 * What the run looked like at one offset.
 * @typedef {{
 *   phase: string | null,
 *   faults: FaultWindow[],
 *   mode: { redis_path: number, db_path: number } | null,
 *   tick: TickFigures | null,
 *   load: LoadSecond | null,
 *   violations: Array<{ invariant: string, figure: string, offset_ms: number }>,
 *   log: TimedEvent[],
 * }} Moment
 */

/** Events worth a line in the timeline list (not the per-second load and ticks). */
const NOTABLE = new Set(["phase", "fault_injected", "fault_restored", "process", "repair", "violation", "abort", "halt", "note"]);

/**
 * The run as it stood at `at` ms (Infinity: the latest recorded), from `timeline` in offset
 * order; its faults on are the core's `windows` that hold `at` (a window the drill file
 * planned, the timeline holding no fault event, was never seen on).
 * @param {TimedEvent[]} timeline
 * @param {FaultWindow[]} windows
 * @param {number} at
 * @returns {Moment}
 */
export function momentAt(timeline, windows, at) {
  const s = at / 1000;
  /** @type {Moment} */
  const m = {
    phase: null,
    faults: windows.filter((w) => !w.planned && w.start_s <= s && (w.open || s < w.end_s)),
    mode: null,
    tick: null,
    load: null,
    violations: [],
    log: [],
  };
  for (const e of timeline) {
    if (e.offset_ms > at) break;
    if (NOTABLE.has(e.kind)) m.log.push(e);
    switch (e.kind) {
      case "phase":
        m.phase = e.phase;
        break;
      case "mode":
        m.mode = { redis_path: e.redis_path, db_path: e.db_path };
        break;
      case "tick":
        m.tick = e;
        break;
      case "load":
        m.load = e;
        break;
      case "violation":
        m.violations.push({ invariant: e.invariant, figure: e.figure, offset_ms: e.offset_ms });
        break;
    }
  }
  return m;
}

/**
 * The timeline in offset order (events of one second may be written out of order: the load's
 * second is written when it is complete, after the tick that followed it).
 * @param {TimedEvent[]} events
 */
export function ordered(events) {
  return [...events].sort((a, b) => a.offset_ms - b.offset_ms);
}
