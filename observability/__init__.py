"""What operators look at: Prometheus metrics and structured logs, for every ocrgw process.

A package of its own, beside ``jobs`` rather than inside it, because its
users are every other package: the store records the events its
transitions answer, the runner, the sweep and the webhook deliverer theirs,
and the gateway and the Celery processes serve them.  It knows no Redis key:
what the metrics read from the store is ``jobs.observed``.

* ``metrics``: every metric, defined once (name, labels, meaning), and the
  calls that record them;
* ``multiprocess``: the directory in which a family of processes (gunicorn's
  workers, a Celery pool) shares its metrics, and the exposition;
* ``collectors``: the gauges read from the store at scrape time;
* ``logs``: plain or JSON lines, with the job's ids, never a payload or a key;
* ``celery_hooks`` and ``gunicorn_config``: how each kind of process sets both up.
"""
