"""The platform protocol every competition source implements, and the models it speaks."""

from __future__ import annotations

import shutil
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

MetricName = Literal["auc", "accuracy", "logloss", "rmse", "mae", "r2"]
METRICS: tuple[MetricName, ...] = ("auc", "accuracy", "logloss", "rmse", "mae", "r2")
MAXIMIZED: frozenset[str] = frozenset({"auc", "accuracy", "r2"})
REGRESSION_METRICS: frozenset[str] = frozenset({"rmse", "mae", "r2"})


class TaskType(StrEnum):
    binary = "binary"
    multiclass = "multiclass"
    regression = "regression"


class PredictionKind(StrEnum):
    """What a submission row holds: a value/label, P(positive class), or one probability per class."""

    value = "value"
    probability = "probability"
    probabilities = "probabilities"


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


class SubmissionStatus(StrEnum):
    pending = "pending"
    complete = "complete"
    error = "error"


class Submission(BaseModel):
    id: str
    competition_id: str
    created_at: datetime
    description: str = ""
    status: SubmissionStatus
    public_score: float | None = None
    private_score: float | None = None
    error: str | None = None
    team: str | None = None
    """The team the platform credited it to, as named on the leaderboard."""


class LeaderboardEntry(BaseModel):
    team: str
    public_score: float | None
    private_score: float | None
    reference: bool = True


PUBLIC_FILES = ("train.csv", "test.csv", "sample_submission.csv", "description.md", "competition.json")
"""The public folder every platform hands a mission (hidden labels are never among them)."""


def copy_public_files(public: Path, dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    for name in PUBLIC_FILES:
        shutil.copyfile(public / name, dest / name)
    return [dest / name for name in PUBLIC_FILES]


class PlatformError(Exception):
    """A platform refused or failed a request; the message is safe to show a user."""


class CompetitionNotFound(PlatformError):
    def __init__(self, competition_id: str, suggestions: list[str]) -> None:
        hint = f"; did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown competition '{competition_id}'{hint}")
        self.competition_id = competition_id
        self.suggestions = suggestions


class InvalidSubmission(PlatformError):
    """The submission file does not match the competition's format."""


@runtime_checkable
class PlatformAdapter(Protocol):
    name: str
    team: str

    async def list_competitions(self, criteria: Criteria | None = None) -> list[Competition]: ...

    async def get_competition(self, competition_id: str) -> Competition: ...

    async def download_data(self, competition_id: str, dest: Path) -> list[Path]: ...

    async def submit(self, competition_id: str, file: Path, message: str, idempotency_key: str) -> Submission: ...

    async def get_submission(self, competition_id: str, submission_id: str) -> Submission: ...

    async def list_submissions(self, competition_id: str) -> list[Submission]: ...

    async def leaderboard(self, competition_id: str) -> list[LeaderboardEntry]: ...
