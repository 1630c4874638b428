"""The metrics AGENT-K knows by name: the built-in rows of `metric_table`, loaded on first use, and any declared
since (docs/architecture.md, "Metrics")."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from agent_k._declarations import Declarations
from agent_k.competition.metric import Metric


def _builtin_metrics() -> tuple[Metric, ...]:
    from agent_k.competition.metric_table import BUILTIN_METRICS  # the kernels load NumPy: on first use only

    return BUILTIN_METRICS


_METRICS = Declarations("metric", _builtin_metrics)
declare = _METRICS.declare
"""Make a metric known by its name (a second, different declaration of a name is refused)."""
metric_names = _METRICS.names
declared_metrics = _METRICS.members


def metric_named(name: str) -> Metric:
    """The declaration of metric `name`; `KeyError` naming the known ones when there is none."""
    try:
        return _METRICS.named(name)
    except ValueError as exc:
        raise KeyError(str(exc)) from None


check_metric_name = _METRICS.known
"""`name` when a metric has it, else a one-line `ValueError` naming the known ones."""
MetricName = Annotated[str, AfterValidator(check_metric_name)]
"""A metric's name, validated against the declared ones (pydantic fields)."""
