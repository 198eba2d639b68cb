// A drill run at one moment of its timeline, worked out from the recorded events alone: the
// live view asks for the latest moment, the replay for the moment under its cursor. Also the
// timeline as chart series, with the fault windows every chart shades.

/** @typedef {import("../../types").TimedEvent} TimedEvent */
/** @typedef {import("../../types").TickFigures} TickFigures */
/** @typedef {import("../../types").LoadSecond} LoadSecond */

/**
 * What the run looked like at one offset.
 * @typedef {{
 *   phase: string | null,
 *   faults: string[],
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
 * The run as it stood at `at` ms (Infinity: the latest recorded), from `timeline` in offset order.
 * @param {TimedEvent[]} timeline
 * @param {number} at
 * @returns {Moment}
 */
export function momentAt(timeline, at) {
  /** @type {Moment} */
  const m = { phase: null, faults: [], mode: null, tick: null, load: null, violations: [], log: [] };
  const active = new Set();
  for (const e of timeline) {
    if (e.offset_ms > at) break;
    if (NOTABLE.has(e.kind)) m.log.push(e);
    switch (e.kind) {
      case "phase":
        m.phase = e.phase;
        break;
      case "fault_injected":
        active.add(e.fault);
        break;
      case "fault_restored":
        active.delete(e.fault);
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
  m.faults = [...active];
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

/**
 * When each fault was on, in seconds: from its injection to its restoration (or `end_s`
 * when it was never restored: the run stopped first, or is still going).
 * @param {TimedEvent[]} timeline
 * @param {number} end_s
 * @returns {Array<[number, number]>}
 */
export function faultWindows(timeline, end_s) {
  /** @type {Map<string, number>} */
  const open = new Map();
  /** @type {Array<[number, number]>} */
  const windows = [];
  for (const e of timeline) {
    if (e.kind === "fault_injected") open.set(e.fault, e.offset_ms / 1000);
    if (e.kind === "fault_restored" && open.has(e.fault)) {
      windows.push([/** @type {number} */ (open.get(e.fault)), e.offset_ms / 1000]);
      open.delete(e.fault);
    }
  }
  for (const start of open.values()) windows.push([start, end_s]);
  return windows;
}

/** @typedef {Array<[number, number]>} Points seconds since the load started, value */

/**
 * The chart series of a timeline: load per second, ticks' drift, backlog, in flight and modes.
 * @param {TimedEvent[]} timeline
 */
export function series(timeline) {
  /** @type {Record<"accepted" | "errors" | "drift" | "worst" | "backlog" | "inflight" | "redis" | "db", Points>} */
  const s = { accepted: [], errors: [], drift: [], worst: [], backlog: [], inflight: [], redis: [], db: [] };
  for (const e of timeline) {
    const x = e.offset_ms / 1000;
    if (e.kind === "load") {
      s.accepted.push([x, e.accepted]);
      s.errors.push([x, Object.values(e.errors).reduce((a, b) => a + (b ?? 0), 0)]);
    } else if (e.kind === "tick") {
      s.drift.push([x, e.drift]);
      s.worst.push([x, e.drift_max_abs]);
      s.backlog.push([x, e.backlog]);
      s.inflight.push([x, e.inflight]);
      s.redis.push([x, e.redis_path]);
      s.db.push([x, e.db_path]);
    }
  }
  return s;
}

/**
 * The span of the charts' x axis, in seconds: from the load's start (or the first event, if
 * earlier) to the last event, at least one second wide.
 * @param {TimedEvent[]} timeline
 * @returns {[number, number]}
 */
export function span(timeline) {
  if (!timeline.length) return [0, 1];
  const first = Math.min(0, timeline[0].offset_ms / 1000);
  const last = timeline[timeline.length - 1].offset_ms / 1000;
  return [first, Math.max(last, first + 1)];
}
