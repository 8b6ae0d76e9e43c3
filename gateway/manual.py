"""The manual at ``/manual``: the docs site, built by ``make docs`` into ``gateway/manual/``.

Every problem's ``type`` is its code's page here (``/manual/problems/<code>/``), so a client
that follows it reads what the code means on the very gateway that answered it.  The route is
for people, not for clients of the API: it is outside the OpenAPI document and asks for no API
key.  A gateway whose site was never built answers ``404 manual_not_built`` rather than failing.

Only files inside the site's folder are served: a path is resolved, symlinks and all, and a file
that is not under the folder once resolved (a symlink pointing out of it) is ``404``, as is a
missing one.  Each page goes out with its own ``Content-Security-Policy``, which allows the inline
scripts the theme wrote into it by their hashes (``gateway.browser.page_policy``).
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, redirect, send_from_directory
from werkzeug.exceptions import NotFound
from werkzeug.security import safe_join
from werkzeug.wrappers import Response

from gateway.browser import CSP, page_policy
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
            return _file(site_dir, path + "index.html")
        if Path(target).is_dir():
            if not _inside(site_dir, Path(target)):
                raise NotFound()
            # The pages link to their neighbours relatively, from the directory's own address.
            return redirect(f"{MANUAL_PATH}/{path}/", code=308)
        return _file(site_dir, path)

    # /manual itself is redirected to /manual/ by the router (strict slashes).
    app.add_url_rule(f"{MANUAL_PATH}/", ENDPOINT, serve_manual, methods=["GET"])
    app.add_url_rule(f"{MANUAL_PATH}/<path:path>", ENDPOINT, serve_manual, methods=["GET"])


def _file(site_dir: Path, path: str) -> Response:
    """The site's file at ``path`` if it is inside the site once resolved; a page with its own policy."""
    target = safe_join(str(site_dir), path)
    if target is None or not _inside(site_dir, Path(target)) or not Path(target).is_file():
        raise NotFound()
    response = send_from_directory(site_dir, path)
    if response.mimetype == "text/html":
        response.headers[CSP] = page_policy(Path(target).read_bytes(), inline_styles=True)
    return response


def _inside(site_dir: Path, target: Path) -> bool:
    """Whether ``target``, its symlinks followed, is within ``site_dir`` (its symlinks followed too)."""
    return target.resolve().is_relative_to(site_dir.resolve())
