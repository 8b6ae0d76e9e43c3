// The dashboard's script: keeps the server-rendered pages of /ui live by polling the JSON API.
//
// Every request goes to the API the page is served with, and carries the API key typed into the
// bar, if any (kept in sessionStorage: this tab only, gone when it closes). A page polls while
// what it shows runs and stops once that has ended. It writes the markup the templates write.
"use strict";

(() => {
  const KEY_STORE = "ocrgw.apiKey";
  const POLL_MS = 1000;
  const LIST_POLL_MS = 2000;
  const RETRY_MS = 5000;
  const TERMINAL = new Set(["completed", "failed", "cancelled"]);
  const ACTIVE = ["held", "queued", "processing"];

  const body = document.body;
  const root = body.dataset.root || "";
  const $ = (id) => document.getElementById(id);

  // -- the API --------------------------------------------------------------------------------

  const apiKey = () => sessionStorage.getItem(KEY_STORE) || "";

  async function api(method, path) {
    const headers = { Accept: "application/json" };
    const key = apiKey();
    if (key) headers.Authorization = `Bearer ${key}`;
    let response;
    try {
      response = await fetch(root + path, { method, headers, cache: "no-store" });
    } catch (error) {
      return { ok: false, status: 0, body: { title: "No answer", detail: String(error) } };
    }
    let document = null;
    try {
      document = await response.json();
    } catch (error) {
      document = null;
    }
    return { ok: response.ok, status: response.status, body: document };
  }

  // Shows what an answer that is not a success means; true if it is worth asking again later.
  function report(answer) {
    const needsKey = answer.status === 401 || answer.status === 403;
    $("needs-key").hidden = !needsKey;
    const problem = $("problem");
    problem.hidden = answer.ok || needsKey;
    if (!answer.ok && !needsKey) {
      const doc = answer.body || {};
      problem.textContent = `${doc.title || "HTTP " + answer.status}: ${doc.detail || ""}`;
    }
    return !needsKey && answer.status !== 404;
  }

  // -- formatting, as the templates' macros do --------------------------------------------------

  const time = (value) => (value ? value.slice(0, 19).replace("T", " ") : "—");
  const percent = (fraction) => `${Math.floor(fraction * 100)}%`;
  const kindName = (kind) => (kind === "parent" ? "group" : kind);

  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (name === "className") node.className = value;
      else if (name in node && typeof value !== "string") node[name] = value;
      else node.setAttribute(name, value);
    }
    node.append(...children.filter((c) => c !== null && c !== undefined));
    return node;
  }

  const statusBadge = (status) => el("span", { className: `status status-${status}` }, status);
  const jobPage = (id) => `${root}/ui/jobs/${encodeURIComponent(id)}`;
  const jobApi = (id) => `/jobs/${encodeURIComponent(id)}`;

  function setField(section, name, content) {
    for (const node of section.querySelectorAll(`[data-field="${name}"]`)) {
      node.replaceChildren(content instanceof Node ? content.cloneNode(true) : String(content));
    }
  }

  // -- polling ------------------------------------------------------------------------------------

  // Runs `tick` now, then again after the delay it returns (null: stop). A tick in flight is never doubled.
  function poller(tick) {
    let timer = null;
    let running = false;
    async function run() {
      timer = null;
      if (running) return;
      running = true;
      let delay = null;
      try {
        delay = await tick();
      } finally {
        running = false;
      }
      if (delay !== null) timer = setTimeout(run, delay);
    }
    return {
      now() {
        if (timer !== null) clearTimeout(timer);
        run();
      },
      later(delay) {
        if (timer === null && !running) timer = setTimeout(run, delay);
      },
    };
  }

  // -- the API key bar ------------------------------------------------------------------------------

  function keyBar(onChange) {
    const form = $("key-form");
    const input = $("api-key");
    const state = $("key-state");
    const show = () => {
      state.textContent = apiKey() ? "key set" : "no key";
      input.value = "";
    };
    form.hidden = false;
    show();
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (input.value.trim()) sessionStorage.setItem(KEY_STORE, input.value.trim());
      show();
      onChange();
    });
    $("forget-key").addEventListener("click", () => {
      sessionStorage.removeItem(KEY_STORE);
      show();
      onChange();
    });
  }

  // -- the list of jobs -----------------------------------------------------------------------------

  function listPage() {
    const query = new URLSearchParams();
    for (const [name, value] of new URLSearchParams(location.search)) {
      if (["status", "kind", "cursor"].includes(name) && value) query.set(name, value);
    }
    query.set("limit", body.dataset.limit);
    const firstPage = !query.has("cursor");

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

    // The first page keeps showing new jobs; a later one only refreshes while a job on it runs.
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

  // -- cancel ---------------------------------------------------------------------------------------

  function cancelButton(button, id, what, afterwards) {
    const state = button.parentElement.querySelector(".cancel-state");
    button.addEventListener("click", async () => {
      const question = `Cancel ${what} ${id}? What has not started is cancelled at once; ` +
        "what runs stops at its next page.";
      if (!window.confirm(question)) return;
      button.disabled = true;
      const answer = await api("DELETE", jobApi(id));
      if (answer.status === 200) state.textContent = "Cancelled.";
      else if (answer.status === 202) state.textContent = "Cancel requested: running work stops at its next page.";
      else if (answer.body && answer.body.code === "job_finished") {
        state.textContent = `It had already ended ${answer.body.job_status}.`;
      } else {
        button.disabled = false;
        report(answer);
      }
      afterwards();
    });
  }

  function showCancel(button, view) {
    button.hidden = TERMINAL.has(view.status);
    if (view.cancel_requested) button.disabled = true;
    const state = button.parentElement.querySelector(".cancel-state");
    if (button.hidden && state.textContent) state.textContent = `Ended ${view.status}.`;
  }

  // -- a single job or a child ------------------------------------------------------------------------

  function renderSingle(view) {
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
    const text = $("job-text");
    const error = $("job-error");
    const waiting = $("job-waiting");
    text.hidden = !view.result;
    text.textContent = view.result ? view.result.text : "";
    error.hidden = !view.error_code;
    error.textContent = view.error_code ? `${view.error_code}: ${view.error || ""}` : "";
    waiting.hidden = !text.hidden || !error.hidden;
    waiting.textContent = TERMINAL.has(view.status)
      ? `No text: it ended ${view.status}.` : `Not there yet: the job is ${view.status}.`;
    showCancel($("cancel-job"), view);
  }

  // -- a group ----------------------------------------------------------------------------------------

  function groupView(id) {
    const pageSize = Number(body.dataset.gridPage);
    const eventsShown = Number(body.dataset.eventsShown);
    const children = [];  // by index: the latest summary of each child read
    const cells = [];  // by index: its cell in the grid
    let eventsMark = null;
    let openChild = null;  // {id, status} of the child in the panel

    for (const cell of document.querySelectorAll("#grid .cell")) {
      const index = Number(cell.dataset.index);
      cells[index] = cell;
      children[index] = { id: cell.dataset.id, index, status: cell.className.match(/status-(\w+)/)[1] };
    }

    const settled = (offset, total) => {
      for (let i = offset; i < Math.min(offset + pageSize, total); i++) {
        if (!children[i] || !TERMINAL.has(children[i].status)) return false;
      }
      return true;
    };

    // Reads again only the pages of the grid where a child may still change: ended children stay ended
    // while their group runs, so a large group costs fewer reads the further it gets.
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

    // Events are appended as jobs end, so they are read again only when the counts moved.
    async function readEvents(view) {
      const ended = view.total - ACTIVE.reduce((sum, s) => sum + view.counts[s], 0);
      const mark = `${view.status} ${ended} ${view.redrives}`;
      if (mark === eventsMark) return;
      const answer = await api("GET", `${jobApi(id)}/events`);
      if (!answer.ok) return;
      eventsMark = mark;
      const latest = answer.body.events.slice(-eventsShown).reverse();
      $("event-rows").replaceChildren(...latest.map(eventRow));
    }

    async function showChild(childId) {
      const panel = $("child-panel");
      panel.hidden = false;
      $("child-link").href = jobPage(childId);
      const answer = await api("GET", jobApi(childId));
      if (!report(answer) || !answer.ok) return;
      const child = answer.body;
      openChild = { id: childId, status: child.status };
      $("child-title").textContent = `Child #${child.index}`;
      $("child-status").replaceChildren(statusBadge(child.status));
      const text = $("child-text");
      const error = $("child-error");
      const waiting = $("child-waiting");
      text.hidden = !child.result;
      text.textContent = child.result ? child.result.text : "";
      error.hidden = !child.error_code;
      error.textContent = child.error_code ? `${child.error_code}: ${child.error || ""}` : "";
      waiting.hidden = !text.hidden || !error.hidden;
      waiting.textContent = TERMINAL.has(child.status)
        ? `No text: it ended ${child.status}.` : `Not there yet: the child is ${child.status}.`;
      panel.dataset.status = child.status;
    }

    $("grid").addEventListener("click", (event) => {
      const cell = event.target.closest(".cell");
      if (!cell) return;
      event.preventDefault();
      showChild(cell.dataset.id);
    });

    return async function render(view) {
      const section = $("group");
      setField(section, "status", statusBadge(view.status));
      for (const name of ["model", "max_parallel", "tolerated_failures"]) setField(section, name, view[name]);
      for (const name of ["created_at", "started_at", "finished_at"]) setField(section, name, time(view[name]));
      setField(section, "error_code", view.error_code || "—");
      const ended = view.total - ACTIVE.reduce((sum, s) => sum + view.counts[s], 0);
      setField(section, "ended", `${ended} of ${view.total} ended (${percent(view.progress)})`);
      $("group-progress").value = view.progress;
      for (const node of section.querySelectorAll("[data-count]")) {
        node.textContent = String(view.counts[node.dataset.count]);
      }
      showCancel($("cancel-group"), view);
      const failed = await readChildren(view.total);
      drawGrid(view.total);
      await readEvents(view);
      if (openChild) {
        const now = children.find((c) => c && c.id === openChild.id);
        if (now && now.status !== openChild.status) await showChild(openChild.id);
      }
      return failed;
    };
  }

  // -- a job's page -------------------------------------------------------------------------------------

  function jobPageLive() {
    const id = body.dataset.jobId;
    let renderGroup = null;
    let cancelWired = false;

    const poll = poller(async () => {
      const answer = await api("GET", `${jobApi(id)}?children=none`);
      if (!report(answer)) return null;
      if (!answer.ok) return RETRY_MS;
      const view = answer.body;
      const isGroup = view.kind === "parent";
      $("group").hidden = !isGroup;
      $("single").hidden = isGroup;
      body.dataset.kind = view.kind;
      if (!cancelWired) {
        cancelWired = true;
        const button = isGroup ? $("cancel-group") : $("cancel-job");
        cancelButton(button, id, isGroup ? "group" : "job", () => poll.now());
      }
      if (isGroup) {
        renderGroup = renderGroup || groupView(id);
        const failed = await renderGroup(view);
        if (failed && !report(failed)) return null;
      } else {
        renderSingle(view);
      }
      body.dataset.status = view.status;
      return TERMINAL.has(view.status) ? null : POLL_MS;
    });
    keyBar(() => poll.now());
    poll.now();
  }

  if (body.dataset.page === "list") listPage();
  else if (body.dataset.page === "job") jobPageLive();
  else if (body.dataset.page) keyBar(() => {});
})();
