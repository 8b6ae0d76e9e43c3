"""The catalogue of OCR models: what the gateway accepts and where each runs.

The gateway validates against this table without importing any engine; the
workers map each name to an adapter module.
"""

from dataclasses import dataclass

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/tiff"})
DOCUMENT_TYPES = IMAGE_TYPES | {"application/pdf"}


@dataclass(frozen=True)
class Model:
    name: str
    engine: str
    location: str
    content_types: frozenset[str]

    @property
    def queue(self) -> str:
        """The Celery queue that the workers for this model consume."""
        return f"ocr.{self.name}"


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model("tesseract", "Tesseract 5", "on_prem", DOCUMENT_TYPES),
        Model("paddleocr", "PP-OCRv4 on ONNX Runtime", "on_prem", DOCUMENT_TYPES),
        Model("echo", "echo (returns a text/plain payload)", "on_prem", frozenset({"text/plain"})),
    )
}

DEFAULT_MODEL = "tesseract"


def queue_for(model: str) -> str:
    return MODELS[model].queue
