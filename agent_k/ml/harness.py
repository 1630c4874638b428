"""Cross-validate a script we did not write, without trusting it: it only ever sees its training rows' labels.

For each fold the harness writes a folder with `train.csv` (the other folds, target included) and `test.csv`
(the held-out rows, target removed), runs `solution.py --data FOLD --out predictions.csv` in the sandbox, and
scores the predictions against the held-out labels with our metric. The folds are the ones the template's own
CV uses (`agent_k.ml.splits`), forward-chaining and grouped ones included, so a script can never train on the
rows it is scored on. A final run on the real data writes the submission.

Model-written code runs only in bubblewrap, unless the user explicitly allowed the basic sandbox.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.competition import InvalidSubmission, metric_scoring
from agent_k.competition.models import MEDIA_FOLDER
from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import SUBMISSION, CompetitionData, Evaluation, read_predictions
from agent_k.ml.labels import labelled, reinfer
from agent_k.ml.recipes import Script
from agent_k.ml.render import MEDIA_FEATURES
from agent_k.ml.splits import splits
from agent_k.sandbox import Job, Limits, UntrustedOutput, bwrap_problem, resolve, run_sandboxed
from agent_k.store.status import CandidateStatus

PREDICTIONS = "predictions.csv"


class _ScriptFailed(Exception):
    """One run of the script gave no usable predictions; the message says why, in one line."""


def refusal(limits: Limits) -> str | None:
    """Why model-written code may not run under these limits here (None: it may)."""
    if resolve(limits.sandbox, limits.user) == "bwrap" or limits.allow_unsandboxed_code:
        return None
    why = bwrap_problem(limits.user) or "AGENT_K_SANDBOX=basic"
    return f"refused: model-written code runs only in the bubblewrap sandbox ({why}); --allow-unsandboxed-code"


def _write_fold(
    train: pd.DataFrame,
    fit_rows: np.ndarray,
    held_out: pd.DataFrame,
    targets: list[str],
    folder: Path,
    kept: pd.DataFrame,
) -> None:
    """The fold's files: the training rows (after the file's unlabelled rows, as they were) and the held-out
    rows without their targets."""
    folder.mkdir(exist_ok=True)
    pd.concat([kept, train.iloc[fit_rows]]).to_csv(folder / "train.csv", index=False)
    held_out.drop(columns=targets).to_csv(folder / "test.csv", index=False)


def _media_fold(data_dir: Path, folder: Path, id_column: str) -> None:
    """A media fold's files and features, as the data folder has them for the whole competition: the files
    linked (read-only, no copy), each table's rows' features (the held-out rows' from the training table's)."""
    if not (folder / MEDIA_FOLDER).exists():
        shutil.copytree(data_dir / MEDIA_FOLDER, folder / MEDIA_FOLDER, copy_function=os.link)
    features = pd.read_parquet(data_dir / MEDIA_FEATURES["train"])
    for table in ("train", "test"):
        ids = pd.read_csv(folder / f"{table}.csv", usecols=[id_column])
        ids.merge(features, on=id_column, how="left").to_parquet(folder / MEDIA_FEATURES[table], index=False)


async def _predict(
    data: CompetitionData, script: Path, inputs: Path, folder: Path, limits: Limits, deadline: float, ids: pd.Series
) -> pd.DataFrame:
    """Run the script on `inputs` (train.csv, test.csv) in `folder`; its checked predictions for `ids`."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _ScriptFailed("timed out")
    cap = data.submission_shape(len(ids)).max_bytes
    job = Job(script=script, data=inputs, args=("--out", PREDICTIONS), outputs={PREDICTIONS: cap}, untrusted=True)
    result = await run_sandboxed(job, workdir=folder, limits=replace(limits, timeout_s=left))
    if not result.ok:
        raise _ScriptFailed(result.failure_reason())
    return await read_predictions(data, folder / PREDICTIONS, ids, left_out=result.left_out)


async def evaluate_script(
    solution: Script, data: CompetitionData, cv: CVScheme, workdir: Path, limits: Limits, *, folds: int | None = None
) -> Evaluation:
    """Like `evaluate` for recipes: `folds=None` full CV and the submission, `K` the first K folds only."""
    started = time.monotonic()
    deadline = started + limits.timeout_s
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "solution.py"
    script.write_text(solution.source, encoding="utf-8")
    evaluation = Evaluation(status=CandidateStatus.failed, runtime_s=0.0, script_path=script)
    refused = refusal(limits)
    if refused is not None:
        evaluation.error = refused
        return evaluation
    spec = data.spec
    train, kept = await asyncio.to_thread(_labelled_rows, data)
    cut = splits(train, spec, cv)[: folds or cv.n_folds] if folds != 0 else []
    step = "final fit"
    try:
        for k, (fit_rows, held_out_rows) in enumerate(cut):
            step, folder, held_out = f"fold {k}", workdir / f"fold{k}", train.iloc[held_out_rows]
            await asyncio.to_thread(_write_fold, train, fit_rows, held_out, spec.target_columns, folder, kept)
            if spec.media is not None:
                await asyncio.to_thread(_media_fold, data.data_dir, folder, spec.id_column)
            predictions = await _predict(data, script, folder, folder, limits, deadline, held_out[spec.id_column])
            truth = held_out[spec.target] if spec.targets is None else held_out[spec.target_columns]
            truth = truth.reset_index(drop=True)
            evaluation.fold_scores.append(
                round(metric_scoring.score(spec, truth, predictions.reset_index(drop=True)), 6)
            )
        if cut:
            evaluation.cv_mean = float(np.mean(evaluation.fold_scores))
        if not folds:
            step = "final fit"
            await _predict(data, script, data.data_dir, workdir, limits, deadline, data.test_ids)
            evaluation.submission_path = (workdir / PREDICTIONS).rename(workdir / SUBMISSION)
    except (_ScriptFailed, InvalidSubmission, UntrustedOutput) as exc:
        evaluation.error = f"{step}: {exc}"
        return _timed(evaluation, started)
    evaluation.status = CandidateStatus.succeeded
    return _timed(evaluation, started)


def _labelled_rows(data: CompetitionData) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows the folds are made of and scored on, and the rows without a usable label (a units row under
    the header, say): those are never held out or scored, and every fold's training file keeps them first."""
    train = pd.read_csv(data.data_dir / "train.csv")
    usable = labelled(train, data.spec)
    if usable.all():
        return train, train.iloc[:0]
    return reinfer(train[usable]), train[~usable]


def _timed(evaluation: Evaluation, started: float) -> Evaluation:
    evaluation.runtime_s = round(time.monotonic() - started, 3)
    return evaluation
