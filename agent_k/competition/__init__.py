"""The shared vocabulary of missions, platforms and models: what a competition is, how it is scored, what a
submission must look like, and what Research finds.

Light at import: the kinds (plain enums) load at once; the pydantic models, on first use of their names.
NumPy, pandas and scikit-learn load only inside the functions that compute with them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from agent_k.competition.kinds import PredictionKind, TaskType

if TYPE_CHECKING:
    from agent_k.competition import metric_scoring
    from agent_k.competition.metric import Metric
    from agent_k.competition.models import Competition, Criteria
    from agent_k.competition.registry import MetricName, declare, metric_named, metric_names
    from agent_k.competition.research import CVScheme, ResearchFindings, TimeStructure
    from agent_k.competition.scores import Medal, Scores
    from agent_k.competition.submission_format import InvalidSubmission

_LAZY = {
    "Metric": "metric",
    "MetricName": "registry",
    "declare": "registry",
    "metric_named": "registry",
    "metric_names": "registry",
    "Competition": "models",
    "Criteria": "models",
    "CVScheme": "research",
    "ResearchFindings": "research",
    "TimeStructure": "research",
    "Medal": "scores",
    "Scores": "scores",
    "InvalidSubmission": "submission_format",
}

__all__ = [
    "CVScheme",
    "Competition",
    "Criteria",
    "InvalidSubmission",
    "Medal",
    "Metric",
    "MetricName",
    "PredictionKind",
    "ResearchFindings",
    "Scores",
    "TaskType",
    "TimeStructure",
    "declare",
    "metric_named",
    "metric_names",
    "metric_scoring",
]


def __getattr__(name: str) -> object:
    if name == "metric_scoring":
        return import_module(f"{__name__}.metric_scoring")
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
