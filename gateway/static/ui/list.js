// The list of jobs at /ui: rows drawn as the template draws them, from GET /jobs with the page's
// filters and cursor. The first page keeps showing new jobs; a later one only refreshes while a
// job on it runs.
import {
  $, LIST_POLL_MS, RETRY_MS, TERMINAL, api, body, el, keyBar, kindName, jobPage, percent, poller, report, root,
  statusBadge, time,
} from "./common.js";

function row(job) {
  const progress = job.total === undefined ? [] : [
    el("progress", { max: "1", value: String(job.progress) }),
    ` ${percent(job.progress)} of ${job.total}`,
  ];
  return el("tr", { className: "job", "data-id": job.id, "data-status": job.status },
    el("td", {}, el("a", { href: jobPage(job.id) }, job.id)),
    el("td", {}, kindName(job.kind)),
    el("td", {}, statusBadge(job.status)),
    el("td", {}, job.model),
    el("td", {}, ...progress),
    el("td", {}, time(job.created_at)),
    el("td", {}, time(job.finished_at)));
}

export function listPage() {
  const query = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(location.search)) {
    if (["status", "kind", "cursor"].includes(name) && value) query.set(name, value);
  }
  query.set("limit", body.dataset.limit);
  const firstPage = !query.has("cursor");

  function render(listing) {
    const rows = listing.jobs.map(row);
    if (!rows.length) rows.push(el("tr", { className: "empty" }, el("td", { colspan: "7" }, "No jobs.")));
    $("job-rows").replaceChildren(...rows);
    const older = $("older");
    older.hidden = !listing.next_cursor;
    if (listing.next_cursor) {
      const next = new URLSearchParams(query);
      next.delete("limit");
      next.set("cursor", listing.next_cursor);
      older.href = `${root}/ui?${next}`;
    }
  }

  const worthPolling = () => firstPage ||
    [...document.querySelectorAll("#job-rows tr.job")].some((tr) => !TERMINAL.has(tr.dataset.status));

  const poll = poller(async () => {
    if (document.hidden) return LIST_POLL_MS;
    const answer = await api("GET", `/jobs?${query}`);
    if (!report(answer)) return null;
    if (!answer.ok) return RETRY_MS;
    render(answer.body);
    return worthPolling() ? LIST_POLL_MS : null;
  });
  keyBar(() => poll.now());
  if (body.dataset.loaded !== "1") poll.now();
  else if (worthPolling()) poll.later(LIST_POLL_MS);
}
