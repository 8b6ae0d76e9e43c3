"""The sampler of ocrgw's traces: the one the environment configures, less the lone client calls.

Imported only once tracing is on (``observability.tracing``).  Redis
commands made outside any traced operation would each start a trace of
one span: the broker transport's bookkeeping for every message, each
lease's heartbeat, the workers' language reports.  They say nothing and
would outnumber the traces that do, so a CLIENT span with no parent is
not sampled; the same command inside a request, a task or an attempt is.
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import sampling
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes


class NoLoneClientCalls(Sampler):
    def __init__(self, delegate: Sampler):
        self.delegate = delegate

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        if kind == SpanKind.CLIENT and not trace.get_current_span(parent_context).get_span_context().is_valid:
            return SamplingResult(Decision.DROP)
        return self.delegate.should_sample(parent_context, trace_id, name, kind, attributes, links, trace_state)

    def get_description(self) -> str:
        return f"NoLoneClientCalls{{{self.delegate.get_description()}}}"


def from_environment() -> Sampler:
    """OTEL_TRACES_SAMPLER's sampler (parentbased_always_on by default), less the lone client calls."""
    configured = getattr(sampling, "_get_from_env_or_default", lambda: sampling.DEFAULT_ON)()
    return NoLoneClientCalls(configured)
