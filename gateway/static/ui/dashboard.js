// The dashboard's script: keeps the server-rendered pages of /ui live by polling the JSON API.
//
// Every request goes to the API the page is served with, and carries the API key typed into the
// bar, if any (kept in sessionStorage: this tab only, gone when it closes). A page polls while
// what it shows runs (not while its tab is hidden) and stops once it has ended. It writes the
// markup the templates write. Plain ES modules, served as they are: no build step.
import { body, keyBar } from "./common.js";
import { jobPageLive } from "./job.js";
import { listPage } from "./list.js";
import { submitPage } from "./submit.js";
import { workersPage } from "./workers.js";

const PAGES = { list: listPage, job: jobPageLive, submit: submitPage, workers: workersPage };

if (PAGES[body.dataset.page]) PAGES[body.dataset.page]();
else if (body.dataset.page) keyBar(() => {});
