"""The coordinator: ``celery -A coordinator worker -Q coordinator`` runs the sweep,
``celery -A coordinator beat`` schedules it."""

from coordinator import tasks  # noqa: F401  (registers the sweep and its beat entry)
from workers.celery_app import app

__all__ = ["app"]
