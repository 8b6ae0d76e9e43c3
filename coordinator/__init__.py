"""The coordinator: ``celery -A coordinator worker -Q coordinator`` runs the sweep,
``celery -A coordinator beat`` schedules it."""

from workers.celery_app import app
from coordinator import tasks  # noqa: F401  (registers the sweep and its beat entry)

__all__ = ["app"]
