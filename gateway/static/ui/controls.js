// A group's controls besides cancel: a new cap (PATCH /jobs/<id> max_parallel) and a redrive
// (POST /jobs/<id>/retry). Each says what the API answered beside it: the change, or its problem
// (a redrive of a group still running is 409 group_not_finished), so a refusal is never silent.
import { $, STATUS, api, jobApi, problemText } from "./common.js";

// A key for a redrive, so that a click sent twice (a double click, a lost answer) redrives once.
function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function capForm(id, afterwards) {
  const form = $("cap-form");
  const input = $("cap-input");
  const state = $("cap-state");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const cap = Number(input.value);
    if (!Number.isInteger(cap)) {
      state.textContent = "The cap is a whole number (0 or less: no cap).";
      return;
    }
    form.querySelector("button").disabled = true;
    const answer = await api("PATCH", jobApi(id), { json: { max_parallel: cap } });
    form.querySelector("button").disabled = false;
    state.className = answer.ok ? "state" : "state refused";
    state.textContent = answer.ok
      ? `The API reports max parallel ${answer.body.max_parallel}.` : problemText(answer);
    input.dataset.edited = "";
    afterwards();
  });
  // Once the user has been in the field, polls stop writing the group's cap into it, until it is sent.
  for (const event of ["focus", "input"]) {
    input.addEventListener(event, () => {
      input.dataset.edited = "1";
    });
  }
}

function redriveForm(id, afterwards) {
  const form = $("redrive-form");
  const state = $("redrive-state");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const includeCancelled = $("redrive-cancelled").checked;
    const what = includeCancelled ? `${STATUS.failed} and ${STATUS.cancelled}` : STATUS.failed;
    if (!window.confirm(`Run the ${what} children of group ${id} again?`)) return;
    form.querySelector("button").disabled = true;
    const answer = await api("POST", `${jobApi(id)}/retry`, {
      json: { include_cancelled: includeCancelled },
      headers: { "Idempotency-Key": idempotencyKey() },
    });
    form.querySelector("button").disabled = false;
    state.className = answer.ok ? "state" : "state refused";
    state.textContent = answer.ok
      ? `Redriven: the group is ${answer.body.status} again (redrive ${answer.body.redrives}).`
      : problemText(answer);
    afterwards();
  });
}

// Wires both forms of the group `id`; `afterwards()` reads the group again. Returns `show(view)`.
export function groupControls(id, afterwards) {
  capForm(id, afterwards);
  redriveForm(id, afterwards);
  $("group-controls").hidden = false;
  return function show(view) {
    const input = $("cap-input");
    // The field follows the group's cap, unless the user is writing a new one.
    if (!input.dataset.edited) input.value = String(view.max_parallel);
  };
}
