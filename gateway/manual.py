"""The manual at ``/manual``: the docs site, built by ``make docs`` into ``gateway/manual/``.

Every problem's ``type`` is its code's page here (``/manual/problems/<code>/``), so a client
that follows it reads what the code means on the very gateway that answered it.  The route is
for people, not for clients of the API: it is outside the OpenAPI document and asks for no API
key.  A gateway whose site was never built answers ``404 manual_not_built`` rather than failing.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, redirect, send_from_directory
from werkzeug.exceptions import NotFound
from werkzeug.security import safe_join
from werkzeug.wrappers import Response

from gateway.problems import MANUAL_PATH, Problem

#: Where ``mkdocs build`` writes the site (``site_dir`` in mkdocs.yml); git ignores it.
SITE_DIR = Path(__file__).resolve().parent / "manual"
ENDPOINT = "manual"


def install(app: Flask, site_dir: Path | None = None) -> None:
    """Serves ``site_dir`` (by default ``SITE_DIR``) at ``/manual``; a directory's page is its ``index.html``."""
    site_dir = site_dir or SITE_DIR

    def serve_manual(path: str = "") -> Response:
        if not (site_dir / "index.html").is_file():
            raise Problem(
                "manual_not_built", "This gateway's manual has not been built: run `make docs` where it runs."
            )
        target = safe_join(str(site_dir), path)
        if target is None:
            raise NotFound()
        if path == "" or path.endswith("/"):
            return send_from_directory(site_dir, path + "index.html")
        if Path(target).is_dir():
            # The pages link to their neighbours relatively, from the directory's own address.
            return redirect(f"{MANUAL_PATH}/{path}/", code=308)
        return send_from_directory(site_dir, path)

    # /manual itself is redirected to /manual/ by the router (strict slashes).
    app.add_url_rule(f"{MANUAL_PATH}/", ENDPOINT, serve_manual, methods=["GET"])
    app.add_url_rule(f"{MANUAL_PATH}/<path:path>", ENDPOINT, serve_manual, methods=["GET"])
