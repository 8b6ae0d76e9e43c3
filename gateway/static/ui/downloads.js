// A finished job's result saved as a file: its text, its JSON, its searchable PDF, hOCR, ALTO or Markdown.
// The API wants the key in the Authorization header, which a plain link cannot send: each button
// fetches with it, and saves what came through a link to a Blob with `download` set.
import { STATUS, TERMINAL, api, jobApi, problemText, send } from "./common.js";

// Where each format comes from, what its file is called, and (for text) how it is drawn from the answer.
const FORMATS = {
  text: { path: "/result", suffix: "txt", type: "text/plain;charset=utf-8", fromJson: (doc) => doc.text },
  json: { path: "/result", suffix: "json", type: "application/json", fromJson: (doc) => JSON.stringify(doc, null, 2) },
  pdf: { path: "/result.pdf", suffix: "pdf" },
  hocr: { path: "/result.hocr", suffix: "hocr" },
  alto: { path: "/result.alto", suffix: "xml" },
  md: { path: "/result.md", suffix: "md" },
};
// How often a PDF being built is asked for again, at most, when the answer names no Retry-After.
const PDF_RETRY_MS = 1000;
// How many times a PDF being built is asked for before the button gives up (the page says so).
const PDF_ASKS = 120;

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Saved as bytes, whatever the answer's type: a blob: URL has this page's origin, and a document a browser
// could run there (hOCR is XHTML) must never be opened as a page, only saved.
function save(blob, filename) {
  const url = URL.createObjectURL(new Blob([blob], { type: "application/octet-stream" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);  // the download has read it by then
}

// The file the API names (Content-Disposition), else the job's id with the format's suffix.
function filenameOf(response, id, suffix) {
  const named = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
  return named ? named[1] : `${id}.${suffix}`;
}

async function problemOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch (error) {
    body = null;
  }
  return problemText({ status: response.status, body });
}

// The document's bytes, asking again while the API answers 202 (a PDF being built); a Blob or a problem's text.
async function fetchDocument(path, state) {
  for (let ask = 0; ask < PDF_ASKS; ask++) {
    const response = await send("GET", path);
    if (response === null) return { problem: "No answer: the gateway did not answer." };
    if (response.status === 202) {
      state.textContent = "The PDF is being built…";
      const seconds = Number(response.headers.get("Retry-After"));
      await pause(seconds > 0 ? seconds * 1000 : PDF_RETRY_MS);
      continue;
    }
    if (!response.ok) return { problem: await problemOf(response) };
    return { response, blob: await response.blob() };
  }
  return { problem: "The PDF was still being built: try again later." };
}

async function download(id, name, state) {
  const format = FORMATS[name];
  state.textContent = `Fetching ${name}…`;
  if (format.fromJson) {
    const answer = await api("GET", jobApi(id) + format.path);
    if (!answer.ok) {
      state.textContent = problemText(answer);
      return;
    }
    save(new Blob([format.fromJson(answer.body)], { type: format.type }), `${id}.${format.suffix}`);
    state.textContent = `Saved ${id}.${format.suffix}.`;
    return;
  }
  const fetched = await fetchDocument(jobApi(id) + format.path, state);
  if (fetched.problem) {
    state.textContent = fetched.problem;
    return;
  }
  const filename = filenameOf(fetched.response, id, format.suffix);
  save(fetched.blob, filename);
  state.textContent = `Saved ${filename}.`;
}

// Wires the buttons of a `.downloads` block for job `id`; `show(view)` shows them once it has ended.
export function downloads(section, id) {
  const block = section.querySelector(".downloads");
  const state = block.querySelector(".download-state");
  block.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-format]");
    if (!button) return;
    button.disabled = true;
    try {
      await download(id, button.dataset.format, state);
    } finally {
      button.disabled = false;
    }
  });
  return function show(view) {
    // A single job or a child has a result once completed; a group's merged one once it has ended.
    block.hidden = view.kind === "parent" ? !TERMINAL.has(view.status) : view.status !== STATUS.completed;
  };
}
