"""A block's lines joined into one paragraph, with the words a line's end hyphenated joined back.

Lines are joined with a space.  A line that ends in a hyphen after a letter,
followed by a line that starts with a lower-case letter, is a word cut in
two by the typesetter or by an ordinary hyphenated compound that happened to
fall at the end of a line; the two cannot be told apart by their look.  So the
whole word decides: ``exam-`` + ``ple`` is ``example`` when the word (lower
case, its punctuation aside) is known, either to the rest of the document
(``known_words``, which the caller collects from the document's other lines)
or to the dictionary; otherwise the hyphen stays and no space is put in
(``self-`` + ``contained`` is ``self-contained``, ``MIME-`` + ``Info`` is
``MIME-Info``, ``3-`` + ``7`` is ``3-7``).

The dictionary is ``/usr/share/dict/words`` (Debian's ``wamerican``: about
100,000 English words with their plurals and tenses), read once per process
on first use; without it only the document's own words count.  Words of
other languages are joined back only when the document itself holds them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from documents.orientation import LoadedOnce

log = logging.getLogger(__name__)

DICTIONARY = Path("/usr/share/dict/words")
#: What a line's end is hyphenated with: a hyphen-minus, a soft hyphen, a hyphen, a not sign (old typesetting).
HYPHENS = "-\u00ad\u2010\u00ac"
_CUT = re.compile(rf"(\w+)[{HYPHENS}]$")
_REST = re.compile(r"^([a-z]\w*)(.*)$", re.DOTALL)


def _load_dictionary() -> bytes:
    """The dictionary's words in lower case, one a line between newlines: a word is known when ``\nword\n`` is
    in it.  A megabyte of bytes where a set of its 100,000 strings held 13 MB in every worker process, for a
    look-up made a few times a page (at a hyphen that ends a line), which a substring search does in well
    under a millisecond."""
    try:
        words = DICTIONARY.read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        log.info("no dictionary at %s: hyphenated words are joined back only from the document's own", DICTIONARY)
        return b"\n"  # not empty: an empty value would be loaded again on every call
    return ("\n" + "\n".join(sorted({w.lower() for w in words})) + "\n").encode()


#: The dictionary of this process, in lower case (``_load_dictionary``).
dictionary: LoadedOnce[bytes] = LoadedOnce(_load_dictionary)


def in_dictionary(word: str) -> bool:
    """Whether the dictionary knows ``word`` (lower case)."""
    return bool(word) and "\n" not in word and f"\n{word}\n".encode() in dictionary()


def words_of(texts: Iterable[str]) -> frozenset[str]:
    """The words (lower case, letters only) of ``texts``: what a document knows, for ``join``'s ``known_words``."""
    return frozenset(w.lower() for text in texts for w in re.findall(r"[^\W\d_]{2,}", text))


def join(lines: Sequence[str], known_words: frozenset[str] = frozenset()) -> str:
    """``lines`` as one paragraph, hyphenated words joined back where the document or the dictionary knows them."""
    out = ""
    for line in (line.strip() for line in lines):
        if not line:
            continue
        if not out:
            out = line
            continue
        cut = _CUT.search(out)
        if cut:
            rest = _REST.match(line)
            whole = (cut.group(1) + rest.group(1)).lower() if rest else None
            known = whole is not None and (whole in known_words or in_dictionary(whole))
            out = out[: cut.end(1) if known else cut.end()] + line
            continue
        out = f"{out} {line}"
    return out
