"""Benchmarks of ocrgw against Celery itself and against the raw OCR engines.

``python -m bench`` runs them all (``--only NAME`` picks some, ``--quick``
shrinks every size so the whole run takes seconds).  Every comparison is made
side by side in one run: both sides use the same redis-server (started here,
on a free loopback port), the same worker pool size and the same machine, and
they take turns, so that a slow moment of the machine hits both alike.  The
figures are ratios of medians or medians of paired ratios; absolute times are
printed as context only.  Each benchmark writes ``<out>/<name>.json``.
"""
