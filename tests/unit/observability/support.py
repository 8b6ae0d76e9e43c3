"""Reading this process's own metrics in tests: the change a test makes, whatever earlier tests counted."""

from __future__ import annotations

from observability import metrics


def sample(name: str, **labels: str) -> float:
    """The current value of one sample of this process's metrics (0 if it was never recorded)."""
    return metrics.registry().get_sample_value(name, labels) or 0.0


class Counts:
    """Samples read before a test acts; ``delta`` is what the test's actions added."""

    def __init__(self) -> None:
        self.before = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in metrics.registry().collect()
            for s in family.samples
        }

    def delta(self, name: str, **labels: str) -> float:
        return sample(name, **labels) - self.before.get((name, tuple(sorted(labels.items()))), 0.0)

    def total_delta(self, name: str) -> float:
        """What the test's actions added to ``name``, over all its labels."""
        now = {
            tuple(sorted(s.labels.items())): s.value
            for family in metrics.registry().collect()
            for s in family.samples
            if s.name == name
        }
        return sum(value - self.before.get((name, labels), 0.0) for labels, value in now.items())
