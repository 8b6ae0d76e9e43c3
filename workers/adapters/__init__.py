"""Adapters by model name, one instance per worker process.

Which class runs a model is the registry's ``Model.adapter`` ("module:Class");
a remote model's adapter is built with the upstream it forwards to.
Engine modules are imported on first use so that a worker serving only the
echo queue never loads ONNX Runtime or OpenCV.  The cache is emptied in a
forked child: an engine built before the fork (its thread pools and locks)
must not be shared with the pool processes.
"""

from __future__ import annotations

import importlib
import os
import threading

from jobs.contract import ErrorCode
from jobs.errors import AdapterError
from jobs.registry import MODELS
from workers.adapters.base import Adapter

_cache: dict[str, Adapter] = {}
_lock = threading.Lock()


def get_adapter(name: str) -> Adapter:
    adapter = _cache.get(name)
    if adapter is not None:
        return adapter
    model = MODELS.get(name)
    if model is None:
        raise AdapterError(f"no OCR adapter named {name!r}", code=ErrorCode.UNKNOWN_MODEL)
    with _lock:
        if name not in _cache:
            module_name, _, class_name = model.adapter.partition(":")
            adapter_class = getattr(importlib.import_module(module_name), class_name)
            _cache[name] = adapter_class(model.remote) if model.remote is not None else adapter_class()
        return _cache[name]


def _reset_after_fork() -> None:
    global _lock
    _cache.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_after_fork)

__all__ = ["Adapter", "get_adapter"]
