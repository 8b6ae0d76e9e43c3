"""The OCR hosts: ``celery -A workers worker`` consumes every model's queue (``-Q ocr.<model>,...`` narrows a host)."""

from workers import tasks  # noqa: F401  (registers the run task)
from workers.celery_app import app

__all__ = ["app"]
