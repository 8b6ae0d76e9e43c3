// A group's page: its summary, a grid of its children coloured by status, the child clicked, and
// its events. Reads a page of children again only while one on it may still change, and the
// events only when the counts moved, so a large group costs less the further it gets.
import { $, ACTIVE, TERMINAL, api, body, el, jobApi, jobPage, percent, report, setField, showCancel, showOutcome,
  statusBadge, time } from "./common.js";
import { groupControls } from "./controls.js";
import { downloads } from "./downloads.js";
import { drawTimeline } from "./timeline.js";

// The ended children of a view's counts.
const endedOf = (view) => view.total - ACTIVE.reduce((sum, s) => sum + view.counts[s], 0);

// `again()`: read the group again now (after one of its controls changed it).
export function groupView(id, again) {
  const pageSize = Number(body.dataset.gridPage);
  const eventsShown = Number(body.dataset.eventsShown);
  const children = [];  // by index: the latest summary of each child read
  const cells = [];  // by index: its cell in the grid
  let eventsMark = null;
  let openChild = null;  // {id, status} of the child in the panel
  let redrives = null;  // the group's redrives when its children were last read
  const showControls = groupControls(id, again);
  const showDownloads = downloads($("group"), id);

  for (const cell of document.querySelectorAll("#grid .cell")) cells[Number(cell.dataset.index)] = cell;
  for (const child of JSON.parse($("children-read").textContent)) children[child.index] = child;

  // Ended children stay ended while their group runs, until a redrive: a page of them needs no second read.
  const settled = (offset, total) => {
    for (let i = offset; i < Math.min(offset + pageSize, total); i++) {
      if (!children[i] || children[i].stale || !TERMINAL.has(children[i].status)) return false;
    }
    return true;
  };

  // Null, or the answer that stopped the reading.
  async function readChildren(total) {
    for (let offset = 0; offset < total; offset += pageSize) {
      if (settled(offset, total)) continue;
      const answer = await api("GET", `${jobApi(id)}/children?offset=${offset}&limit=${pageSize}`);
      if (!answer.ok) return answer;
      for (const child of answer.body.children) children[child.index] = child;
    }
    return null;
  }

  function drawGrid(total) {
    const grid = $("grid");
    for (let i = 0; i < total; i++) {
      const child = children[i];
      if (!child) break;  // pages are read in order: nothing past a page that failed
      let cell = cells[i];
      if (!cell) {
        cell = el("a", { id: `child-${i}`, "data-index": String(i), href: jobPage(child.id) }, String(i));
        cells[i] = cell;
        grid.append(el("li", {}, cell));
      }
      cell.dataset.id = child.id;
      cell.className = `cell status-${child.status}`;
      cell.title = `#${i} ${child.status}`;
    }
  }

  function eventRow(e) {
    const prefix = `${id}-`;
    const job = e.job_id === id ? "group" : e.job_id.startsWith(prefix) ? `#${e.job_id.slice(prefix.length)}` : e.job_id;
    const detail = e.operation === "webhook"
      ? `attempt ${e.attempt}: ${e.outcome}${e.response_status ? ` (${e.response_status})` : ""}`
      : e.error_code || "";
    return el("tr", {}, el("td", {}, time(e.time)), el("td", {}, e.operation), el("td", {}, job),
      el("td", {}, statusBadge(e.status)), el("td", {}, detail));
  }

  async function readEvents(view) {
    const mark = `${view.status} ${endedOf(view)} ${view.redrives}`;
    if (mark === eventsMark) return;
    const answer = await api("GET", `${jobApi(id)}/events`);
    if (!answer.ok) return;
    eventsMark = mark;
    const latest = answer.body.events.slice(-eventsShown).reverse();
    $("event-rows").replaceChildren(...latest.map(eventRow));
  }

  async function showChild(childId) {
    $("child-panel").hidden = false;
    $("child-link").href = jobPage(childId);
    const answer = await api("GET", jobApi(childId));
    if (!report(answer) || !answer.ok) return;
    const child = answer.body;
    openChild = { id: childId, status: child.status };
    $("child-title").textContent = `Child #${child.index}`;
    $("child-status").replaceChildren(statusBadge(child.status));
    showOutcome(child, { text: $("child-text"), error: $("child-error"), waiting: $("child-waiting") }, "child");
  }

  $("grid").addEventListener("click", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell) return;
    event.preventDefault();
    showChild(cell.dataset.id);
  });

  // Draws the view (read with children=none) and what goes with it; null, or an answer that failed.
  return async function render(view) {
    const section = $("group");
    setField(section, "status", statusBadge(view.status));
    for (const name of ["model", "max_parallel", "tolerated_failures"]) setField(section, name, view[name]);
    for (const name of ["created_at", "started_at", "finished_at"]) setField(section, name, time(view[name]));
    setField(section, "error_code", view.error_code || "—");
    setField(section, "ended", `${endedOf(view)} of ${view.total} ended (${percent(view.progress)})`);
    $("group-progress").value = view.progress;
    for (const node of section.querySelectorAll("[data-count]")) {
      node.textContent = String(view.counts[node.dataset.count]);
    }
    showCancel($("cancel-group"), view);
    showControls(view);
    showDownloads(view);
    if (redrives !== null && view.redrives !== redrives) {
      for (const child of children) if (child) child.stale = true;  // a redrive runs ended children again
    }
    redrives = view.redrives;
    const failed = await readChildren(view.total);
    drawGrid(view.total);
    drawTimeline(children, view.total, !TERMINAL.has(view.status));
    await readEvents(view);
    if (openChild) {
      const now = children.find((c) => c && c.id === openChild.id);
      if (now && now.status !== openChild.status) await showChild(openChild.id);
    }
    return failed;
  };
}
