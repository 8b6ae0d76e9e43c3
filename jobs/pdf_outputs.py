"""The kinds of searchable PDF a job can be asked for: its output type, and how hard its images are compressed.

A job's searchable PDF is one of a few *variants*: a plain PDF or a PDF/A-2b
(``output_type``), with its images as they came or optimised losslessly or
lossily (``optimize``, OCRmyPDF's levels 0, 1 and 2).  Each variant is built
on its own and kept on its own beside the job's result, so asking for a PDF/A
after the plain PDF builds the PDF/A once, and the plain one is still there.
A variant has a short name that the store keys it by: ``pdf`` (the default,
what a job with neither option gets), ``pdfa``, ``pdf-o1``, ``pdfa-o2``...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

PDF, PDFA = "pdf", "pdfa"
#: The output types a job or a request may name: a plain PDF, or PDF/A-2b.
OUTPUT_TYPES = (PDF, PDFA)
#: OCRmyPDF's optimisation levels: none, lossless, lossy (JPEG at a stated quality).
OPTIMIZE_LEVELS = (0, 1, 2)


@dataclass(frozen=True)
class PdfOutput:
    """One variant of a job's searchable PDF."""

    output_type: str = PDF
    optimize: int = 0

    def __post_init__(self) -> None:
        if self.output_type not in OUTPUT_TYPES:
            raise ValueError(f"output_type must be one of {', '.join(OUTPUT_TYPES)}, not {self.output_type!r}")
        if type(self.optimize) is not int or self.optimize not in OPTIMIZE_LEVELS:  # 1.0 would name no variant
            raise ValueError(f"optimize must be one of 0, 1, 2, not {self.optimize!r}")

    @property
    def name(self) -> str:
        """The variant's name: its output type, and its optimisation level unless 0."""
        return self.output_type if not self.optimize else f"{self.output_type}-o{self.optimize}"

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_OUTPUT

    @classmethod
    def of_options(cls, options: Mapping[str, object] | None, **overrides: object) -> PdfOutput:
        """The variant a job's options ask for (each absent one at its default), ``overrides`` (not None) first."""
        chosen = {name: (options or {}).get(name) for name in ("output_type", "optimize")}
        chosen.update({name: value for name, value in overrides.items() if value is not None})
        output_type = chosen["output_type"] if chosen["output_type"] is not None else PDF
        optimize = chosen["optimize"] if chosen["optimize"] is not None else 0
        return cls(str(output_type), optimize)  # type: ignore[arg-type]  # checked by __post_init__

    @classmethod
    def named(cls, name: str) -> PdfOutput:
        """The variant ``name`` names (``ValueError`` for a name no variant has)."""
        for variant in ALL_OUTPUTS:
            if variant.name == name:
                return variant
        raise ValueError(f"no searchable PDF variant is named {name!r}")


DEFAULT_OUTPUT = PdfOutput()
#: Every variant, the default first: what the store deletes when a job's PDFs go.
ALL_OUTPUTS = tuple(PdfOutput(output_type, level) for output_type in OUTPUT_TYPES for level in OPTIMIZE_LEVELS)
