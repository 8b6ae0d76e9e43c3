"""The OCR hosts: ``celery -A workers worker -Q ocr.<model>,...``."""

from workers.celery_app import app
from workers import tasks  # noqa: F401  (registers the run task)

__all__ = ["app"]
