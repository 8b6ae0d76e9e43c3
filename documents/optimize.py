"""The images of a searchable PDF made smaller, at OCRmyPDF's optimisation levels."""

from __future__ import annotations

import pikepdf


def optimize(pdf: pikepdf.Pdf, level: int) -> None:
    """Re-encodes the PDF's images in place at ``level`` (0: untouched)."""
