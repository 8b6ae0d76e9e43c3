"""PDF/A-2b made of a searchable PDF on request, and no PDF/A claim on one made otherwise.

A PDF says it is PDF/A in its XMP metadata (``pdfaid:part`` and
``pdfaid:conformance``), and a searchable copy of a PDF/A document used to
keep the claim of its input although it was edited since.  A plain output
now withdraws it (``withdraw_claims``): the ``pdfaid`` properties go, and so
do ``pdfuaid``'s (a PDF/UA claim: the text layer is not tagged) and PDF/X's
(``pdfxid:GTS_PDFXVersion``, and ``GTS_PDFXVersion`` and
``GTS_PDFXConformance`` in the document information: nothing checks the
edited file against PDF/X), while the rest of the metadata, and any output
intent, stays as it was.  A PDF/A output withdraws the PDF/UA and PDF/X
claims alike.

``make_pdfa`` makes the PDF (its pages grafted, its images final) PDF/A-2b
(ISO 19005-2, level B: what is drawn is preserved) in place, before it is
saved.  It keeps the pages and the image bytes wherever the standard allows
them and converts only what the standard forbids:

- XMP metadata claiming ``pdfaid:part`` 2 and ``pdfaid:conformance`` B, its
  title, author, subject, keywords, creator tool, producer and dates the
  document information dictionary's, which is the source (its empty entries
  dropped, its modification date now, its creation date the XMP's, or now,
  if it had none or one no reader can read, an entry the XMP cannot hold
  dropped); the metadata stream stays unfiltered, as the standard asks.
- An output intent ``GTS_PDFA1`` with an sRGB ICC profile that Little CMS
  makes here (version 4.2, as ICC.1:2004-10 which the standard cites), unless
  the document has a PDF/A output intent with an RGB or CMYK profile already.
  A page that paints in the device colour space the output intent does not
  match (DeviceCMYK under an RGB intent, DeviceRGB under a CMYK one: an
  image's colour space, or a colour operator of a content stream) cannot be
  made PDF/A without converting its colours, which this does not do: the
  document is refused with the page and the reason; so is a page with a
  content stream that cannot be parsed, whose colours cannot be checked.
- Every font embedded: the glyphless font of the text layer is
  (``documents.invisible_text``, with its ToUnicode map); a page's own font
  that is not cannot be embedded without its program, which ocrgw does not
  have: the document is refused with the font's name (OCRmyPDF asks
  Ghostscript to substitute one; that draws the page again).
- No JavaScript and no action the standard forbids (JavaScript, Launch,
  Sound, Movie, ResetForm, ImportData, Hide, SetOCGState, Rendition, Trans,
  GoTo3DView, named actions other than page moves): removed from the open
  action, outlines, annotations and their chains; the document's JavaScript
  name tree and every additional-actions dictionary (catalog, page,
  annotation, form field) removed; an XFA form removed and
  ``NeedAppearances`` cleared.  Annotations of kinds the standard forbids
  (3D, Sound, Screen, Movie) are removed; every other annotation but a
  pop-up is made printable and visible, as the standard asks.
- No transparency group: a page's (and its forms') ``/Group`` of subtype
  Transparency is removed where the page draws nothing transparent (no soft
  mask, no constant alpha below 1, no blend mode but Normal), which leaves
  what is drawn as it was.  A page that does draw with transparency keeps
  its groups, which PDF/A-2 allows: removing them would change the page.
- No LZW: a stream compressed with LZWDecode (which PDF/A-2 forbids) is
  stored with Flate when the PDF is saved (qpdf recompresses it), its
  content unchanged.  Images lose ``/Interpolate`` (set false),
  ``/Alternates`` and ``/OPI``.
- Optional content configurations get the ``/Name`` the standard asks for
  and lose ``/AS``.
- No encryption and a document ID: ``documents.searchable_pdf`` saves with
  neither password nor encryption, and qpdf writes the trailer's ``/ID``.

What this does not check (no PDF/A validator is at hand): the font programs'
own contents and their widths against the font dictionaries, embedded files
(PDF/A-2 allows only PDF/A ones), the colour spaces of inline images and of
shadings, ICC profiles embedded in the document, the colour spaces of the
transparency groups a page that draws with transparency keeps, XMP
properties outside the standard's predefined schemas with no extension
schema, annotation appearance streams, transfer functions and halftones,
and the limits of ISO 32000 Annex C (string and name lengths, array sizes).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pikepdf
from pikepdf.models.metadata import decode_pdf_date, encode_pdf_date
from PIL import ImageCms

from jobs.errors import InvalidDocument

PART, CONFORMANCE = "2", "B"
#: The producer a document that names none is given.
PRODUCER = "ocrgw"
#: The output condition of the sRGB output intent, as the ICC registry names it.
SRGB_CONDITION = "sRGB IEC61966-2.1"
# The XMP properties that claim a conformance; withdrawn from a plain output, all but PDF/A's own from a PDF/A.
_PDFA_CLAIMS = ("pdfaid:part", "pdfaid:conformance", "pdfaid:amd", "pdfaid:corr", "pdfaid:rev")
_OTHER_CLAIMS = ("pdfuaid:part", "pdfuaid:amd", "pdfuaid:corr", "pdfuaid:rev", "pdfxid:GTS_PDFXVersion")
# The document information entries PDF/A holds to their XMP equivalents (ISO 19005-2, 6.6.2.3.1).
_INFO_IN_XMP = {
    "/Title": "dc:title",
    "/Author": "dc:creator",
    "/Subject": "dc:description",
    "/Keywords": "pdf:Keywords",
    "/Creator": "xmp:CreatorTool",
    "/Producer": "pdf:Producer",
    "/CreationDate": "xmp:CreateDate",
    "/ModDate": "xmp:ModifyDate",
}
# PDF/X's claims in the document information dictionary.
_INFO_CLAIMS = ("/GTS_PDFXVersion", "/GTS_PDFXConformance")
_FORBIDDEN_ACTIONS = frozenset(
    {
        "/JavaScript",
        "/Launch",
        "/Sound",
        "/Movie",
        "/ResetForm",
        "/ImportData",
        "/Hide",
        "/SetOCGState",
        "/Rendition",
        "/Trans",
        "/GoTo3DView",
    }
)
_ALLOWED_NAMED_ACTIONS = frozenset({"/NextPage", "/PrevPage", "/FirstPage", "/LastPage"})
_FORBIDDEN_ANNOTATIONS = frozenset({"/3D", "/Sound", "/Screen", "/Movie"})
# Annotation flags (ISO 32000-1, 12.5.3): PDF/A asks for Print set and Invisible, Hidden and NoView clear.
_INVISIBLE, _HIDDEN, _PRINT, _NO_VIEW = 1, 2, 4, 32
_FONT_FILES = ("/FontFile", "/FontFile2", "/FontFile3")
# Colour operators and colour spaces of the device spaces an output intent of N components does not match.
_UNMATCHED = {
    3: (frozenset({"k", "K"}), "/DeviceCMYK", "CMYK colour with an RGB output intent"),
    4: (frozenset({"rg", "RG"}), "/DeviceRGB", "RGB colour with a CMYK output intent"),
}


def withdraw_claims(pdf: pikepdf.Pdf) -> None:
    """Removes the document's PDF/A (and PDF/UA, PDF/X) claims from its metadata: it was not made to them."""
    _withdraw_info_claims(pdf)
    if "/Metadata" not in pdf.Root:
        return
    claimed = [claim for claim in (*_PDFA_CLAIMS, *_OTHER_CLAIMS) if claim in pdf.open_metadata(strict=False)]
    if not claimed:
        return  # the metadata as it was
    with pdf.open_metadata(set_pikepdf_as_editor=False, update_docinfo=False, strict=False) as meta:
        for claim in claimed:
            del meta[claim]
    if pdf.open_metadata(strict=False).pdfa_status:  # metadata too broken to edit: none is better than a false one
        del pdf.Root.Metadata


def _withdraw_info_claims(pdf: pikepdf.Pdf) -> None:
    info = pdf.trailer.get("/Info")
    if isinstance(info, pikepdf.Dictionary):
        for key in _INFO_CLAIMS:
            if key in info:
                del info[key]


def make_pdfa(pdf: pikepdf.Pdf, now: datetime | None = None) -> None:
    """Makes the PDF PDF/A-2b in place, converting only what the standard forbids (see the module).

    Raises ``InvalidDocument`` for a document that cannot be made PDF/A
    without drawing its pages again: a font not embedded, a colour space
    its output intent does not match, a content stream that cannot be read.
    """
    now = now or datetime.now(UTC)
    _refuse_unembedded_fonts(pdf)
    components = _output_intent(pdf)
    _refuse_unmatched_colours(pdf, components)
    _remove_actions(pdf)
    _remove_transparency_groups(pdf)
    _clean_images(pdf)
    _name_optional_content(pdf)
    _metadata(pdf, now)


# --- walking the document ------------------------------------------------------------------------


def _pages(pdf: pikepdf.Pdf) -> Iterator[tuple[int, pikepdf.Page]]:
    yield from enumerate(pdf.pages, start=1)


def _drawings(page: pikepdf.Page) -> Iterator[tuple[pikepdf.Object, pikepdf.Dictionary]]:
    """Everything the page draws, each once: the page itself, and each form XObject, pattern and Type 3 font under
    it and each of its annotations' appearance streams, each with the resources it draws with (empty if none)."""
    seen: set[tuple[int, int]] = set()
    pending: list[pikepdf.Object] = [page.obj]
    for annotation in _list(page.obj.get("/Annots")):
        if isinstance(annotation, pikepdf.Dictionary):
            pending.extend(_appearance_streams(annotation))
    while pending:
        holder = pending.pop()
        if holder.is_indirect:
            if holder.objgen in seen:
                continue
            seen.add(holder.objgen)
        resources = _page_resources(holder) if holder.objgen == page.obj.objgen else holder.get("/Resources")
        resources = resources if isinstance(resources, pikepdf.Dictionary) else pikepdf.Dictionary()
        yield holder, resources
        for category in ("/XObject", "/Pattern", "/Font"):
            for child in _values(resources.get(category)):
                drawn = isinstance(child, pikepdf.Stream) and child.get("/Subtype") != pikepdf.Name.Image
                if drawn or (isinstance(child, pikepdf.Dictionary) and "/Resources" in child):
                    pending.append(child)


def _page_resources(page: pikepdf.Object) -> Any:
    """The page's resources, its own or inherited from the page tree above it."""
    node: Any = page
    depth = 0
    while isinstance(node, pikepdf.Dictionary) and "/Resources" not in node and depth < 64:
        node, depth = node.get("/Parent"), depth + 1
    return node.get("/Resources") if isinstance(node, pikepdf.Dictionary) else None


def _appearance_streams(annotation: pikepdf.Dictionary) -> Iterator[pikepdf.Stream]:
    appearances = annotation.get("/AP")
    if not isinstance(appearances, pikepdf.Dictionary):
        return
    for entry in appearances.values():
        if isinstance(entry, pikepdf.Stream):
            yield entry
        elif isinstance(entry, pikepdf.Dictionary):
            yield from (state for state in entry.values() if isinstance(state, pikepdf.Stream))


def _values(value: Any) -> list[Any]:
    return list(value.values()) if isinstance(value, pikepdf.Dictionary) else []


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, pikepdf.Array) else []


def _name(value: Any) -> str:
    return str(value) if isinstance(value, pikepdf.Name) else ""


# --- fonts and colours ------------------------------------------------------------------------


def _refuse_unembedded_fonts(pdf: pikepdf.Pdf) -> None:
    for number, page in _pages(pdf):
        for _, resources in _drawings(page):
            for font in _values(resources.get("/Font")):
                if isinstance(font, pikepdf.Dictionary) and not _embedded(font):
                    name = _name(font.get("/BaseFont"))[1:] or "a font with no name"
                    raise InvalidDocument(
                        f"it cannot be made PDF/A: page {number} uses the font {name}, which the PDF does not embed"
                    )


def _embedded(font: pikepdf.Dictionary) -> bool:
    if font.get("/Subtype") == pikepdf.Name.Type3:  # its glyphs are content streams of the PDF's own
        return True
    if font.get("/Subtype") == pikepdf.Name.Type0:
        descendants = _list(font.get("/DescendantFonts"))
        return bool(descendants) and all(isinstance(d, pikepdf.Dictionary) and _embedded(d) for d in descendants)
    descriptor = font.get("/FontDescriptor")
    return isinstance(descriptor, pikepdf.Dictionary) and any(key in descriptor for key in _FONT_FILES)


def _output_intent(pdf: pikepdf.Pdf) -> int:
    """The PDF/A output intent's number of colour components: the document's own if it has one, else sRGB's."""
    intents = pdf.Root.get("/OutputIntents")
    for intent in _list(intents):
        if isinstance(intent, pikepdf.Dictionary) and intent.get("/S") == pikepdf.Name.GTS_PDFA1:
            profile = intent.get("/DestOutputProfile")
            if isinstance(profile, pikepdf.Stream) and profile.get("/N") in (3, 4):
                # Every PDF/A output intent must carry this very profile: the others point at it too.
                for other in _list(intents):
                    if isinstance(other, pikepdf.Dictionary) and "/DestOutputProfile" in other:
                        other.DestOutputProfile = profile
                return int(profile.N)
    srgb = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.OutputIntent,
            S=pikepdf.Name.GTS_PDFA1,
            OutputConditionIdentifier=pikepdf.String(SRGB_CONDITION),
            RegistryName=pikepdf.String("http://www.color.org"),
            Info=pikepdf.String(SRGB_CONDITION),
            DestOutputProfile=pikepdf.Stream(pdf, srgb_profile(), N=3),
        )
    )
    kept = [intent for intent in _list(intents) if "/DestOutputProfile" not in intent]
    pdf.Root.OutputIntents = pikepdf.Array([srgb, *kept])
    return 3


def srgb_profile() -> bytes:
    """An sRGB ICC profile as Little CMS makes it, its version given as 4.2 (ICC.1:2004-10, which PDF/A-2 cites).

    Little CMS writes version 4.4, whose tags are those of 4.2; the
    profile's ID (an MD5 of the profile) is zeroed, which the ICC allows
    and which the changed version would otherwise make wrong.
    """
    data = bytearray(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())
    data[8:12] = bytes((4, 0x20, 0, 0))
    data[84:100] = bytes(16)
    return bytes(data)


def _refuse_unmatched_colours(pdf: pikepdf.Pdf, components: int) -> None:
    operators, space, what = _UNMATCHED[components]
    parsed: set[tuple[int, int]] = set()  # a form drawn on every page is read once
    for number, page in _pages(pdf):
        reason = f"it cannot be made PDF/A: page {number} paints in {what}, which would need its colours converted"
        for holder, resources in _drawings(page):
            for xobject in _values(resources.get("/XObject")):
                if isinstance(xobject, pikepdf.Stream) and _uses_space(xobject.get("/ColorSpace"), space):
                    raise InvalidDocument(reason)
            for colour_space in _values(resources.get("/ColorSpace")):
                if _uses_space(colour_space, space):
                    raise InvalidDocument(reason)
            if holder.objgen != page.obj.objgen and (holder.objgen in parsed or not isinstance(holder, pikepdf.Stream)):
                continue
            parsed.add(holder.objgen)
            if _paints_with(holder, operators, space, number):
                raise InvalidDocument(reason)


def _uses_space(colour_space: Any, space: str) -> bool:
    if isinstance(colour_space, pikepdf.Name):
        return str(colour_space) == space
    if isinstance(colour_space, pikepdf.Array) and len(colour_space) > 1:
        family = _name(colour_space[0])
        if family == "/Indexed":
            return _uses_space(colour_space[1], space)
        if family in ("/Separation", "/DeviceN"):  # drawn in their alternate space when not in the output intent
            return _uses_space(colour_space[2], space) if len(colour_space) > 2 else False
    return False


def _paints_with(content: pikepdf.Object, operators: frozenset[str], space: str, number: int) -> bool:
    try:
        instructions = pikepdf.parse_content_stream(content)
    except pikepdf.PdfError:
        # A viewer draws what comes before the fault, which may be anything: unchecked, it would be a claim unmade.
        raise InvalidDocument(
            f"it cannot be made PDF/A: page {number} has a content stream that cannot be read"
        ) from None
    for instruction in instructions:
        operator = str(instruction.operator)
        if operator in operators:
            return True
        if operator in ("cs", "CS") and instruction.operands and _name(instruction.operands[0]) == space:
            return True
    return False


# --- actions and annotations ---------------------------------------------------------------


def _remove_actions(pdf: pikepdf.Pdf) -> None:
    root = pdf.Root
    names = root.get("/Names")
    if isinstance(names, pikepdf.Dictionary) and "/JavaScript" in names:
        del names.JavaScript
    for holder in (root, *(page.obj for page in pdf.pages)):
        if "/AA" in holder:
            del holder.AA
    if "/OpenAction" in root and isinstance(root.OpenAction, pikepdf.Dictionary):
        if (kept := _allowed(root.OpenAction)) is None:
            del root.OpenAction
        else:
            root.OpenAction = kept
    _clean_outlines(root.get("/Outlines"))
    for page in pdf.pages:
        _clean_annotations(page)
    form = root.get("/AcroForm")
    if isinstance(form, pikepdf.Dictionary):
        if "/XFA" in form:
            del form.XFA
        if "/NeedAppearances" in form:
            form.NeedAppearances = False
        _clean_fields(form.get("/Fields"), set())


def _allowed(action: Any) -> pikepdf.Object | None:
    """The action with every forbidden action of its chain left out (None: no action is left)."""
    if not isinstance(action, pikepdf.Dictionary):
        return None
    following = [_allowed(n) for n in (action.Next if isinstance(action.get("/Next"), pikepdf.Array) else [])]
    if isinstance(action.get("/Next"), pikepdf.Dictionary):
        following = [_allowed(action.Next)]
    kept_following = [n for n in following if n is not None]
    if "/Next" in action:
        del action.Next
    forbidden = _name(action.get("/S")) in _FORBIDDEN_ACTIONS or (
        action.get("/S") == pikepdf.Name.Named and _name(action.get("/N")) not in _ALLOWED_NAMED_ACTIONS
    )
    if forbidden:
        # The first allowed action of the chain takes its place, with the rest after it.
        if not kept_following:
            return None
        first, rest = kept_following[0], kept_following[1:]
        if rest:
            first.Next = pikepdf.Array(rest)
        return first
    if kept_following:
        action.Next = pikepdf.Array(kept_following)
    return action


def _clean_outlines(outlines: Any) -> None:
    seen: set[tuple[int, int]] = set()
    pending = [outlines.get("/First")] if isinstance(outlines, pikepdf.Dictionary) else []
    while pending:
        item = pending.pop()
        if not isinstance(item, pikepdf.Dictionary) or (item.is_indirect and item.objgen in seen):
            continue
        if item.is_indirect:
            seen.add(item.objgen)
        if "/A" in item and (kept := _allowed(item.A)) is None:
            del item.A
        elif "/A" in item:
            item.A = kept
        pending.extend(item.get(key) for key in ("/First", "/Next"))


def _clean_annotations(page: pikepdf.Page) -> None:
    annotations = page.obj.get("/Annots")
    if not isinstance(annotations, pikepdf.Array):
        return
    kept = []
    for annotation in annotations:
        if not isinstance(annotation, pikepdf.Dictionary):
            continue
        if _name(annotation.get("/Subtype")) in _FORBIDDEN_ANNOTATIONS:
            continue
        if "/AA" in annotation:
            del annotation.AA
        if "/A" in annotation and (action := _allowed(annotation.A)) is None:
            del annotation.A
        elif "/A" in annotation:
            annotation.A = action
        if annotation.get("/Subtype") != pikepdf.Name.Popup:
            flags = int(annotation.get("/F", 0)) if isinstance(annotation.get("/F"), int) else 0
            annotation.F = (flags | _PRINT) & ~(_INVISIBLE | _HIDDEN | _NO_VIEW)
        kept.append(annotation)
    if len(kept) != len(annotations):
        page.obj.Annots = pikepdf.Array(kept)


def _clean_fields(fields: Any, seen: set[tuple[int, int]]) -> None:
    for field in _list(fields):
        if not isinstance(field, pikepdf.Dictionary) or (field.is_indirect and field.objgen in seen):
            continue
        if field.is_indirect:
            seen.add(field.objgen)
        if "/AA" in field:
            del field.AA
        _clean_fields(field.get("/Kids"), seen)


# --- transparency, streams, optional content ------------------------------------------------


def _remove_transparency_groups(pdf: pikepdf.Pdf) -> None:
    for _, page in _pages(pdf):
        drawn = list(_drawings(page))
        if any(_draws_transparently(resources) for _, resources in drawn):
            continue  # its groups say how it is composited: removing them would change the page
        for holder, _ in drawn:
            group = holder.get("/Group")
            if isinstance(group, pikepdf.Dictionary) and group.get("/S") == pikepdf.Name.Transparency:
                del holder.Group


def _draws_transparently(resources: pikepdf.Dictionary) -> bool:
    for state in _values(resources.get("/ExtGState")):
        if not isinstance(state, pikepdf.Dictionary):
            continue
        if state.get("/SMask", pikepdf.Name.None_) != pikepdf.Name.None_:
            return True
        if any(key in state and _number(state.get(key)) < 1 for key in ("/CA", "/ca")):
            return True
        blend = state.get("/BM")
        modes = [_name(mode) for mode in (blend if isinstance(blend, pikepdf.Array) else [blend]) if blend is not None]
        if modes and modes[0] not in ("/Normal", "/Compatible"):
            return True
    for xobject in _values(resources.get("/XObject")):
        is_image = isinstance(xobject, pikepdf.Stream) and xobject.get("/Subtype") == pikepdf.Name.Image
        if is_image and ("/SMask" in xobject or _number(xobject.get("/SMaskInData")) > 0):
            return True
    return False


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _clean_images(pdf: pikepdf.Pdf) -> None:
    """Images cleared of what PDF/A forbids on them; their samples are untouched."""
    for obj in pdf.objects:
        if isinstance(obj, pikepdf.Stream) and obj.get("/Subtype") == pikepdf.Name.Image:
            if "/Interpolate" in obj:
                obj.Interpolate = False
            for key in ("/Alternates", "/OPI"):
                if key in obj:
                    del obj[key]


def _name_optional_content(pdf: pikepdf.Pdf) -> None:
    properties = pdf.Root.get("/OCProperties")
    if not isinstance(properties, pikepdf.Dictionary):
        return
    configurations = [properties.get("/D"), *_list(properties.get("/Configs"))]
    for number, configuration in enumerate(configurations, start=1):
        if not isinstance(configuration, pikepdf.Dictionary):
            continue
        if "/Name" not in configuration:
            configuration.Name = pikepdf.String(f"Configuration {number}")
        if "/AS" in configuration:
            del configuration.AS


# --- metadata ------------------------------------------------------------------------------------


def _metadata(pdf: pikepdf.Pdf, now: datetime) -> None:
    """The document information dictionary brought up to date, and the XMP metadata made to agree with it."""
    _withdraw_info_claims(pdf)
    info = pdf.docinfo
    for key in list(info.keys()):
        value = info.get(key)
        if isinstance(value, pikepdf.String) and not str(value).strip():
            del info[key]
    if "/CreationDate" in info and _date(info.CreationDate) is None:
        del info.CreationDate  # a date no reader can read is no date: one is made below
    with pdf.open_metadata(set_pikepdf_as_editor=False, update_docinfo=False, strict=False) as meta:
        if "/CreationDate" not in info:
            created = _xmp_date(meta.get("xmp:CreateDate")) or now
            info.CreationDate = pikepdf.String(encode_pdf_date(created))
        info.ModDate = pikepdf.String(encode_pdf_date(now))
        if "/Producer" not in info:
            info.Producer = pikepdf.String(PRODUCER)
        with warnings.catch_warnings():
            # An entry with no XMP equivalent (/Trapped, a TeX banner) stays in the information, where it may be.
            warnings.simplefilter("ignore", UserWarning)
            meta.load_from_docinfo(info)  # what the information lacks and the XMP has stays
        for key, prefixed in _INFO_IN_XMP.items():
            if key in info and prefixed not in meta:  # a value the XMP cannot hold: the two must agree
                del info[key]
        for claim in (*_PDFA_CLAIMS, *_OTHER_CLAIMS):
            if claim in meta:
                del meta[claim]
        meta["pdfaid:part"] = PART
        meta["pdfaid:conformance"] = CONFORMANCE
        meta["xmp:MetadataDate"] = now.isoformat()


def _date(value: Any) -> datetime | None:
    try:
        return decode_pdf_date(str(value))
    except (ValueError, TypeError):
        return None


def _xmp_date(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value is not None else None
    except ValueError:
        return None
