"""The OCR hosts: ``celery -A workers worker -Q ocr.<model>,...``."""

from workers import tasks  # noqa: F401  (registers the run task)
from workers.celery_app import app

__all__ = ["app"]
