// The form at /ui/new: a document sent through POST /jobs, then its page opened.
//
// The models and what each reads come from GET /models: the options of the model chosen are drawn
// from its JSON schema (a yes/no, a choice, a number or a text each), its languages (those of the
// live workers) as a list to pick from. The document goes as the JSON shape of POST /jobs, its
// bytes base64, the one shape that carries options; a PDF may be split into parts of N pages.
import { $, api, el, jobPage, keyBar, problemText, report } from "./common.js";

const PDF = "application/pdf";
// A file whose type the browser does not know, by its name's ending.
const BY_SUFFIX = { pdf: PDF, png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", tif: "image/tiff",
  tiff: "image/tiff", txt: "text/plain" };
// Options the form sets otherwise (a split sets each part's first page itself).
const NOT_DRAWN = new Set(["first_page"]);

let models = {};

function contentTypeOf(file) {
  if (file.type) return file.type;
  const suffix = file.name.includes(".") ? file.name.split(".").pop().toLowerCase() : "";
  return BY_SUFFIX[suffix] || "application/octet-stream";
}

const chosenFile = () => $("submit-file").files[0] || null;
const chosenModel = () => models[$("submit-model").value] || null;

// One field per option of the schema; a yes/no is a choice too, so that "not given" stays possible.
function optionField(name, schema) {
  const attributes = { "data-option": name, "data-type": schema.type, title: schema.description || "" };
  let input;
  if (schema.type === "boolean" || schema.enum) {
    const values = schema.enum || ["true", "false"];
    input = el("select", attributes, el("option", { value: "" }, "default"),
      ...values.map((v) => el("option", { value: String(v) }, String(v))));
  } else if (schema.type === "integer" || schema.type === "number") {
    input = el("input", { ...attributes, type: "number", step: schema.type === "integer" ? "1" : "any" });
    if (schema.minimum !== undefined) input.min = String(schema.minimum);
    if (schema.maximum !== undefined) input.max = String(schema.maximum);
  } else if (schema.type === "string") {
    input = el("input", { ...attributes, type: "text" });
  } else {
    return null;
  }
  return el("label", { className: "option" }, `${name} `, input);
}

function drawOptions() {
  const model = chosenModel();
  const pickLanguages = Boolean(model && model.languages && model.languages.length);
  $("languages-field").hidden = !pickLanguages;
  $("submit-languages").replaceChildren(...(pickLanguages ? model.languages : []).map(
    (language) => el("option", { value: language }, language)));
  const properties = (model && model.options && model.options.properties) || {};
  const fields = Object.entries(properties)
    .filter(([name]) => !NOT_DRAWN.has(name) && !(pickLanguages && name === "lang"))
    .map(([name, schema]) => optionField(name, schema));
  $("model-options").replaceChildren(...fields.filter(Boolean));
  $("model-about").textContent = model
    ? `${model.engine}, ${model.location === "cloud" ? "in the cloud" : "on premises"}; reads ${model.content_types.join(", ")}.`
    : "";
}

// Models that cannot read the file's type are shown but not offered; the first that can is chosen.
function fitModelsToFile() {
  const file = chosenFile();
  const type = file ? contentTypeOf(file) : null;
  $("submit-type").textContent = file ? `${file.name}: ${type}, ${file.size} bytes.` : "";
  $("split").hidden = type !== PDF;
  const select = $("submit-model");
  for (const option of select.options) option.disabled = Boolean(type) && !models[option.value].content_types.includes(type);
  if (select.selectedOptions[0] && select.selectedOptions[0].disabled) {
    const fitting = [...select.options].find((option) => !option.disabled);
    if (fitting) select.value = fitting.value;
  }
  drawOptions();
}

function optionsOf() {
  const options = {};
  for (const input of $("model-options").querySelectorAll("[data-option]")) {
    if (input.value === "") continue;
    const type = input.dataset.type;
    options[input.dataset.option] = type === "boolean" ? input.value === "true"
      : type === "integer" || type === "number" ? Number(input.value) : input.value;
  }
  const languages = [...$("submit-languages").selectedOptions].map((option) => option.value);
  if (!$("languages-field").hidden && languages.length) options.lang = languages.join("+");
  return options;
}

async function base64Of(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

// A key for a submission, so that one sent again after no answer came makes one job, not two.
function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function requestBody(file) {
  const type = contentTypeOf(file);
  const body = { model: $("submit-model").value, content_type: type, payload: await base64Of(file) };
  const options = optionsOf();
  if (Object.keys(options).length) body.options = options;
  if (type === PDF && $("submit-split").value) {
    body.split_pages = Number($("submit-split").value);
    if ($("submit-max-parallel").value) body.max_parallel = Number($("submit-max-parallel").value);
  }
  if ($("submit-priority").value) body.priority = $("submit-priority").value;
  if ($("submit-on-prem").checked) body.on_prem = true;
  if ($("submit-callback").value) body.callback_url = $("submit-callback").value;
  return body;
}

// The key of a submission that got no answer: sent again with it, it is replayed rather than made twice.
// Only as it was: any change to the form (a new file, model, option, split, priority, callback) makes it
// another submission, which the API would refuse under the same key (422 idempotency_key_reused).
let unanswered = null;

async function submit(event) {
  event.preventDefault();
  const file = chosenFile();
  const state = $("submit-state");
  if (!file) return;
  const button = $("submit-button");
  button.disabled = true;
  state.className = "state";
  state.textContent = "Sending…";
  const key = unanswered || idempotencyKey();
  const answer = await api("POST", "/jobs", { json: await requestBody(file), headers: { "Idempotency-Key": key } });
  unanswered = answer.status === 0 ? key : null;
  button.disabled = false;
  if (answer.ok) {
    state.textContent = `Accepted: job ${answer.body.id}.`;
    window.location.assign(jobPage(answer.body.id));
    return;
  }
  state.className = "state refused";
  state.textContent = problemText(answer);
}

async function loadModels() {
  const answer = await api("GET", "/models");
  if (!report(answer) || !answer.ok) return;
  models = Object.fromEntries(answer.body.models.map((model) => [model.name, model]));
  const select = $("submit-model");
  const current = select.value;
  select.replaceChildren(...answer.body.models.map((m) => el("option", { value: m.name }, m.name)));
  if (models[current]) select.value = current;
  fitModelsToFile();
}

export function submitPage() {
  const form = $("submit-form");
  // Every field's input and change events bubble up to the form, those of the options drawn later too.
  for (const type of ["input", "change"]) form.addEventListener(type, () => { unanswered = null; });
  $("submit-file").addEventListener("change", fitModelsToFile);
  $("submit-model").addEventListener("change", drawOptions);
  form.addEventListener("submit", submit);
  keyBar(loadModels);
  loadModels();
}
