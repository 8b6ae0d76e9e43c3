// A group's timeline: one lane per child, its recorded interval (started_at to finished_at, the
// store's clock, as GET /jobs/<id>/children gives them) a bar coloured by its status, on one time
// axis for the whole group; the child's earlier runs (its ended attempts, a redrive's too) as thin
// marks under it. Positions are percentages of the axis, so the drawing scales with the page.
import { $, el, jobPage, time } from "./common.js";

// Lanes drawn at most: the axis covers every child read, the lanes the first this many.
export const TIMELINE_LANES = 500;
// Tick steps, in seconds: the first that gives at most MAX_TICKS ticks over the axis.
const STEPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600,
  900, 1800, 3600, 7200, 14400, 43200, 86400];
const MAX_TICKS = 8;

// An RFC 3339 time of the API (microseconds, "Z") as milliseconds since the epoch, the microseconds kept.
export function instant(value) {
  if (!value) return null;
  const match = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?Z$/.exec(value);
  if (!match) return Date.parse(value);
  return Date.parse(`${match[1]}Z`) + (match[2] ? Number(`0${match[2]}`) * 1000 : 0);
}

// The intervals of one child: its current one (end null while it runs) and its ended runs.
function intervalsOf(child) {
  const start = instant(child.started_at);
  const current = start === null ? null : { start, end: instant(child.finished_at) };
  const runs = (child.runs || []).map((run) => ({
    start: instant(run.started_at), end: instant(run.finished_at), attempt: run.attempt, outcome: run.outcome,
  })).filter((run) => run.start !== null && run.end !== null);
  return { current, runs };
}

// [first start, last end] over every interval; an open one ends at `now`.
function axisOf(lanes, now) {
  let first = Infinity;
  let last = -Infinity;
  for (const { current, runs } of lanes) {
    for (const interval of [...(current ? [current] : []), ...runs]) {
      first = Math.min(first, interval.start);
      last = Math.max(last, interval.end === null ? Math.max(now, interval.start) : interval.end);
    }
  }
  return first === Infinity ? null : { first, last: Math.max(last, first + 1) };  // at least 1 ms wide
}

const at = (axis, ms) => ((ms - axis.first) / (axis.last - axis.first)) * 100;
const percentOf = (value) => `${value.toFixed(4)}%`;

function bar(axis, child, interval, now) {
  const end = interval.end === null ? Math.max(now, interval.start) : interval.end;
  const seconds = ((end - interval.start) / 1000).toFixed(3);
  const node = el("a", {
    className: `interval status-${child.status}${interval.end === null ? " open" : ""}`,
    href: jobPage(child.id),
    "data-index": String(child.index),
    "data-start": child.started_at,
    "data-end": child.finished_at || "",
    title: `#${child.index} ${child.status}: ${time(child.started_at)} → ${time(child.finished_at)} (${seconds} s)`,
  });
  node.style.left = percentOf(at(axis, interval.start));
  node.style.width = percentOf(at(axis, end) - at(axis, interval.start));
  return node;
}

function runMark(axis, run) {
  const node = el("span", {
    className: `run outcome-${run.outcome}`,
    title: `attempt ${run.attempt}: ${run.outcome}`,
  });
  node.style.left = percentOf(at(axis, run.start));
  node.style.width = percentOf(at(axis, run.end) - at(axis, run.start));
  return node;
}

function lane(axis, child, intervals, now) {
  const track = el("div", { className: "track" });
  if (intervals.current) track.append(bar(axis, child, intervals.current, now));
  for (const run of intervals.runs) track.append(runMark(axis, run));
  return el("div", { className: "lane", "data-index": String(child.index) },
    el("span", { className: "lane-label" }, `#${child.index}`), track);
}

// The axis's ticks: the seconds since its start, in steps that give a handful of them.
function ticks(axis) {
  const span = (axis.last - axis.first) / 1000;
  const step = STEPS.find((s) => span / s <= MAX_TICKS) || span / MAX_TICKS;
  const digits = step < 1 ? Math.ceil(-Math.log10(step)) : 0;
  const row = el("div", { className: "track axis" });
  // A tick too near the end would have its label cut off by the edge.
  for (let s = 0; s <= span * 0.96; s += step) {
    const tick = el("span", { className: "tick" }, `+${s.toFixed(digits)} s`);
    tick.style.left = percentOf((s / span) * 100);
    row.append(tick);
  }
  return el("div", { className: "lane axis-lane" }, el("span", { className: "lane-label" }, ""), row);
}

// Draws the children read so far (by index; a gap is a child not read yet) into #timeline.
export function drawTimeline(children, total, running) {
  const box = $("timeline");
  const now = running ? Date.now() : -Infinity;
  const read = children.filter(Boolean);
  const lanes = read.map(intervalsOf);
  const axis = axisOf(lanes, now);
  if (axis === null) {
    box.replaceChildren(el("p", { className: "muted", id: "timeline-empty" }, "No child has started yet."));
    return;
  }
  const shown = read.slice(0, TIMELINE_LANES);
  // While the group runs, the axis ends at this browser's now, which the store's clock may not quite agree with.
  const end = running ? "now" : time(new Date(axis.last).toISOString());
  const caption = el("p", { className: "muted timeline-caption" },
    `From ${time(new Date(axis.first).toISOString())} to ${end} `,
    `(${((axis.last - axis.first) / 1000).toFixed(3)} s; recorded times are the store's clock)`,
    read.length > shown.length ? `; the first ${shown.length} of ${total} children` : "", ".");
  // The ticks head the lanes and stay in view while a long group's lanes scroll under them.
  box.replaceChildren(caption, ticks(axis), ...shown.map((child, i) => lane(axis, child, lanes[i], now)));
  box.dataset.first = new Date(axis.first).toISOString();
  box.dataset.firstMs = String(axis.first);
  box.dataset.lastMs = String(axis.last);
}
