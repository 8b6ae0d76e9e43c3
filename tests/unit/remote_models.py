"""Remote models in the process-wide registry for one test, and gone again after it.

``install_remote_models`` changes ``MODELS`` and ``MODEL_NAMES`` for the whole
process, as it should at a process's start; a test that installs one puts
both back, and drops any adapter built meanwhile, so that no other test
sees its models.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from jobs import registry
from workers import adapters


@contextmanager
def registry_restored() -> Iterator[None]:
    models, names = dict(registry.MODELS), list(registry.MODEL_NAMES)
    try:
        yield
    finally:
        registry.MODELS.clear()
        registry.MODELS.update(models)
        registry.MODEL_NAMES[:] = names
        for name in [name for name in adapters._cache if name not in models]:
            del adapters._cache[name]
