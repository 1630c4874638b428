"""What a competition is, and what Discovery looks for when none is named."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_k.competition.kinds import PredictionKind, TaskType
from agent_k.competition.metric import Metric
from agent_k.competition.registry import MetricName, metric_named
from agent_k.media.kinds import MediaKindName

MEDIA_FOLDER = "media"
"""The public folder's subfolder that holds a media competition's files."""


class MediaSpec(BaseModel):
    """A competition whose rows are files: each row names its file in `column`, relative to `media/`."""

    kind: MediaKindName
    """A declared media kind that has a reader (`agent_k.media.kinds`)."""
    column: str = "path"


class Competition(BaseModel):
    id: str
    title: str
    description: str = ""
    task: TaskType
    metric: MetricName
    target: str
    """The target column; with several targets, the first of them."""
    targets: list[str] | None = None
    """Several target columns (multilabel: 0/1 each; multioutput: numbers), in train and in a submission."""
    id_column: str = "id"
    classes: list[str] | None = None
    top_k: int | None = None
    """MAP@k: how many ranked labels a submission row may hold."""
    time_column: str | None = None
    """What the rows are ordered by, when the platform or the user says so (Research also finds it alone)."""
    series_keys: list[str] | None = None
    """The columns that, with time, identify a row (a forecast of many series)."""
    group_column: str | None = None
    """An entity whose rows belong together in validation (a patient, a user, a store)."""
    media: MediaSpec | None = None
    train_only: list[str] = Field(default_factory=list)
    """Training columns the test rows lack (outcomes, fields filled in later): left out of the tables, named here."""
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
    def scored_by(self) -> Metric:
        """The declaration of the competition's metric."""
        return metric_named(self.metric)

    @property
    def maximize(self) -> bool:
        return self.scored_by.maximize

    @property
    def target_columns(self) -> list[str]:
        return list(self.targets or [self.target])

    @property
    def prediction(self) -> PredictionKind:
        scored_on = self.scored_by.scored_on
        if self.task.is_regression or scored_on == "labels":
            return PredictionKind.value
        if scored_on == "ranked":
            return PredictionKind.ranked
        if self.task is TaskType.binary:
            return PredictionKind.probability
        return PredictionKind.probabilities

    @property
    def prediction_columns(self) -> list[str]:
        if self.task.has_several_targets:
            return self.target_columns
        if self.prediction is PredictionKind.probabilities:
            return list(self.classes or [])
        return [self.target]

    @property
    def ordinal(self) -> bool:
        """Classes that are numbers, in order: quadratic weighted kappa's cut points need that order."""
        try:
            [float(c) for c in self.classes or []]
        except ValueError:
            return False
        return bool(self.classes)

    def better(self, a: float, b: float) -> bool:
        """True when score `a` beats score `b` under this competition's metric."""
        return self.scored_by.better(a, b)


class Criteria(BaseModel):
    """What Discovery looks for when no competition is named."""

    competition: str | None = None
    task: TaskType | None = None
    metric: MetricName | None = None
    max_rows: int | None = None
    keywords: list[str] = Field(default_factory=list)
