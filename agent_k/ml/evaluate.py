"""One candidate's evaluation: the request every hop passes on whole (`EvaluationRequest`), the competition's data
as our code scores it, and our template's evaluation: render the recipe, run it sandboxed, and score its
out-of-fold predictions ourselves."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.competition import Competition, InvalidSubmission, PredictionKind, TaskType, metric_scoring
from agent_k.competition.decision import Rule, apply_rule, fit_rule
from agent_k.competition.research import CVScheme
from agent_k.competition.submission_format import validate_frame
from agent_k.ml.folds import scored_rows
from agent_k.ml.recipes import Ensemble, Recipe, Solution
from agent_k.ml.render import render_solution
from agent_k.ml.splits import fold_columns, splits
from agent_k.ml.tables import has_tables, read_table
from agent_k.sandbox import Job, Limits, Runner, TableShape, UntrustedOutput, run_sandboxed, shared_reader
from agent_k.store.status import CandidateStatus

SUBMISSION, OOF, TEST_PREDICTIONS = "submission.csv", "oof.csv", "test_predictions.csv"
NUMBER_CHARS = 40
"""Room a number takes in a CSV cell (repr of a float64 is at most 24 characters; the rest is slack)."""
HEADER_SLACK_BYTES = 64 * 1024
FITS_SHARE = 0.8
"""Of a candidate's timeout, what its fits may take (`--seconds`; boosting ends its rounds to keep to it): the rest
starts the interpreter, reads the tables, predicts and writes."""


@dataclass(frozen=True)
class CompetitionData:
    """What evaluation needs of the public data, loaded once per phase."""

    spec: Competition
    data_dir: Path
    train_target: pd.Series | pd.DataFrame
    """Indexed by normalised id: the target, or a frame of several target columns."""
    test_ids: pd.Series
    scored_ids: pd.Index | None = None
    """The training ids some fold scores, in train order (None: every row; a forward scheme skips its earliest)."""

    @classmethod
    def load(cls, spec: Competition, data_dir: Path, cv: CVScheme | None = None) -> CompetitionData:
        columns = list(dict.fromkeys([spec.id_column, *spec.target_columns, *(fold_columns(spec, cv) if cv else [])]))
        train = read_table(data_dir, "train.csv", columns)
        test = read_table(data_dir, "test.csv", [spec.id_column])
        ids = metric_scoring.normalize_labels(train[spec.id_column])
        target = train[spec.target] if spec.targets is None else train[spec.target_columns]
        scored = None
        if cv is not None and cv.kind == "forward":
            scored = pd.Index(ids.iloc[np.sort(scored_rows(splits(train, spec, cv)))])
        return cls(spec, data_dir, target.set_axis(ids), test[spec.id_column], scored)

    @property
    def expected_ids(self) -> pd.Index:
        """The ids a complete set of out-of-fold predictions covers, in train order."""
        return self.train_target.index if self.scored_ids is None else self.scored_ids

    @cached_property
    def id_chars(self) -> int:
        """The longest id, as text: what bounds an id cell of a candidate's CSV."""
        ids = pd.concat([self.train_target.index.to_series(), self.test_ids.astype(str)])
        return int(ids.str.len().max()) if len(ids) else 1

    def shape(self, columns: list[str], rows: int) -> TableShape:
        """What a candidate's CSV with these columns and at most `rows` rows may look like: its header, and the
        bytes those rows can take (ids and class labels at their longest, numbers at a float's longest, each
        doubled for quoting)."""
        labels = max((len(c) for c in self.spec.classes or []), default=0)
        value = max(NUMBER_CHARS, 2 * labels + 3)
        row = 2 * self.id_chars + 3 + value * (len(columns) - 1) + 2
        return TableShape(tuple(columns), rows, HEADER_SLACK_BYTES + 2 * rows * row)

    def oof_shape(self) -> TableShape:
        return self.shape([self.spec.id_column, "fold", *oof_columns(self.spec)], len(self.expected_ids))

    def submission_shape(self, rows: int | None = None) -> TableShape:
        rows = len(self.test_ids) if rows is None else rows
        return self.shape([self.spec.id_column, *self.spec.prediction_columns], rows)

    def test_predictions_shape(self) -> TableShape:
        return self.shape([self.spec.id_column, *oof_columns(self.spec)], len(self.test_ids))


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
    test_predictions_path: Path | None = None
    """The test rows' values or class probabilities its submission was made of (what a blend averages)."""
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
    """A candidate's out-of-fold columns: its values, or one probability column per class."""
    if spec.task in (TaskType.regression, TaskType.multioutput, TaskType.multilabel):
        return spec.target_columns
    return list(spec.classes or [])


def as_predictions(spec: Competition, predictions: pd.DataFrame, rule: Rule | None = None) -> pd.DataFrame:
    """Out-of-fold columns in the competition's submission format: values, P(positive), per-class
    probabilities, labels (by `rule`, a decision rule fitted on other rows), or the k most probable labels."""
    if spec.task in (TaskType.regression, TaskType.multioutput, TaskType.multilabel):
        return predictions
    if spec.prediction is PredictionKind.probabilities:
        return predictions
    classes = np.asarray(spec.classes or [])
    matrix = predictions[list(classes)].to_numpy(dtype=float)
    if spec.prediction is PredictionKind.value:
        return pd.DataFrame({spec.target: classes[apply_rule(rule, matrix)]})
    if spec.prediction is PredictionKind.ranked:
        best = np.argsort(-matrix, axis=1, kind="stable")[:, : spec.top_k or 1]
        return pd.DataFrame({spec.target: [" ".join(classes[row]) for row in best]})
    return pd.DataFrame({spec.target: matrix[:, -1]})


def needs_rule(spec: Competition) -> bool:
    """Whether predictions become labels by a fitted decision rule (a label metric of a classifier)."""
    return spec.scored_by.fitted_rule and spec.task in (TaskType.binary, TaskType.multiclass)


def decision_rule(data: CompetitionData, oof: OutOfFold, rows: np.ndarray | None = None) -> Rule | None:
    """The decision rule fitted on these out-of-fold rows (all, when `rows` is None); None where none is
    needed."""
    spec = data.spec
    if not needs_rule(spec):
        return None
    truth, matrix = oof_truth(data, oof), oof.predictions[list(spec.classes or [])].to_numpy(dtype=float)
    codes = metric_scoring.class_codes(spec, truth)  # type: ignore[arg-type]
    if rows is not None:
        codes, matrix = codes[rows], matrix[rows]
    return fit_rule(spec.metric, codes, matrix, metric_scoring.class_values(spec))


async def read_oof(
    data: CompetitionData, path: Path, *, complete: bool = True, left_out: Mapping[str, str] | None = None
) -> OutOfFold:
    """A candidate's out-of-fold file, parsed by a reader process and checked (`check_oof`)."""
    frame = await shared_reader().table(path, data.oof_shape(), left_out=left_out)
    return await asyncio.to_thread(check_oof, data, frame, complete=complete)


def check_oof(data: CompetitionData, oof: pd.DataFrame, *, complete: bool = True) -> OutOfFold:
    """Check out-of-fold predictions. Complete: every train row exactly once, in train order."""
    spec = data.spec
    expected = [spec.id_column, "fold", *oof_columns(spec)]
    if list(oof.columns) != expected:
        raise InvalidSubmission(f"out-of-fold columns must be {expected}, got {list(oof.columns)}")
    ids = metric_scoring.normalize_labels(oof[spec.id_column])
    known = set(data.expected_ids)
    if ids.duplicated().any() or not set(ids) <= known or (complete and len(ids) != len(known)):
        raise InvalidSubmission("out-of-fold predictions must cover every row a fold scores exactly once")
    predictions = oof[oof_columns(spec)]
    values = predictions.to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise InvalidSubmission("out-of-fold predictions contain missing or non-finite values")
    if complete:
        order = pd.Series(np.arange(len(ids)), index=ids.to_numpy()).loc[data.expected_ids].to_numpy()
        oof = oof.iloc[order].reset_index(drop=True)
        ids, predictions = ids.iloc[order].reset_index(drop=True), predictions.iloc[order].reset_index(drop=True)
    return OutOfFold(ids.to_numpy(), oof["fold"].to_numpy(), predictions)


async def read_test_predictions(
    data: CompetitionData, path: Path, *, left_out: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """A candidate's test predictions (`TEST_PREDICTIONS`), parsed by a reader process and checked
    (`check_test_predictions`)."""
    frame = await shared_reader().table(path, data.test_predictions_shape(), left_out=left_out)
    return await asyncio.to_thread(check_test_predictions, data, frame)


def check_test_predictions(data: CompetitionData, frame: pd.DataFrame) -> pd.DataFrame:
    """The prediction columns of `frame`, one row per test id in the test file's order, every value finite."""
    spec = data.spec
    expected = [spec.id_column, *oof_columns(spec)]
    if list(frame.columns) != expected:
        raise InvalidSubmission(f"test prediction columns must be {expected}, got {list(frame.columns)}")
    ids = metric_scoring.normalize_labels(frame[spec.id_column])
    wanted = metric_scoring.normalize_labels(data.test_ids)
    if ids.duplicated().any() or len(ids) != len(wanted) or set(ids) != set(wanted):
        raise InvalidSubmission("test predictions must cover every test row exactly once")
    predictions = frame[oof_columns(spec)].set_axis(ids.to_numpy()).loc[wanted.to_numpy()].reset_index(drop=True)
    if not np.isfinite(predictions.to_numpy(dtype=float)).all():
        raise InvalidSubmission("test predictions contain missing or non-finite values")
    return predictions.astype(float)


def submission_frame(data: CompetitionData, predictions: pd.DataFrame, rule: Rule | None = None) -> pd.DataFrame:
    """A submission from test predictions (values or class probabilities, in test order), as a rendered solution
    writes it: labels by `rule`, values clipped to the target's range where the metric or the task bounds it."""
    spec = data.spec
    frame = as_predictions(spec, predictions, rule).copy()
    if spec.task is TaskType.multilabel:
        frame = frame.clip(0.0, 1.0)
    elif spec.scored_by.non_negative:
        frame = frame.clip(lower=0.0)
    frame.insert(0, spec.id_column, data.test_ids.to_numpy())
    return frame


async def read_predictions(
    data: CompetitionData,
    path: Path,
    ids: pd.Series,
    *,
    left_out: Mapping[str, str] | None = None,
    ours: bool = False,
) -> pd.DataFrame:
    """A candidate's predictions for `ids` (a submission, or a fold's held-out rows), parsed by a reader process
    and checked against the submission format; indexed by id in the order of `ids`. `ours`: a file the runner
    wrote itself (the training prior's, never a sandboxed candidate's), parsed here: no reader process needs to
    start for it."""
    if ours:
        frame = await asyncio.to_thread(pd.read_csv, path)
    else:
        frame = await shared_reader().table(path, data.submission_shape(len(ids)), left_out=left_out)

    def check() -> pd.DataFrame:
        validate_frame(frame, data.spec, ids)
        return frame.set_index(data.spec.id_column).loc[ids.to_numpy()]

    return await asyncio.to_thread(check)


def fold_scores(data: CompetitionData, oof: OutOfFold, *, truth: pd.Series | pd.DataFrame | None = None) -> list[float]:
    """The metric on each fold; `truth` is `oof_truth(data, oof)` when the caller scores many blends of it.
    Where labels come by a decision rule, each fold's rule is fitted on the other folds: never on the rows it
    labels."""
    y_true = oof_truth(data, oof) if truth is None else truth
    scores = []
    for fold in sorted(np.unique(oof.folds)):
        rows = oof.folds == fold
        rule = decision_rule(data, oof, ~rows) if needs_rule(data.spec) and (~rows).any() else None
        predictions = as_predictions(data.spec, oof.predictions[rows].reset_index(drop=True), rule)
        scores.append(metric_scoring.score(data.spec, y_true[rows], predictions))
    return scores


def oof_log_loss(data: CompetitionData, oof: OutOfFold) -> float | None:
    """The out-of-fold log loss of a classifier (None for regression)."""
    if data.spec.task.is_regression:
        return None
    return metric_scoring.log_loss(data.spec, oof_truth(data, oof), oof.predictions)


def oof_truth(data: CompetitionData, oof: OutOfFold) -> pd.Series | pd.DataFrame:
    """The labels of the out-of-fold rows, in their order."""
    return data.train_target.loc[oof.ids].reset_index(drop=True)


@dataclass(frozen=True)
class EvaluationRequest:
    """One candidate's evaluation, as every hop passes it on: the mission, an evaluator, a Dask task, the run.

    `folds=None`: full CV, the submission and the test predictions it is made of. `folds=K`: the first K folds
    only, no submission (a quick screen). `rows=N`: CV on a random sample of N training rows, no submission (a
    low-fidelity screen of large data). `cv_only`: full CV, no submission (another split of the same rows).
    `timed_rounds`: boosting ends its rounds within the timeout; off where a score must be of the recipe as it
    was searched (the final pick's second split), which then times out rather than comes back cut short."""

    solution: Solution
    data: CompetitionData
    cv: CVScheme
    workdir: Path
    limits: Limits
    folds: int | None = None
    rows: int | None = None
    cv_only: bool = False
    timed_rounds: bool = True


async def evaluate(request: EvaluationRequest, run: Runner = run_sandboxed) -> Evaluation:
    """Run our template's solution sandboxed (through `run`, which may be a warm worker) and score its
    out-of-fold predictions; with `request.timed_rounds`, boosting ends its rounds within `FITS_SHARE` of the
    timeout."""
    solution, data, cv, workdir, limits = request.solution, request.data, request.cv, request.workdir, request.limits
    assert isinstance(solution, Recipe | Ensemble), "scripts and the prior are evaluated by `evaluate_solution`"
    folds, rows, cv_only = request.folds, request.rows, request.cv_only
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "solution.py"
    try:
        source = render_solution(solution, data.spec, cv)
    except ValueError as exc:  # a recipe outside the search space, or a value no literal carries
        return Evaluation(status=CandidateStatus.failed, runtime_s=0.0, error=f"not rendered: {exc}")
    script.write_text(source, encoding="utf-8")
    args, outputs = ["--out", SUBMISSION, "--oof", OOF], [OOF]
    if has_tables(data.data_dir):
        args.append("--tables")
    if request.timed_rounds:
        args += ["--seconds", f"{max(1.0, FITS_SHARE * limits.timeout_s - 1.0):.1f}"]
    if folds:
        args += ["--folds", str(folds)]
    if rows:
        args += ["--rows", str(rows)]
    partial = bool(folds or rows)
    if partial or cv_only:
        args.append("--cv-only")
    else:
        args += ["--predictions", TEST_PREDICTIONS]
        outputs += [SUBMISSION, TEST_PREDICTIONS]
    shapes = {
        OOF: data.oof_shape(),
        SUBMISSION: data.submission_shape(),
        TEST_PREDICTIONS: data.test_predictions_shape(),
    }
    job = Job(script=script, data=data.data_dir, args=tuple(args), outputs={o: shapes[o].max_bytes for o in outputs})
    result = await run(job, workdir=workdir, limits=limits)
    evaluation = Evaluation(
        status=CandidateStatus.failed, runtime_s=result.runtime_s, script_path=script, peak_mb=result.peak_mb
    )
    if not result.ok:
        evaluation.error = result.failure_reason()
        return evaluation
    try:
        oof = await read_oof(data, workdir / OOF, complete=not partial, left_out=result.left_out)
        scores, log_loss = await asyncio.to_thread(lambda: (fold_scores(data, oof), oof_log_loss(data, oof)))
        evaluation.fold_scores = [round(s, 6) for s in scores]
        evaluation.cv_mean = float(np.mean(evaluation.fold_scores))
        evaluation.log_loss = None if log_loss is None else round(log_loss, 6)
        evaluation.oof_path = workdir / OOF
        if SUBMISSION in outputs:
            await read_predictions(data, workdir / SUBMISSION, data.test_ids, left_out=result.left_out)
            await read_test_predictions(data, workdir / TEST_PREDICTIONS, left_out=result.left_out)
            evaluation.submission_path = workdir / SUBMISSION
            evaluation.test_predictions_path = workdir / TEST_PREDICTIONS
    except (InvalidSubmission, UntrustedOutput) as exc:
        evaluation.error = str(exc)
        return evaluation
    evaluation.status = CandidateStatus.succeeded
    return evaluation
