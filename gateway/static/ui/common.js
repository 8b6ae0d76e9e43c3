// What every page of the dashboard shares: calling the API with the tab's key, showing what an
// answer means, formatting as the templates' macros do, building elements, and polling.

export const POLL_MS = 1000;
export const LIST_POLL_MS = 2000;
export const RETRY_MS = 5000;
// The statuses, generated from jobs/contract.py (scripts/generate_statuses.py), for every page.
import { TERMINAL } from "./statuses.js";
export { ACTIVE, STATUS, TERMINAL } from "./statuses.js";

const KEY_STORE = "ocrgw.apiKey";

export const body = document.body;
export const root = body.dataset.root || "";
export const $ = (id) => document.getElementById(id);

// -- the API ----------------------------------------------------------------------------------------

const apiKey = () => sessionStorage.getItem(KEY_STORE) || "";

// The headers of every request to the API: `extra`, and the key of this tab if there is one.
export function keyHeaders(extra = {}) {
  const headers = { ...extra };
  const key = apiKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  return headers;
}

// The answer of `method path` as fetch gives it (with the tab's key), or null if none came.
export async function send(method, path, { json, headers = {} } = {}) {
  const init = { method, headers: keyHeaders(headers), cache: "no-store" };
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  }
  try {
    return await fetch(root + path, init);
  } catch (error) {
    return null;
  }
}

// {ok, status, body, headers}: the answer of `method path` (with `json` as its body, if given), read as JSON.
export async function api(method, path, options = {}) {
  const response = await send(method, path, { ...options, headers: { Accept: "application/json", ...options.headers } });
  if (response === null) {
    return { ok: false, status: 0, body: { title: "No answer", detail: "The gateway did not answer." }, headers: null };
  }
  let document = null;
  try {
    document = await response.json();
  } catch (error) {
    document = null;
  }
  return { ok: response.ok, status: response.status, body: document, headers: response.headers };
}

// A refusal as one line for the user: the problem's title, detail and code, and the fields it names.
export function problemText(answer) {
  const doc = answer.body || {};
  let text = `${doc.title || "HTTP " + answer.status}: ${doc.detail || ""}`;
  if (doc.code) text += ` (${doc.code})`;
  if (doc.errors && typeof doc.errors === "object") {
    const fields = Object.entries(doc.errors).map(([name, why]) => `${name}: ${[].concat(why).join(" ")}`);
    if (fields.length) text += ` ${fields.join("; ")}`;
  }
  return text;
}

// Shows what an answer means (nothing for a success); true if it is worth asking again later.
export function report(answer) {
  const needsKey = answer.status === 401 || answer.status === 403;
  $("needs-key").hidden = !needsKey;
  const problem = $("problem");
  problem.hidden = answer.ok || needsKey;
  if (!answer.ok && !needsKey) {
    problem.textContent = problemText(answer);
  }
  return !needsKey && answer.status !== 404;
}

export const jobApi = (id) => `/jobs/${encodeURIComponent(id)}`;
export const jobPage = (id) => `${root}/ui/jobs/${encodeURIComponent(id)}`;

// -- formatting and elements ------------------------------------------------------------------------

export const time = (value) => (value ? value.slice(0, 19).replace("T", " ") : "—");
export const percent = (fraction) => `${Math.floor(fraction * 100)}%`;
export const kindName = (kind) => (kind === "parent" ? "group" : kind);

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "className") node.className = value;
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

export const statusBadge = (status) => el("span", { className: `status status-${status}` }, status);

// Writes `content` (text, or an element copied) into every [data-field=name] of the section.
export function setField(section, name, content) {
  for (const node of section.querySelectorAll(`[data-field="${name}"]`)) {
    node.replaceChildren(content instanceof Node ? content.cloneNode(true) : String(content));
  }
}

// Shows a job's text, its error, or why there is neither, in the three elements given.
export function showOutcome(job, { text, error, waiting }, noun) {
  text.hidden = !job.result;
  text.textContent = job.result ? job.result.text : "";
  error.hidden = !job.error_code;
  error.textContent = job.error_code ? `${job.error_code}: ${job.error || ""}` : "";
  waiting.hidden = !text.hidden || !error.hidden;
  waiting.textContent = TERMINAL.has(job.status)
    ? `No text: it ended ${job.status}.` : `Not there yet: the ${noun} is ${job.status}.`;
}

// -- polling ----------------------------------------------------------------------------------------

// Runs `tick` when asked, then again after the delay it returns (null: stop); never two at once.
export function poller(tick) {
  let timer = null;
  let running = false;
  let again = false;  // asked for while a tick ran: one more as soon as it ends
  async function run() {
    timer = null;
    if (running) {
      again = true;
      return;
    }
    running = true;
    let delay = null;
    try {
      delay = await tick();
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      run();
    } else if (delay !== null) {
      timer = setTimeout(run, delay);
    }
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

// -- the API key bar --------------------------------------------------------------------------------

export function keyBar(onChange) {
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

// -- cancel -----------------------------------------------------------------------------------------

export function cancelButton(button, id, what, afterwards) {
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

export function showCancel(button, view) {
  button.hidden = TERMINAL.has(view.status);
  if (view.cancel_requested) button.disabled = true;
  const state = button.parentElement.querySelector(".cancel-state");
  if (button.hidden && state.textContent) state.textContent = `Ended ${view.status}.`;
}

// -- the live stream --------------------------------------------------------------------------------

// Follows GET `path` as text/event-stream with the tab's key (fetch and a body reader: an EventSource could
// not send the key, and the key never goes in a URL), calling `onEvent({id, event, data})` for each event.
// Reconnects from the last id when a stream ends before the job did. `onState(state)`: "open" once a stream
// answers, "ended" at the job's end, "unavailable" when the gateway serves no stream (poll instead).
export function followStream(path, onEvent, onState) {
  let lastId = null;
  let stopped = false;
  async function connect() {
    const headers = keyHeaders({ Accept: "text/event-stream" });
    if (lastId) headers["Last-Event-ID"] = lastId;
    let response = null;
    try {
      response = await fetch(root + path, { headers, cache: "no-store" });
    } catch (error) {
      response = null;
    }
    const type = response ? (response.headers.get("Content-Type") || "").split(";")[0] : "";
    if (!response || !response.ok || type !== "text/event-stream" || !response.body) {
      onState("unavailable");
      return;
    }
    onState("open");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let pending = "";
    let fields = {};
    let ended = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += value;
        const lines = pending.split("\n");
        pending = lines.pop();
        for (const line of lines) {
          if (line === "") {
            if (fields.event && fields.data !== undefined) {
              const event = { id: fields.id || lastId, event: fields.event, data: JSON.parse(fields.data) };
              lastId = event.id;
              onEvent(event);
              if (event.event === "end" && ["terminal", "gone"].includes(event.data.reason)) ended = true;
            }
            fields = {};
          } else if (!line.startsWith(":")) {
            const at = line.indexOf(":");
            const name = at < 0 ? line : line.slice(0, at);
            fields[name] = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
          }
        }
      }
    } catch (error) {
      // The connection dropped: reconnect from the last id below.
    }
    if (ended) onState("ended");
    else if (!stopped) setTimeout(connect, POLL_MS);
  }
  connect();
  return { stop() { stopped = true; } };
}
