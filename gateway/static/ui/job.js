// A job's page at /ui/jobs/<id>: reads the job's view each time its live stream says something moved
// (polling every second where the gateway serves no stream) until it has ended, and shows the section
// of its kind (a group, or a single job or child), which the server may not have known when the API
// wanted a key only this script holds.
import {
  $, POLL_MS, RETRY_MS, TERMINAL, api, body, cancelButton, el, followStream, jobApi, jobPage, keyBar, percent,
  poller, report, setField, showCancel, showOutcome, statusBadge, time,
} from "./common.js";
import { downloads } from "./downloads.js";
import { groupView } from "./group.js";

function renderSingle(view, showDownloads) {
  const section = $("single");
  setField(section, "kind", view.kind === "child" ? "Child" : "Job");
  setField(section, "status", statusBadge(view.status));
  const parent = view.parent_id
    ? el("span", {}, el("a", { href: jobPage(view.parent_id) }, view.parent_id), ` #${view.index}`)
    : "—";
  setField(section, "parent", parent);
  for (const name of ["model", "content_type", "attempts"]) setField(section, name, view[name]);
  setField(section, "progress", `${percent(view.progress)} (${view.stage || view.status})`);
  for (const name of ["created_at", "started_at", "finished_at"]) setField(section, name, time(view[name]));
  $("run-rows").replaceChildren(...view.runs.map((run) => el("tr", {},
    el("td", {}, String(run.attempt)), el("td", {}, time(run.started_at)),
    el("td", {}, time(run.finished_at)), el("td", {}, run.outcome))));
  showOutcome(view, { text: $("job-text"), error: $("job-error"), waiting: $("job-waiting") }, "job");
  showCancel($("cancel-job"), view);
  showDownloads(view);
}

export function jobPageLive() {
  const id = body.dataset.jobId;
  let renderGroup = null;
  let showDownloads = null;
  let cancelWired = false;
  let first = true;
  // The live stream: null until opened, then "opening", "open", "ended" or "unavailable".
  let stream = null;

  function openStream() {
    stream = "opening";
    followStream(`${jobApi(id)}/events`, () => poll.now(), (state) => {
      const wasOpen = stream === "open";
      stream = state;
      body.dataset.stream = state;
      if (state === "unavailable" && wasOpen) poll.later(POLL_MS);
      if (state === "ended") poll.now();
    });
  }

  const poll = poller(async () => {
    if (document.hidden && !first) return POLL_MS;
    first = false;
    const answer = await api("GET", `${jobApi(id)}?children=none`);
    if (!report(answer)) return null;
    if (!answer.ok) return RETRY_MS;
    const view = answer.body;
    const isGroup = view.kind === "parent";
    $("group").hidden = !isGroup;
    $("single").hidden = isGroup;
    if (!cancelWired) {
      cancelWired = true;
      const button = isGroup ? $("cancel-group") : $("cancel-job");
      cancelButton(button, id, isGroup ? "group" : "job", () => poll.now());
    }
    if (isGroup) {
      renderGroup = renderGroup || groupView(id, () => poll.now());
      const failed = await renderGroup(view);
      if (failed && !report(failed)) return null;
    } else {
      showDownloads = showDownloads || downloads($("single"), id);
      renderSingle(view, showDownloads);
    }
    if (TERMINAL.has(view.status)) return null;
    if (stream === null) openStream();
    return stream === "open" ? null : POLL_MS;  // while a stream is open, its events ask for each read
  });
  keyBar(() => poll.now());
  poll.now();
}
