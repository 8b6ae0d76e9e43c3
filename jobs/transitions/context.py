"""What a transition's call needs of its store, and the one filler of the release bundle.

An entry's ``call`` (see jobs/transitions/catalogue.py) takes a
``StoreContext``: the store's client, its registered scripts, its
settings and its keyspace (the names of its keys, for its bucket count).
It names the keys and arguments of its own script, and nothing
else: a script that releases held children (``Transition.releases``) takes
the release bundle too (RELEASE_KEYS, RELEASE_ARGS in spec.py), which
``run`` and ``run_all`` fill here, alike for every such script, from the
job the call is about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jobs.config import Settings
from jobs.connections import StoreClient
from jobs.keys import Keyspace
from jobs.transitions.scripts import Scripts
from jobs.transitions.spec import ReplyT, Transition

#: A call's named keys and arguments, for ``run_all``.
Call = tuple[Mapping[str, str], Mapping[str, object]]


@dataclass(frozen=True)
class StoreContext:
    redis: StoreClient
    scripts: Scripts
    settings: Settings
    keyspace: Keyspace

    @property
    def requeue_ms(self) -> int:
        """When the sweep re-publishes a queued job nobody claimed, from now."""
        return int(self.settings.requeue_seconds * 1000)

    def release_keys(self, job_id: str) -> dict[str, str]:
        """The keys of ``RELEASE_KEYS`` (jobs/transitions/spec.py) for a transition on ``job_id``."""
        keyspace = self.keyspace
        bucket = keyspace.bucket_of(job_id)
        return {
            "parent": keyspace.parent_or_self(job_id),
            "queued": keyspace.queued(bucket),
            "due": keyspace.due_parents(bucket),
        }

    def release_args(self, job_id: str, release_limit: int | None = None) -> dict[str, int | str]:
        """The arguments of ``RELEASE_ARGS`` (jobs/transitions/spec.py) for a transition on ``job_id``.

        ``release_limit`` defaults to ``OCRGW_RELEASE_BATCH``.
        """
        return {
            "prefix": self.keyspace.group_prefix(job_id),
            "release_limit": self.settings.release_batch if release_limit is None else release_limit,
            "requeue_ms": self.requeue_ms,
            "tenant_max_inflight": self.settings.tenant_max_inflight,
            # Across buckets, each bucket's share of the cap is its quota (jobs.tenant_quota).
            "tenant_quota": int(self.settings.tenant_max_inflight > 0 and self.keyspace.bucket_count > 1),
        }

    def filled(
        self,
        transition: Transition[ReplyT],
        keys_: Mapping[str, str],
        args: Mapping[str, object],
        job_id: str,
        release_limit: int | None = None,
    ) -> Call:
        """A call's keys and arguments with the release bundle for ``job_id`` added, when its script takes it."""
        if not transition.releases:
            return keys_, args
        if not job_id:
            # Without it the bundle would name some other group's slots, and the script would fill those.
            raise ValueError(f"{transition.name} releases held children: its call must name the job it is about")
        return {**keys_, **self.release_keys(job_id)}, {**args, **self.release_args(job_id, release_limit)}

    def run(
        self,
        transition: Transition[ReplyT],
        keys_: Mapping[str, str],
        args: Mapping[str, object],
        job_id: str = "",
        release_limit: int | None = None,
    ) -> ReplyT:
        """Runs one call; ``job_id``: the job whose group a releasing script fills the slots of."""
        return self.scripts.run(transition, *self.filled(transition, keys_, args, job_id, release_limit))

    def run_all(self, transition: Transition[ReplyT], calls: Sequence[tuple[str, Call]]) -> list[ReplyT]:
        """Runs many calls, each ``(job_id, (keys, args))``, a round trip per bucket; their replies in order."""
        return self.scripts.run_all(transition, [self.filled(transition, *call, job_id) for job_id, call in calls])
