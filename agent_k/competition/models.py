"""What a competition is, and what Discovery looks for when none is named."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_k.competition.kinds import MAXIMIZED, MetricName, PredictionKind, TaskType


class Competition(BaseModel):
    id: str
    title: str
    description: str = ""
    task: TaskType
    metric: MetricName
    target: str
    id_column: str = "id"
    classes: list[str] | None = None
    n_train: int = 0
    n_test: int = 0
    n_features: int = 0
    source: str = ""
    tags: list[str] = Field(default_factory=list)
    has_hidden_labels: bool = True
    url: str | None = None
    max_daily_submissions: int | None = None
    """The platform's daily submission limit, when it has one."""

    @property
    def maximize(self) -> bool:
        return self.metric in MAXIMIZED

    @property
    def prediction(self) -> PredictionKind:
        if self.task is TaskType.regression or self.metric == "accuracy":
            return PredictionKind.value
        if self.task is TaskType.binary:
            return PredictionKind.probability
        return PredictionKind.probabilities

    @property
    def prediction_columns(self) -> list[str]:
        if self.prediction is PredictionKind.probabilities:
            return list(self.classes or [])
        return [self.target]

    @property
    def positive_class(self) -> str | None:
        return self.classes[-1] if self.task is TaskType.binary and self.classes else None

    def better(self, a: float, b: float) -> bool:
        """True when score `a` beats score `b` under this competition's metric."""
        return a > b if self.maximize else a < b


class Criteria(BaseModel):
    """What Discovery looks for when no competition is named."""

    competition: str | None = None
    task: TaskType | None = None
    metric: MetricName | None = None
    max_rows: int | None = None
    keywords: list[str] = Field(default_factory=list)
