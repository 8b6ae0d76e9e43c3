"""An earlier invisible text layer, taken off a page so that a new one can take its place.

A page OCRed before (by OCRmyPDF, by a scanner's software, by ocrgw) carries
its words as text drawn in render mode 3, invisible (PDF 1.7, 9.3.6): the
words a search finds, over a picture of them.  OCRing that page again and
adding a second layer would make every search find its words twice, so the
old layer goes first: the text-showing operators (``Tj``, ``TJ``, ``'``,
``"``) drawn while the render mode is 3 are dropped from the page's content
and from the form XObjects it draws, and nothing else.  Text in any other
mode is visible, or clips what follows (modes 4 to 7), and stays: a page's
visible text is never removed.

The render mode is part of the graphics state: ``q`` saves it, ``Q``
restores it, ``BT`` and ``ET`` leave it as it was, and a form XObject starts
from the mode of the ``Do`` that draws it.  A dropped ``'`` still moves to
the next line, and a dropped ``"`` still sets the spacing it sets, so the
text after it stays where it was.  A dropped ``Tj`` would move the text that
follows it in the same line (a show operator advances the text position by
the width of what it shows, which only the font knows); so an invisible
string followed on its line by visible text is kept, the one case where old
invisible text stays.  OCR layers draw their words apart from the page's own
text, so this case does not arise in them.

Only a content stream that loses something is written again (a page's
content in several streams is read as one, and its streams written one by
one); every other stream, the images and the fonts keep their bytes.  A form
XObject is edited where it is, once, read in the mode of the first ``Do``
that draws it: a form that other pages draw too loses its invisible text on
them as well (their visible text stays).  Annotations' appearances are not
page content and keep what they have.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pikepdf

from documents.text_layer import INVISIBLE_MODE

_SHOW = frozenset({"Tj", "TJ", "'", '"'})
#: Operators after which a text's position no longer depends on what was shown before it.
_REPOSITION = frozenset({"BT", "ET", "Td", "TD", "Tm", "T*", "'", '"'})
#: How deep form XObjects may draw each other before the rest is left as it is.
_MAX_FORM_DEPTH = 12


def remove_invisible_text(pdf: pikepdf.Pdf, page: pikepdf.Page) -> int:
    """Drops the text the page draws in render mode 3, in its content and in its forms; how many strings went."""
    removal = _Removal(pdf)
    removed = removal.rewrite(page.obj, page.obj.get("/Resources"), initial_mode=0, depth=0)
    return removed + removal.in_forms


class _Removal:
    def __init__(self, pdf: pikepdf.Pdf) -> None:
        self._pdf = pdf
        self._seen_forms: set[tuple[int, int]] = set()
        self.in_forms = 0

    def rewrite(self, owner: pikepdf.Object, resources: Any, initial_mode: float, depth: int) -> int:
        """Rewrites ``owner``'s content streams (a page's, or a form XObject's one) that draw invisible strings."""
        streams = _content_streams(owner)
        try:
            parsed = [pikepdf.parse_content_stream(stream) for stream in streams]
        except pikepdf.PdfError:
            return 0  # content qpdf cannot parse is left as it is: PDFium may still draw it
        # The streams of a page are one content (PDF 1.7, 7.8.2): the mode flows from one into the next.
        instructions = [instruction for stream in parsed for instruction in stream]
        mode_stack = [initial_mode]
        shown: dict[int, bool] = {}  # index of a string shown -> whether it is invisible
        for index, instruction in enumerate(instructions):
            operator = _operator(instruction)
            if operator == "q":
                mode_stack.append(mode_stack[-1])
            elif operator == "Q" and len(mode_stack) > 1:
                mode_stack.pop()
            elif operator == "Tr" and (mode := _number(instruction.operands)) is not None:
                mode_stack[-1] = mode
            elif operator in _SHOW:
                shown[index] = mode_stack[-1] == INVISIBLE_MODE
            elif operator == "Do" and depth < _MAX_FORM_DEPTH:
                self._form(resources, instruction.operands, mode_stack[-1], depth)
        dropped = _droppable(instructions, shown)
        if not dropped:
            return 0
        start = 0
        for position, stream_instructions in enumerate(parsed):
            indices = range(start, start + len(stream_instructions))
            start += len(stream_instructions)
            if dropped.isdisjoint(indices):
                continue  # kept byte for byte
            content = pikepdf.unparse_content_stream(
                [part for index in indices for part in _without(instructions[index], index in dropped)]
            )
            if isinstance(owner, pikepdf.Stream):
                owner.write(content)  # its filter goes with its old data: the saved PDF compresses it again
            elif isinstance(owner.get("/Contents"), pikepdf.Array):
                # A new stream, not the old one written over: another page may draw that one too.
                owner.Contents[position] = pikepdf.Stream(self._pdf, content)
            else:
                owner.Contents = pikepdf.Stream(self._pdf, content)
        return len(dropped)

    def _form(self, resources: Any, operands: Any, mode: float, depth: int) -> None:
        """Takes the invisible text off the form XObject ``Do`` draws, once per form."""
        if not isinstance(resources, pikepdf.Dictionary) or len(operands) != 1:
            return
        xobjects = resources.get("/XObject")
        if not isinstance(xobjects, pikepdf.Dictionary):
            return
        form = xobjects.get(str(operands[0]))
        if not isinstance(form, pikepdf.Stream) or form.get("/Subtype") != pikepdf.Name.Form:
            return
        if form.is_indirect:
            if form.objgen in self._seen_forms:
                return
            self._seen_forms.add(form.objgen)
        # A form without resources of its own uses those of what draws it (PDF 1.7, 7.8.3).
        own = form.get("/Resources")
        self.in_forms += self.rewrite(form, own if isinstance(own, pikepdf.Dictionary) else resources, mode, depth + 1)


def _content_streams(owner: pikepdf.Object) -> list[pikepdf.Stream]:
    if isinstance(owner, pikepdf.Stream):
        return [owner]
    contents = owner.get("/Contents")
    if isinstance(contents, pikepdf.Array):
        streams = [stream for stream in contents if isinstance(stream, pikepdf.Stream)]
        # Anything but streams there is broken content: left as it is.
        return streams if len(streams) == len(contents) else []
    return [contents] if isinstance(contents, pikepdf.Stream) else []


def _droppable(instructions: list[Any], shown: dict[int, bool]) -> set[int]:
    """The invisible strings that can go without moving visible text: read backwards, so that a string known
    to be followed on its line by a kept one is kept too (it moves that one's start)."""
    dropped: set[int] = set()
    displaces = False
    for index in range(len(instructions) - 1, -1, -1):
        operator = _operator(instructions[index])
        if index in shown:
            if shown[index] and not displaces:
                dropped.add(index)
            else:
                displaces = True
        if operator in _REPOSITION:
            displaces = False
    return dropped


def _without(instruction: Any, drop: bool) -> Iterator[Any]:
    """The instruction, or what is left of it once its string is dropped."""
    if not drop:
        yield instruction
        return
    operator = _operator(instruction)
    if operator == '"' and len(instruction.operands) == 3:
        word_spacing, char_spacing, _ = instruction.operands
        yield pikepdf.ContentStreamInstruction([word_spacing], pikepdf.Operator("Tw"))
        yield pikepdf.ContentStreamInstruction([char_spacing], pikepdf.Operator("Tc"))
    if operator in ("'", '"'):
        yield pikepdf.ContentStreamInstruction([], pikepdf.Operator("T*"))


def _operator(instruction: Any) -> str:
    if isinstance(instruction, pikepdf.ContentStreamInlineImage):
        return "INLINE IMAGE"
    return str(instruction.operator)


def _number(operands: Any) -> float | None:
    if len(operands) != 1:
        return None
    try:
        return float(operands[0])
    except (TypeError, ValueError):
        return None
