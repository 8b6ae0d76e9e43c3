"""The files of secrets the settings name (API keys, webhook secrets): one entry a line, ``#`` comments.

Both are read once, at start; what cannot be read stops the process with an
error that says why and never repeats the file's content.
"""

from __future__ import annotations

from pathlib import Path


def numbered_lines(path: str, error: type[ValueError]) -> list[tuple[int, str]]:
    """Each line of the file at ``path`` that holds more than a comment, stripped, with its number
    (from 1); a file that cannot be read, or is not UTF-8, raises ``error`` saying so."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise error("it is not UTF-8 text") from None
    except OSError as failure:
        raise error(f"it cannot be read: {failure.strerror or failure}") from None
    # No tenant, digest, policy or base64 secret holds a '#'.
    lines = ((number, line.split("#", 1)[0].strip()) for number, line in enumerate(text.splitlines(), 1))
    return [(number, content) for number, content in lines if content]
