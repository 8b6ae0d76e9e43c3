"""What each problem code, job error code and webhook error code means, and what to do about it.

The one hand-written part of the code pages: the status, the title and whether a job error is
retried come from the catalogues themselves (``gateway.problems.CATALOGUE``,
``jobs.contract.ErrorCode``, ``jobs.contract.WebhookErrorCode``), and ``codes.py`` fails the docs
build when a code of any catalogue has no entry here, or an entry names no code.
"""

from __future__ import annotations

#: problem code -> (what it means, what a client should do)
PROBLEMS: dict[str, tuple[str, str]] = {
    "malformed_json": (
        "The body was sent as JSON but does not parse as JSON.",
        "Fix the body: send one JSON object, encoded as UTF-8. Nothing was stored.",
    ),
    "invalid_base64": (
        "A `payload` is not valid base64 (standard alphabet, padded).",
        "Encode the document with standard, padded base64 (no URL-safe alphabet, no line breaks).",
    ),
    "invalid_idempotency_key": (
        "The `Idempotency-Key` header is empty, longer than 255 characters, has characters "
        "other than visible ASCII, has a comma, or was sent more than once (a server may pass two "
        "headers on joined by a comma: `k1,k2`).",
        "Send the header once, with 1 to 255 visible ASCII characters other than a comma, e.g. a UUID. "
        "Nothing was stored.",
    ),
    "host_not_allowed": (
        "The request's `Host` header names a host this gateway does not answer to (`OCRGW_ALLOWED_HOSTS`), "
        "or names no one host (two `Host` headers, say). A page of another site that has its own name "
        "resolve to the gateway's address (DNS rebinding) is refused this way.",
        "Reach the gateway by a name its operator lists, or by its IP address; an operator adds the names "
        "clients use to `OCRGW_ALLOWED_HOSTS` (see [Browsers](../security/browsers.md)). Nothing was stored.",
    ),
    "cross_site_request": (
        "A browser sent this request (`POST`, `PATCH` or `DELETE`) from a page of another site: its `Origin` "
        "header names another origin than the one the request went to, or its `Sec-Fetch-Site` header is "
        "`cross-site`. A page elsewhere could otherwise submit a document or redrive a group on a gateway "
        "without keys.",
        "Use the gateway's own pages (the dashboard, Swagger UI), or a client that is not a browser (the CLI, "
        "curl, a program), which sends neither header. Behind a proxy, have it pass the client's `Host` on "
        "(see [Browsers](../security/browsers.md)). Nothing was stored.",
    ),
    "invalid_last_event_id": (
        "A live event stream (`GET /jobs/{id}/events` as `text/event-stream`) was asked to resume from a "
        "`Last-Event-ID` that is not an event id (`<milliseconds>-<sequence>`, as the stream's `id:` lines give).",
        "Send back the last `id` the stream gave you, or no `Last-Event-ID` to read the job's events from the start.",
    ),
    "missing_api_key": (
        "The request has no `Authorization: Bearer <key>` header (or another scheme, or an empty token), "
        "and this gateway requires API keys.",
        "Send the key your operator gave you as `Authorization: Bearer <key>`.",
    ),
    "invalid_api_key": (
        "The key sent is not one this gateway knows.",
        "Check the key (no whitespace, the whole key); a key removed in a rotation no longer works: "
        "ask for the new one. Retrying the same key does not help.",
    ),
    "missing_metrics_token": (
        "`GET /metrics` asks for the token `OCRGW_METRICS_TOKEN` sets, and none was sent.",
        "Configure the scraper with the token (Prometheus: `authorization: credentials_file`).",
    ),
    "invalid_metrics_token": (
        "`GET /metrics` was sent a bearer token that is not the configured one.",
        "Give the scraper the token the gateway's `OCRGW_METRICS_TOKEN` holds.",
    ),
    "on_prem_required": (
        "A document that must stay on premises names a `cloud` model; or a key with the `on_prem_only` "
        "policy asked for a control that would start a cloud child of its group. `child_index` names the child.",
        "Send it to an `on_prem` model (see `GET /models`), or, for a control, have a key without the "
        "policy do it. Nothing was stored or changed.",
    ),
    "admin_key_required": (
        "`GET /usage` named a `tenant` other than the key's own, and the key has no `admin` policy.",
        "Leave `tenant` out to read your own usage, or ask with a key whose line in the keys file carries "
        "the `admin` policy. Nothing was read.",
    ),
    "interactive_not_allowed": (
        'The request asked for `priority: "interactive"`, and its key may not use the interactive lane: its '
        "`interactive_max_inflight` policy is 0 (or, for a key without one or a gateway without keys, "
        "`OCRGW_INTERACTIVE_MAX_INFLIGHT` is 0).",
        "Submit in the batch lane (leave `priority` out), or ask the operator for a key allowed the lane "
        "(see [Fair share](../security/fair-share.md)). Nothing was stored.",
    ),
    "interactive_limit_reached": (
        "The tenant already has as many interactive jobs queued or processing as the key's "
        "`interactive_max_inflight` allows (a group counts as many as it may run at once: its children, or its "
        "`max_parallel` if fewer). `in_use` and `interactive_max_inflight` say how many.",
        "Retry after `Retry-After` seconds, once some of them have ended, or submit in the batch lane. Nothing "
        "was stored.",
    ),
    "job_not_found": (
        "There is no such job, or it is another tenant's, or its retention (`OCRGW_RESULT_TTL`) is over "
        "and it was deleted.",
        "Check the id and the key you send; a job ended longer ago than the retention is gone for good.",
    ),
    "table_not_found": (
        "The job's result has no table of that number: tables are numbered from 1 over the whole document "
        "(`tables` in `GET /jobs/{id}/result` lists them), and a result has tables only when the job asked for "
        "`layout` and a page had one. `tables` in the problem says how many there are.",
        "Ask for a number `tables` lists; for a document read without layout, submit it again with "
        "`options.layout: true`.",
    ),
    "result_not_ready": (
        "The job (or group) has not ended yet; `job_status` says where it is.",
        "Poll `GET /jobs/{id}` (or wait for the webhook) until its status is terminal, then ask again.",
    ),
    "job_finished": (
        "The job or group has already ended, so it cannot be cancelled or given a new cap; "
        "`job_status` says how it ended.",
        "Nothing to do: a cancel sent again after its answer was lost finds `cancelled` there.",
    ),
    "not_a_group": (
        "A group's control (a cap change, a redrive) was sent to a single job or a child.",
        "Send it to the group's parent id.",
    ),
    "group_not_finished": (
        "A redrive was asked of a group that is still running.",
        "Wait for the group to end, then retry it. Sent again after a lost answer, this says the first one "
        "went through.",
    ),
    "nothing_to_retry": (
        "The group has no failed children (nor cancelled ones, when `include_cancelled` was asked) to run again.",
        'Nothing to do; add `{"include_cancelled": true}` to run cancelled children too.',
    ),
    "no_result": (
        "The job failed or was cancelled, so it has no result (for the PDF, hOCR and ALTO: a group without a "
        "completed child); `job_status` and `error_code` say how it ended.",
        "Read the job's `error_code` and `error`; a failed group may be redriven (`POST /jobs/{id}/retry`).",
    ),
    "pdf_unavailable": (
        "No searchable PDF can be made for this job: a text job (`echo`), or a document that cannot be read, "
        "is no longer stored, or took more time or memory than a worker may give it.",
        "Use the JSON result, hOCR or ALTO instead; do not ask again, the answer will not change.",
    ),
    "payload_too_large": (
        "The request body is larger than `OCRGW_MAX_BODY_BYTES` (`max_body_bytes` in the problem).",
        "Send a smaller document, split a large batch into several groups, or send a raw document rather "
        "than base64 in JSON (a third smaller).",
    ),
    "inspection_budget_exceeded": (
        "Checking the request's documents (opening each PDF, reading each image's headers) took more than "
        "`OCRGW_INSPECTION_SECONDS` in all (`inspection_seconds` in the problem), or the request has more "
        "distinct documents than `OCRGW_INSPECTION_MAX_DOCUMENTS` (`max_inspections`); identical documents count "
        "once. Nothing was stored; in a group, `child_index` names the child being checked when it ran out. "
        "See [Input limits](../security/input-limits.md).",
        "Send the documents in several smaller requests (fewer children a group). A single PDF that alone takes "
        "longer than the budget to open is refused every time: repair or re-export it.",
    ),
    "uri_too_long": (
        "The request line (method, URL, version) is longer than the gateway's limit (4094 bytes); "
        "answered before any route runs.",
        "Shorten the URL: put data in the body, not in the query.",
    ),
    "missing_content_type": (
        "A raw document was sent without a `Content-Type` header.",
        "Send the document's type: `image/png`, `image/jpeg`, `image/tiff`, `application/pdf`, or "
        "`text/plain` for `echo`.",
    ),
    "unsupported_content_type": (
        "The model does not take this content type; `accepted` lists those it does.",
        "Convert the document to an accepted type, or pick a model that takes it (`GET /models`).",
    ),
    "content_type_mismatch": (
        "The document's first bytes are not those of its declared type (`declared`, `detected`).",
        "Declare the type the bytes really are, or send the right file.",
    ),
    "json_content_type_required": (
        "A body that is JSON was sent with another `Content-Type` than `application/json` (or a `+json` "
        "type): a JSON body to `PATCH /jobs/{id}` or `POST /jobs/{id}/retry`, any body or `Content-Type` "
        "there that is not JSON, or a `text/plain` (or form) document to `POST /jobs` that is a JSON object. "
        "A browser sends such a request from any site without asking first; one with "
        "`Content-Type: application/json` it sends only if the gateway allows it, which it never does.",
        "Send the JSON with `Content-Type: application/json`. A text document that is itself a JSON object "
        "goes as a JSON job, its bytes in base64 in `payload`. Nothing was stored or changed.",
    ),
    "invalid_field": (
        "The request is readable but a field, option or query parameter is wrong; `errors` names each.",
        "Fix what `errors` names; nothing was stored.",
    ),
    "unknown_model": (
        "The request names a model the gateway does not know; `models` lists the known ones.",
        "Use one of `models` (or `GET /models`).",
    ),
    "empty_document": (
        "The document has no bytes.",
        "Send the file's content.",
    ),
    "invalid_document": (
        "The document's headers cannot be read: a PDF that does not open, an image without its header, "
        "a PDF that takes more than the gateway's bounds to open.",
        "Check the file opens in a viewer; repair or re-export it. Sending it again will not help.",
    ),
    "encrypted_document": (
        "The PDF needs a password to open (a user password): nothing in it can be read, so nothing was stored. "
        "A PDF with an owner password only (restrictions on printing or copying, no password to open) is "
        "read as any other.",
        "Remove the encryption first, for example `qpdf --decrypt --password=PASSWORD in.pdf out.pdf`, and "
        "send the decrypted PDF. `ocrgw ocr` exits 8 for it, as `ocrmypdf` does.",
    ),
    "too_many_pages": (
        "The document has more pages than `OCRGW_MAX_PAGES` (`page_count`, `max_pages`).",
        "Split the document into parts within the limit and send each.",
    ),
    "too_many_pixels": (
        "A page image is larger than `OCRGW_MAX_IMAGE_PIXELS` as its header declares it, or a PDF page is too "
        "large even at 72 dpi (`page`, `width`, `height`, `max_image_pixels`).",
        "Scale the image down (300 dpi is plenty for OCR) and send it again.",
    ),
    "no_children": (
        "A fan-out group has no children.",
        "Send at least one child, or send a single job.",
    ),
    "too_many_children": (
        "A group has more children than `OCRGW_MAX_CHILDREN` (`max_children`), or a PDF split would make more.",
        "Send several groups, or a larger `split_pages`.",
    ),
    "idempotency_key_reused": (
        "The `Idempotency-Key` was used before, by this tenant, for a different request.",
        "Use a new key for a new request; send the same key only to repeat the very same request.",
    ),
    "invalid_callback_url": (
        "The `callback_url` is not an http(s) URL with a host, or names a loopback or private address.",
        "Give a public http(s) URL of your receiver (see [Webhooks](../webhooks.md)).",
    ),
    "unsupported_language": (
        "A `tesseract` job's `options.lang` names a language that no live worker has "
        "(`missing_languages`, `installed_languages`).",
        "Use an installed language (`GET /models`), or have the operator install it on the workers "
        "(see [Languages](../documents/languages.md)).",
    ),
    "invalid_options": (
        "The options are well formed, and the job's model cannot honour one of them (`options`): "
        "`layout: true` on a model that gives no words with boxes (`echo`, or a remote model whose upstream "
        "model is `echo`), since a page's layout is found from its words. An option of the wrong type or out of "
        "its range is `invalid_field` instead; a job that got past the gateway and is refused by its worker "
        "fails with the job error code of the same name.",
        "Drop the option, or send the document to a model that reads pages (`tesseract`, `paddleocr`; "
        "`GET /models`). See [Layout](../documents/layout.md).",
    ),
    "too_many_streams": (
        "Opening this live event stream would pass `OCRGW_STREAM_MAX_PER_TENANT` (your tenant's open streams "
        "on every gateway) or `OCRGW_STREAM_MAX_PER_PROCESS` (all the streams of the gateway process that "
        "answered); `limit` says which.",
        "Close a stream you no longer read, or retry after `Retry-After` seconds; or poll `GET /jobs/{id}`.",
    ),
    "request_header_fields_too_large": (
        "A header is longer than 8190 bytes, or there are more than 100 headers; answered before any route runs.",
        "Send fewer or shorter headers.",
    ),
    "internal_error": (
        "The gateway hit a bug; the exception is in its log.",
        "Retry once; if it persists, report it with the time of the request.",
    ),
    "draining": (
        "This gateway is shutting down and takes no new work.",
        "Retry after `Retry-After` seconds; a load balancer sends you to another gateway.",
    ),
    "store_unavailable": (
        "The job store (Redis) does not answer, or did not confirm a creation on enough replicas "
        "(`OCRGW_MIN_REPLICAS`).",
        "Retry after `Retry-After` seconds, with the same `Idempotency-Key` for a submission so that it "
        "cannot create a second job.",
    ),
    "manual_not_built": (
        "The gateway serves this manual at `/manual`, and it has not been built on this host.",
        "Run `make docs` (or `scripts/setup.sh`) where the gateway runs, then reload the page.",
    ),
}

#: job error code -> what a client (or operator) should do about it
JOB_ERRORS: dict[str, str] = {
    "child_failed": "Read the failed children's `error_code`s; a group may be redriven (`POST /jobs/{id}/retry`).",
    "child_cancelled": 'Redrive with `{"include_cancelled": true}` to run the cancelled children again.',
    "lease_expired": "Its workers died (or stalled) on every attempt: check the workers' logs and memory; "
    "the document may be one that kills them.",
    "timeout": "Split the document (`split_pages`), or raise `OCRGW_JOB_TIMEOUT`.",
    "resource_limit": "The document needs more memory than a worker process may use: send smaller pages, "
    "or raise `OCRGW_WORKER_MEMORY_LIMIT_MB`.",
    "adapter_error": "Retried by ocrgw; if it keeps failing, the worker's log says why.",
    "on_prem_required": "Send the document to an `on_prem` model.",
    "invalid_document": "Check the file opens in a viewer; repair or re-export it.",
    "invalid_options": "Fix the options against the model's schema in `GET /models`.",
    "unknown_model": "Run a worker for the model, or submit to a model the workers serve.",
    "unsupported_language": "Install the language on every worker of the queue "
    "(see [Languages](../documents/languages.md)), or ask for one they have.",
    "engine_unavailable": "Retried by ocrgw; an operator should check the engine is installed on the worker hosts.",
    "engine_timeout": "Raise `options.timeout_s`, or send smaller pages.",
    "echo_failed": "A test model's failure, asked for: nothing to do.",
    "echo_transient": "A test model's transient failure, asked for: nothing to do.",
    "upstream_unreachable": "Retried by ocrgw; an operator should check the upstream's address and network.",
    "upstream_unavailable": "Retried by ocrgw; the upstream is overloaded or down.",
    "upstream_timeout": "Retried by ocrgw; give the job more time (`options.timeout_s`).",
    "upstream_rejected": "The `error` carries the upstream's problem code: fix the key, model, type or option.",
    "upstream_failed": "The `error` carries the upstream job's `error_code`: look that code up.",
    "upstream_bad_response": "The remote model's URL points at something that is not an ocrgw: fix "
    "`OCRGW_REMOTE_MODELS`.",
}

#: webhook error code -> (what it means, what the receiver's operator should do)
WEBHOOK_ERRORS: dict[str, tuple[str, str]] = {
    "invalid_callback_url": (
        "The job's `callback_url` does not pass the URL policy: it was stored before the policy refused such URLs.",
        "Submit later jobs with an http(s) URL with a host and without credentials; this job's webhook "
        "cannot be delivered.",
    ),
    "private_address": (
        "The callback's host resolves to an address that is not public (loopback, private, link-local...), "
        "which ocrgw does not call.",
        "Give the receiver a public address, or have the operator set `OCRGW_WEBHOOK_ALLOW_PRIVATE` "
        "for a receiver on ocrgw's own network.",
    ),
    "unresolvable": (
        "The callback's host name does not resolve.",
        "Check the host name in `callback_url` and its DNS records.",
    ),
    "connection_failed": (
        "No address of the host accepted a connection, or the TLS handshake failed.",
        "Check the receiver is up and listening, and that its certificate is valid for the host name.",
    ),
    "timeout": (
        "No answer for the host name from its name server, no connection, or not the whole status line and "
        "headers of the answer, within `OCRGW_WEBHOOK_TIMEOUT`. Not a job's `timeout`: the job itself ended.",
        "Have the receiver answer at once (a `2xx`) and do its work afterwards; check that the host name's "
        "name servers answer.",
    ),
    "bad_response": (
        "The receiver's answer was not HTTP.",
        "Check that `callback_url` points at an HTTP server (`https` for a TLS port).",
    ),
    "redirect": (
        "The receiver answered a `3xx`; redirects are not followed.",
        "Put the address the redirect points to in `callback_url`.",
    ),
    "http_error": (
        "The receiver answered a status outside `2xx` (`response_status` says which).",
        "Check the receiver's log for that request: a `401` or `403` often means it verifies the "
        "signature with another secret.",
    ),
    "internal_error": (
        "The deliverer failed before the request went out (a bug); the event's `error` is always "
        "`the deliverer failed; see its log`.",
        "Nothing for the receiver to do; the operator finds the exception in the deliverer's log.",
    ),
}
