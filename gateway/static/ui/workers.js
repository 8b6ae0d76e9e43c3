// The workers and queues at /ui/workers: GET /ui/overview.json (the dashboard's own read, with the
// tab's key) every two seconds while the tab shows, drawn as the template draws it.
import { $, ACTIVE, LIST_POLL_MS, RETRY_MS, api, el, keyBar, poller, report, time } from "./common.js";

function workerRow(worker) {
  return el("tr", { className: "worker", "data-name": worker.name },
    el("td", {}, worker.name), el("td", {}, worker.languages.join(", ") || "—"));
}

function queueRow(queue) {
  const count = (name) => el("td", { "data-count": name }, String(queue[name]));
  return el("tr", { className: "queue", "data-model": queue.model },
    el("td", {}, queue.model), ...ACTIVE.map(count));
}

function render(overview) {
  const workers = overview.workers.map(workerRow);
  if (!workers.length) workers.push(el("tr", { className: "empty" }, el("td", { colspan: "2" }, "No worker has reported.")));
  $("worker-rows").replaceChildren(...workers);
  const queues = overview.queues;
  $("queues-sampled").textContent = queues
    ? `Counted at ${time(queues.sampled_at)} (${queues.age_seconds.toFixed(1)} s ago)`
    : "Not counted yet: the coordinator counts them every few seconds.";
  $("queues-stale").hidden = !(queues && queues.stale);
  $("queue-rows").replaceChildren(...(queues ? queues.models.map(queueRow) : []));
}

export function workersPage() {
  const poll = poller(async () => {
    if (document.hidden) return LIST_POLL_MS;
    const answer = await api("GET", "/ui/overview.json");
    if (!report(answer)) return null;
    if (!answer.ok) return RETRY_MS;
    render(answer.body);
    return LIST_POLL_MS;
  });
  keyBar(() => poll.now());
  poll.now();
}
