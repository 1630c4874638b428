"""Evaluate one recipe: render it, run it sandboxed, and score its out-of-fold predictions ourselves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from agent_k.competition import Competition, InvalidSubmission, PredictionKind, TaskType, metrics
from agent_k.competition.research import CVScheme
from agent_k.competition.submission_format import read_submission
from agent_k.ml.recipes import Ensemble, Recipe
from agent_k.ml.render import render_solution
from agent_k.ml.sandbox import Job, Limits, Runner, UntrustedOutput, parse_output, run_sandboxed
from agent_k.ml.tables import has_tables, read_table
from agent_k.store.status import CandidateStatus

SUBMISSION, OOF = "submission.csv", "oof.csv"


@dataclass(frozen=True)
class CompetitionData:
    """What evaluation needs of the public data, loaded once per phase."""

    spec: Competition
    data_dir: Path
    train_target: pd.Series  # indexed by normalised id
    test_ids: pd.Series

    @classmethod
    def load(cls, spec: Competition, data_dir: Path) -> CompetitionData:
        train = read_table(data_dir, "train.csv", [spec.id_column, spec.target])
        test = read_table(data_dir, "test.csv", [spec.id_column])
        target = train[spec.target].set_axis(metrics.normalize_labels(train[spec.id_column]))
        return cls(spec, data_dir, target, test[spec.id_column])


@dataclass
class Evaluation:
    status: CandidateStatus
    runtime_s: float
    cv_mean: float | None = None
    fold_scores: list[float] = field(default_factory=list)
    error: str | None = None
    script_path: Path | None = None
    submission_path: Path | None = None
    oof_path: Path | None = None
    peak_mb: float | None = None
    """The most memory the candidate's processes held at once (None where no memory cgroup records it)."""
    log_loss: float | None = None
    """Out-of-fold log loss of a classifier's probabilities: the tie-break between equal CV scores."""


@dataclass(frozen=True)
class OutOfFold:
    """Validated out-of-fold predictions: values (regression) or one probability column per class."""

    ids: np.ndarray
    folds: np.ndarray
    predictions: pd.DataFrame


def oof_columns(spec: Competition) -> list[str]:
    return [spec.target] if spec.task is TaskType.regression else list(spec.classes or [])


def as_predictions(spec: Competition, predictions: pd.DataFrame) -> pd.DataFrame:
    """Out-of-fold columns in the competition's submission format (a label, P(positive) or per-class)."""
    if spec.task is TaskType.regression or spec.prediction is PredictionKind.probabilities:
        return predictions
    classes = list(spec.classes or [])
    if spec.prediction is PredictionKind.value:
        return pd.DataFrame({spec.target: np.asarray(classes)[predictions[classes].to_numpy().argmax(axis=1)]})
    return pd.DataFrame({spec.target: predictions[classes[-1]]})


def read_oof(data: CompetitionData, source: Path | IO[bytes], *, complete: bool = True) -> OutOfFold:
    """Read and check an out-of-fold file. Complete: every train row exactly once, in train order."""
    spec = data.spec
    try:
        oof = pd.read_csv(source)
    except (OSError, ValueError) as exc:
        raise InvalidSubmission(f"cannot read out-of-fold predictions: {exc}") from exc
    expected = [spec.id_column, "fold", *oof_columns(spec)]
    if list(oof.columns) != expected:
        raise InvalidSubmission(f"out-of-fold columns must be {expected}, got {list(oof.columns)}")
    ids = metrics.normalize_labels(oof[spec.id_column])
    known = set(data.train_target.index)
    if ids.duplicated().any() or not set(ids) <= known or (complete and len(ids) != len(known)):
        raise InvalidSubmission("out-of-fold predictions must cover every training row exactly once")
    predictions = oof[oof_columns(spec)]
    values = predictions.to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise InvalidSubmission("out-of-fold predictions contain missing or non-finite values")
    if complete:
        order = pd.Series(np.arange(len(ids)), index=ids.to_numpy()).loc[data.train_target.index].to_numpy()
        oof = oof.iloc[order].reset_index(drop=True)
        ids, predictions = ids.iloc[order].reset_index(drop=True), predictions.iloc[order].reset_index(drop=True)
    return OutOfFold(ids.to_numpy(), oof["fold"].to_numpy(), predictions)


def fold_scores(data: CompetitionData, oof: OutOfFold, *, truth: pd.Series | None = None) -> list[float]:
    """The metric on each fold; `truth` is `oof_truth(data, oof)` when the caller scores many blends of it."""
    y_true = oof_truth(data, oof) if truth is None else truth
    predictions = as_predictions(data.spec, oof.predictions)
    scores = []
    for fold in sorted(np.unique(oof.folds)):
        rows = oof.folds == fold
        scores.append(metrics.score(data.spec, y_true[rows], predictions[rows].reset_index(drop=True)))
    return scores


def oof_log_loss(data: CompetitionData, oof: OutOfFold) -> float | None:
    """The out-of-fold log loss of a classifier (None for regression)."""
    if data.spec.task is TaskType.regression:
        return None
    return metrics.log_loss(data.spec, oof_truth(data, oof), oof.predictions)


def oof_truth(data: CompetitionData, oof: OutOfFold) -> pd.Series:
    """The labels of the out-of-fold rows, in their order."""
    return data.train_target.loc[oof.ids].reset_index(drop=True)


async def evaluate(
    solution: Recipe | Ensemble,
    data: CompetitionData,
    cv: CVScheme,
    workdir: Path,
    limits: Limits,
    *,
    folds: int | None = None,
    rows: int | None = None,
    run: Runner = run_sandboxed,
) -> Evaluation:
    """Run the solution sandboxed and score its out-of-fold predictions.

    `folds=None`: full CV and the submission. `folds=K`: the first K folds only, no submission (a quick
    screen). `folds=0`: the submission only (a blend, whose CV comes from its members' predictions).
    `rows=N`: CV on a random sample of N training rows, no submission (a low-fidelity screen of large data).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "solution.py"
    script.write_text(render_solution(solution, data.spec, cv))
    args, outputs = ["--out", SUBMISSION], [SUBMISSION]
    if has_tables(data.data_dir):
        args.append("--tables")
    if folds != 0:
        args += ["--oof", OOF]
        outputs.append(OOF)
    if folds:
        args += ["--folds", str(folds)]
    if rows:
        args += ["--rows", str(rows)]
    partial = bool(folds or rows)
    if partial:
        args.append("--cv-only")
        outputs.remove(SUBMISSION)
    job = Job(script=script, data=data.data_dir, args=tuple(args), outputs=tuple(outputs))
    result = await run(job, workdir=workdir, limits=limits)
    evaluation = Evaluation(
        status=CandidateStatus.failed, runtime_s=result.runtime_s, script_path=script, peak_mb=result.peak_mb
    )
    if not result.ok:
        evaluation.error = result.failure_reason()
        return evaluation
    cap = limits.file_size_mb * 1024 * 1024
    try:
        if folds != 0:

            def score(buffer: IO[bytes]) -> tuple[list[float], float | None]:
                oof = read_oof(data, buffer, complete=not partial)
                return fold_scores(data, oof), oof_log_loss(data, oof)

            scores, log_loss = await parse_output(workdir / OOF, score, max_bytes=cap, left_out=result.left_out)
            evaluation.fold_scores = [round(s, 6) for s in scores]
            evaluation.cv_mean = float(np.mean(evaluation.fold_scores))
            evaluation.log_loss = None if log_loss is None else round(log_loss, 6)
            evaluation.oof_path = workdir / OOF
        if not partial:

            def check(buffer: IO[bytes]) -> None:
                read_submission(buffer, data.spec, data.test_ids)

            await parse_output(workdir / SUBMISSION, check, max_bytes=cap, left_out=result.left_out)
            evaluation.submission_path = workdir / SUBMISSION
    except (InvalidSubmission, UntrustedOutput) as exc:
        evaluation.error = str(exc)
        return evaluation
    evaluation.status = CandidateStatus.succeeded
    return evaluation
