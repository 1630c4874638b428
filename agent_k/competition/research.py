"""What Research finds out about a competition's data, and the validation it plans (computed by
`agent_k.ml.profiling`, read by every later phase)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agent_k.competition.kinds import TaskType


class ColumnProfile(BaseModel):
    name: str
    kind: Literal["numeric", "categorical", "datetime"]
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


class LeakageSuspect(BaseModel):
    column: str
    single_column_score: float
    """Cross-validated balanced accuracy (classification) or R² (regression) of this column alone."""


class DriftResult(BaseModel):
    column: str
    method: Literal["ks", "tvd"]
    statistic: float
    drifted: bool


class CVScheme(BaseModel):
    kind: Literal["stratified_kfold", "kfold"]
    n_folds: int
    seed: int = 42


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
