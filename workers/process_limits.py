"""What one worker pool process may take of its host: address space, and a temporary directory of its own.

The documents are bounded before they are decoded (``documents.limits``),
but an engine's working memory is not ours to count, and a bug is a bug.
An address-space limit (``RLIMIT_AS``, ``OCRGW_WORKER_MEMORY_LIMIT_MB``)
turns whatever would have grown past it into a failed allocation: a
``MemoryError`` in Python, which fails that job (``resource_limit``) and
leaves the process serving the next one, instead of the kernel's OOM killer
picking a process of the host.  Tesseract, which reads pages in this
process, is held to it; child processes inherit it (the ``tesseract``
binary the orientation step runs).  Address space counts mappings
an engine reserves but never touches, so the limit sits well above the
resident memory a job needs (about 1 GB for a 50 Mpx page on PP-OCRv4).

Temporary files (pytesseract writes each page image for ``tesseract``'s OSD) go to
a directory of the process's own, ``<tmp>/ocrgw-worker/<pid>``.  pytesseract
deletes its files, but a process killed in the middle of a page (the hard
time limit, a crash) cannot: the next pool process to start removes the
directories of processes that no longer exist, so such leftovers never pile up.
"""

from __future__ import annotations

import logging
import os
import resource
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

MIB = 1024 * 1024
TMP_SUBDIRECTORY = "ocrgw-worker"


def apply(memory_limit_mb: int, tmp_root: str | None = None) -> Path:
    """Limits this process; returns its temporary directory.  ``memory_limit_mb`` 0 sets no memory limit."""
    if memory_limit_mb > 0:
        limit_address_space(memory_limit_mb * MIB)
    return private_tmpdir(Path(tmp_root or tempfile.gettempdir()) / TMP_SUBDIRECTORY)


def limit_address_space(limit_bytes: int) -> None:
    """Lowers the soft and hard ``RLIMIT_AS`` to ``limit_bytes`` (never raises a lower one already set)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit_bytes = min(limit_bytes, hard)
    if soft != resource.RLIM_INFINITY and soft < limit_bytes:
        return
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    log.info("pool process %d: address space limited to %d MiB", os.getpid(), limit_bytes // MIB)


def private_tmpdir(root: Path) -> Path:
    """``root/<pid>``, made this process's temporary directory, after removing those of dead processes."""
    root.mkdir(parents=True, exist_ok=True)
    remove_stale(root)
    directory = root / str(os.getpid())
    shutil.rmtree(directory, ignore_errors=True)  # a dead process's, whose pid came back
    directory.mkdir(mode=0o700)
    tempfile.tempdir = str(directory)
    os.environ["TMPDIR"] = str(directory)  # for the engines' own child processes
    return directory


def remove_stale(root: Path) -> None:
    for entry in root.iterdir():
        if entry.name.isdigit() and not _alive(int(entry.name)) and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
