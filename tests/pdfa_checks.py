"""What a PDF/A-2b output is held to, point by point, read with pikepdf from the saved bytes.

No PDF/A validator installs here, so each requirement ocrgw makes a PDF/A
meet is checked on its own: ``pdfa_failures`` names every one a document
misses (none for a PDF/A output), and ``claims`` says which conformance a
document's metadata claims (none for a plain output).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pikepdf
from pikepdf.models.metadata import decode_pdf_date
from PIL import ImageCms

# The document information entries PDF/A-2 holds to their XMP equivalents (ISO 19005-2, 6.6.2.3.1).
INFO_TO_XMP = {
    "/Title": "dc:title",
    "/Author": "dc:creator",
    "/Subject": "dc:description",
    "/Keywords": "pdf:Keywords",
    "/Creator": "xmp:CreatorTool",
    "/Producer": "pdf:Producer",
    "/CreationDate": "xmp:CreateDate",
    "/ModDate": "xmp:ModifyDate",
}
FONT_FILES = ("/FontFile", "/FontFile2", "/FontFile3")
# A claim as a PDF/A-1b document with a PDF/UA claim writes it: attributes of its rdf:Description.
CLAIMING_XMP = b"""<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"
    xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/" pdfaid:part="1" pdfaid:conformance="B" pdfuaid:part="1"/>
  <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
   <dc:title><rdf:Alt><rdf:li xml:lang="x-default">Shared MIME-info Database</rdf:li></rdf:Alt></dc:title>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>"""


def opened(data: bytes) -> pikepdf.Pdf:
    return pikepdf.open(io.BytesIO(data))


def claims(data: bytes) -> dict[str, str]:
    """The conformance claims of the document's metadata: PDF/A's, PDF/UA's and PDF/X's."""
    with opened(data) as pdf:
        if "/Metadata" not in pdf.Root:
            info = pdf.trailer.get("/Info")
            if isinstance(info, pikepdf.Dictionary) and "/GTS_PDFXVersion" in info:
                return {"Info /GTS_PDFXVersion": str(info.GTS_PDFXVersion)}
            return {}
        raw = pdf.Root.Metadata.read_bytes()
        meta = pdf.open_metadata()
        named = ("pdfaid:part", "pdfaid:conformance", "pdfuaid:part", "pdfxid:GTS_PDFXVersion")
        found = {key: str(meta[key]) for key in named if key in meta}
        info = pdf.trailer.get("/Info")
        if isinstance(info, pikepdf.Dictionary) and "/GTS_PDFXVersion" in info:
            found["Info /GTS_PDFXVersion"] = str(info.GTS_PDFXVersion)
    for namespace in (b"http://www.aiim.org/pdfa/ns/id/", b"http://www.aiim.org/pdfua/ns/id/", b"pdfx/ns/id/"):
        if namespace in raw and not found:
            found["namespace"] = namespace.decode()  # a claim pikepdf could not read is still a claim
    return found


def claiming_pdfa(document: bytes) -> bytes:
    """The document as a PDF/A-1b input would come: its XMP claim (and a PDF/UA one) and an sRGB output intent."""
    with opened(document) as pdf:
        pdf.Root.Metadata = pdf.make_stream(CLAIMING_XMP, Type=pikepdf.Name.Metadata, Subtype=pikepdf.Name.XML)
        profile = pdf.make_stream(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes(), N=3)
        intent = pikepdf.Dictionary(
            Type=pikepdf.Name.OutputIntent,
            S=pikepdf.Name.GTS_PDFA1,
            DestOutputProfile=profile,
            OutputConditionIdentifier=pikepdf.String("sRGB"),
        )
        pdf.Root.OutputIntents = [intent]
        buffer = io.BytesIO()
        pdf.save(buffer)
        return buffer.getvalue()


def pdfa_failures(data: bytes) -> list[str]:
    """Every PDF/A-2b requirement ocrgw promises that the document misses (empty: it meets them all)."""
    failures: list[str] = []
    if not data.startswith(b"%PDF-1."):
        failures.append("header: not %PDF-1.n")
    with opened(data) as pdf:
        failures += _trailer(pdf)
        failures += _metadata(pdf)
        failures += _output_intent(pdf)
        failures += _fonts(pdf)
        failures += _actions(pdf)
        failures += _transparency(pdf)
    return failures


def _trailer(pdf: pikepdf.Pdf) -> list[str]:
    failures = []
    if pdf.is_encrypted or "/Encrypt" in pdf.trailer:
        failures.append("encryption: the document is encrypted")
    ids = pdf.trailer.get("/ID")
    if not isinstance(ids, pikepdf.Array) or len(ids) != 2 or not all(isinstance(i, pikepdf.String) for i in ids):
        failures.append("document ID: the trailer has no /ID of two strings")
    return failures


def _metadata(pdf: pikepdf.Pdf) -> list[str]:
    stream = pdf.Root.get("/Metadata")
    if not isinstance(stream, pikepdf.Stream):
        return ["metadata: the catalog has no XMP metadata stream"]
    failures = []
    if "/Filter" in stream:
        failures.append("metadata: the XMP stream is filtered")
    if stream.get("/Type") != pikepdf.Name.Metadata or stream.get("/Subtype") != pikepdf.Name.XML:
        failures.append("metadata: the stream is not /Type /Metadata /Subtype /XML")
    meta = pdf.open_metadata()
    if (meta.get("pdfaid:part"), meta.get("pdfaid:conformance")) != ("2", "B"):
        failures.append(f"metadata: claims {meta.get('pdfaid:part')}{meta.get('pdfaid:conformance')}, not 2B")
    info = pdf.trailer.get("/Info")
    for key, prefixed in INFO_TO_XMP.items():
        value = info.get(key) if isinstance(info, pikepdf.Dictionary) else None
        if value is None:
            continue
        if not _agree(key, str(value), meta.get(prefixed)):
            failures.append(f"metadata: Info {key} {str(value)!r} and XMP {prefixed} {meta.get(prefixed)!r} differ")
    return failures


def _agree(key: str, info: str, xmp: Any) -> bool:
    if xmp is None:
        return False
    if key in ("/CreationDate", "/ModDate"):
        return decode_pdf_date(info) == datetime.fromisoformat(str(xmp))
    if key == "/Author":
        return isinstance(xmp, list) and xmp == [info]
    return str(xmp) == info


def _output_intent(pdf: pikepdf.Pdf) -> list[str]:
    intents = [
        intent
        for intent in pdf.Root.get("/OutputIntents", [])
        if isinstance(intent, pikepdf.Dictionary) and intent.get("/S") == pikepdf.Name.GTS_PDFA1
    ]
    if not intents:
        return ["output intent: none of subtype GTS_PDFA1"]
    profile = intents[0].get("/DestOutputProfile")
    if not isinstance(profile, pikepdf.Stream):
        return ["output intent: no DestOutputProfile"]
    data = profile.read_bytes()
    try:
        icc = ImageCms.ImageCmsProfile(io.BytesIO(data)).profile
    except (OSError, ImageCms.PyCMSError):
        return ["output intent: the profile is no ICC profile"]
    failures = []
    if icc.xcolor_space.strip() != "RGB" or profile.get("/N") != 3:
        failures.append(f"output intent: a {icc.xcolor_space.strip()} profile with N {profile.get('/N')}, not sRGB")
    if data[8] > 4:
        failures.append(f"output intent: ICC version {data[8]}, newer than PDF/A-2 allows")
    if any(intent.get("/DestOutputProfile") != profile for intent in intents[1:]):
        failures.append("output intent: the PDF/A output intents have different profiles")
    return failures


def _fonts(pdf: pikepdf.Pdf) -> list[str]:
    failures = []
    for number, font in _fonts_used(pdf):
        name = str(font.get("/BaseFont", "?"))
        if font.get("/Subtype") == pikepdf.Name.Type3:
            continue
        if font.get("/Subtype") == pikepdf.Name.Type0:
            if not isinstance(font.get("/ToUnicode"), pikepdf.Stream):
                failures.append(f"fonts: page {number}'s {name} has no ToUnicode map")
            described = [d for d in font.get("/DescendantFonts", []) if isinstance(d, pikepdf.Dictionary)]
        else:
            described = [font]
        for descendant in described or [pikepdf.Dictionary()]:
            descriptor = descendant.get("/FontDescriptor")
            if not isinstance(descriptor, pikepdf.Dictionary) or not any(k in descriptor for k in FONT_FILES):
                failures.append(f"fonts: page {number}'s {name} is not embedded")
    return failures


def _fonts_used(pdf: pikepdf.Pdf) -> Iterator[tuple[int, pikepdf.Dictionary]]:
    for number, page in enumerate(pdf.pages, start=1):
        pending: list[Any] = [page.obj.get("/Resources")]
        for annotation in page.obj.get("/Annots", []):
            appearance = annotation.get("/AP") if isinstance(annotation, pikepdf.Dictionary) else None
            if isinstance(appearance, pikepdf.Dictionary):
                for entry in appearance.values():
                    states = entry.values() if isinstance(entry, pikepdf.Dictionary) else [entry]
                    pending += [s.get("/Resources") for s in states if isinstance(s, pikepdf.Stream)]
        seen: set[tuple[int, int]] = set()
        while pending:
            resources = pending.pop()
            if not isinstance(resources, pikepdf.Dictionary):
                continue
            if resources.is_indirect:
                if resources.objgen in seen:
                    continue
                seen.add(resources.objgen)
            for font in resources.get("/Font", {}).values():
                if isinstance(font, pikepdf.Dictionary):
                    yield number, font
                    pending.append(font.get("/Resources"))
            for xobject in resources.get("/XObject", {}).values():
                pending.append(xobject.get("/Resources"))
            for pattern in resources.get("/Pattern", {}).values():
                pending.append(pattern.get("/Resources"))


def _actions(pdf: pikepdf.Pdf) -> list[str]:
    failures = []
    names = pdf.Root.get("/Names")
    if isinstance(names, pikepdf.Dictionary) and "/JavaScript" in names:
        failures.append("JavaScript: the catalog's name tree has a JavaScript tree")
    for obj in pdf.objects:
        if not isinstance(obj, pikepdf.Dictionary | pikepdf.Stream):
            continue
        if obj.get("/S") == pikepdf.Name.JavaScript or "/JS" in obj:
            failures.append(f"JavaScript: object {obj.objgen} is a JavaScript action")
        if "/AA" in obj:
            failures.append(f"JavaScript: object {obj.objgen} has additional actions")
        for key in ("/OpenAction", "/A"):
            action = obj.get(key)
            if not isinstance(action, pikepdf.Dictionary):
                continue
            scripted = action.get("/S") == pikepdf.Name.JavaScript or "/JS" in action
            if scripted and not action.is_indirect:  # an indirect one is an object of its own, checked as such
                failures.append(f"JavaScript: object {obj.objgen}'s {key} is a JavaScript action")
    return failures


def _transparency(pdf: pikepdf.Pdf) -> list[str]:
    failures = []
    for obj in pdf.objects:
        group = obj.get("/Group") if isinstance(obj, pikepdf.Dictionary | pikepdf.Stream) else None
        if isinstance(group, pikepdf.Dictionary) and group.get("/S") == pikepdf.Name.Transparency:
            failures.append(f"transparency: object {obj.objgen} has a transparency group")
    return failures


def image_streams(data: bytes) -> list[bytes]:
    """The raw (still encoded) bytes of every image XObject the pages draw, page by page."""
    with opened(data) as pdf:
        return [
            xobject.read_raw_bytes()
            for page in pdf.pages
            for xobject in page.obj.Resources.get("/XObject", pikepdf.Dictionary()).values()
            if xobject.get("/Subtype") == pikepdf.Name.Image
        ]
