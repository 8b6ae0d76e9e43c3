"""Former home of the model catalogue, now ``jobs.registry``.

Re-exports what modules outside the gateway and the workers' adapter
lookup still import from here (``jobs.config``, ``workers.documents``,
``bench``); new code imports ``jobs.registry``.
"""

from jobs.registry import DEFAULT_MODEL, DOCUMENT_TYPES, IMAGE_TYPES, MODELS, Model


def queue_for(model: str) -> str:
    return MODELS[model].queue


__all__ = ["DEFAULT_MODEL", "DOCUMENT_TYPES", "IMAGE_TYPES", "MODELS", "Model", "queue_for"]
