"""What Research finds out about a competition's data, and the validation it plans (computed by
`agent_k.ml.profiling`, read by every later phase)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_k.competition.kinds import TaskType, TimeFormat


class ColumnProfile(BaseModel):
    name: str
    kind: Literal["numeric", "categorical", "datetime", "text"]
    """`text`: free text (several words a row, many distinct values), as opposed to categories and ids."""
    missing_fraction: float
    n_unique: int
    skew: float | None = None
    positive: bool = False
    """Numeric and strictly positive: usable as a ratio's denominator."""
    single_column_score: float | None = None
    """Cross-validated score of a small tree on this column alone (see LeakageSuspect)."""
    code: bool = False
    """Integers that name things (a user, store or movie id with repeated values): a category written in
    numbers, worth target and count encoding."""


class TargetProfile(BaseModel):
    task: TaskType
    class_counts: dict[str, int] = Field(default_factory=dict)
    imbalance_ratio: float | None = None
    mean: float | None = None
    std: float | None = None
    skew: float | None = None
    positive: bool = False
    """A numeric target above zero everywhere (a forecast may then be a ratio to the series' level)."""


class LeakageSuspect(BaseModel):
    column: str
    single_column_score: float
    """Cross-validated balanced accuracy (classification) or R² (regression) of this column alone."""


class DriftResult(BaseModel):
    column: str
    method: Literal["ks", "tvd"]
    statistic: float
    drifted: bool


class TimeStructure(BaseModel):
    """What orders the rows in time, and whether the test rows are a forecast of what follows the training rows."""

    columns: list[str]
    """The time column, or a year and a month column."""
    format: TimeFormat
    forecast: bool
    """The test rows lie after the training rows: validation must forecast too."""
    keys: list[str] = Field(default_factory=list)
    """The series: the columns that, with time, identify a row (none for a single series)."""
    unique: bool = True
    """Keys and time identify each training row (lag features need that)."""
    horizon: int = 1
    """Distinct time steps of the test rows: how far ahead a forecast reaches."""
    season: int = 1
    """Steps per seasonal cycle (12 for months, 7 for days, 48 for half-hours), 1 for none."""
    reason: str = ""

    def spec(self) -> dict[str, Any]:
        """The plain dict `agent_k.ml.forecasting` and the rendered scripts read."""
        return {"columns": self.columns, "format": self.format, "keys": self.keys, "horizon": self.horizon,
                "season": self.season}  # fmt: skip


class CVScheme(BaseModel):
    kind: Literal["stratified_kfold", "kfold", "group_kfold", "stratified_group_kfold", "forward"]
    n_folds: int
    seed: int = 42
    group_column: str | None = None
    """The entity kept on one side of every fold (grouped kinds)."""
    time: TimeStructure | None = None
    """The forecast a `forward` scheme validates (its horizon is each fold's window)."""
    gap: int = 0
    """Steps left out between a forward fold's training rows and the rows it scores."""
    reason: str = ""
    """Why Research chose this validation, in a sentence."""

    def plan(self) -> dict[str, Any]:
        """The plain dict `agent_k.ml.folds.make_folds` (and the rendered scripts) read."""
        horizon = self.time.horizon if self.time else None
        return {"kind": self.kind, "n_folds": self.n_folds, "seed": self.seed, "horizon": horizon, "gap": self.gap}


class MediaProfile(BaseModel):
    """What the competition's media files are, read by the featurisation job (in the sandbox)."""

    kind: str
    files: int
    unreadable: int = 0
    """Files no decoder read, or empty ones: their rows get no media features (the models impute them)."""
    unreadable_examples: list[str] = Field(default_factory=list)
    formats: dict[str, int] = Field(default_factory=dict)
    channels: dict[str, int] = Field(default_factory=dict)
    """Images: by mode (RGB, L, RGBA, I;16, …); audio: by channel count."""
    quantiles: dict[str, list[float]] = Field(default_factory=dict)
    """Minimum, median and maximum of width, height and aspect (images) or seconds and sample rate (audio)."""
    duplicates: int = 0
    """Test files whose bytes equal a training file's (their label is known)."""
    features: int = 0
    embedding: str = ""
    """How images were embedded (network, pixels, mirrored), or empty."""
    pixels: int = 0
    """Pixels a side of each row's image (or spectrogram) kept for the networks trained on them; 0: none kept
    (photographs that will not be fine-tuned, or no torch)."""
    fine_tune: bool = False
    """The pretrained network is fine-tuned on the kept images (a GPU is present, or the budget is long)."""


class ResearchFindings(BaseModel):
    n_train: int
    n_test: int
    columns: list[ColumnProfile]
    target: TargetProfile
    id_like: list[str]
    leakage_suspects: list[str]
    leakage_details: list[LeakageSuspect]
    drift: list[DriftResult]
    cv: CVScheme
    model_families: list[str]
    notes: list[str] = Field(default_factory=list)
    unlabelled_rows: int = 0
    """Training rows without a usable label (no id, or a target that is no label for the task)."""
    excluded: list[str] = Field(default_factory=list)
    """Feature columns the research plan leaves out (agent mode), beside ids and leakage suspects."""
    text_columns: list[str] = Field(default_factory=list)
    time: TimeStructure | None = None
    """The rows' time, when one orders them (a forecast, or time-ordered rows that are not one)."""
    media: MediaProfile | None = None
    train_only: list[str] = Field(default_factory=list)
    """Columns the training files hold and the test rows lack (outcomes, fields filled in later): never features."""
    group_candidates: dict[str, float] = Field(default_factory=dict)
    """Columns of repeated entities, each with the share of test rows whose entity training never saw."""
