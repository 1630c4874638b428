"""Cross-validate a script we did not write, without trusting it: it only ever sees its training rows' labels.

For each fold the harness writes a folder with `train.csv` (the other folds, target included) and `test.csv`
(the held-out rows, target removed), runs `solution.py --data FOLD --out predictions.csv` in the sandbox, and
scores the predictions against the held-out labels with our metric. The folds are the ones the template's own
CV uses. A final run on the real data writes the submission.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, StratifiedKFold

from agent_k.competition import InvalidSubmission, TaskType, metrics
from agent_k.competition.research import CVScheme
from agent_k.competition.submission_format import read_submission
from agent_k.ml.evaluate import CompetitionData, Evaluation
from agent_k.ml.recipes import Script
from agent_k.ml.sandbox import Limits, run_sandboxed
from agent_k.store.status import CandidateStatus


def _splits(train: pd.DataFrame, data: CompetitionData, cv: CVScheme) -> list[tuple[np.ndarray, np.ndarray]]:
    target = train[data.spec.target]
    if data.spec.task is TaskType.regression or cv.kind == "kfold":
        return list(KFold(cv.n_folds, shuffle=True, random_state=cv.seed).split(train))
    return list(StratifiedKFold(cv.n_folds, shuffle=True, random_state=cv.seed).split(train, target))


async def _run(script: Path, data: Path, folder: Path, limits: Limits, deadline: float) -> tuple[Path, str | None]:
    """Run the script on `data`'s train.csv and test.csv, in `folder`; the predictions file, or why there is none."""
    out = folder / "predictions.csv"
    left = deadline - time.monotonic()
    if left <= 0:
        return out, "timed out"
    run_limits = Limits(
        timeout_s=left, memory_mb=limits.memory_mb, file_size_mb=limits.file_size_mb, threads=limits.threads
    )
    command = [sys.executable, str(script), "--data", str(data), "--out", str(out)]
    result = await run_sandboxed(command, workdir=folder, limits=run_limits)
    if not result.ok:
        return out, f"{result.failure_reason()}\n{result.stderr_tail}".strip()[-2000:]
    return out, None


async def evaluate_script(
    solution: Script, data: CompetitionData, cv: CVScheme, workdir: Path, limits: Limits, *, folds: int | None = None
) -> Evaluation:
    """Like `evaluate` for recipes: `folds=None` full CV and the submission, `K` the first K folds only."""
    started = time.monotonic()
    deadline = started + limits.timeout_s
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "solution.py"
    script.write_text(solution.source)
    evaluation = Evaluation(status=CandidateStatus.failed, runtime_s=0.0, script_path=script)
    spec = data.spec
    train = pd.read_csv(data.data_dir / "train.csv")
    splits = _splits(train, data, cv)[: folds or cv.n_folds] if folds != 0 else []
    try:
        for k, (fit_rows, held_out) in enumerate(splits):
            folder = workdir / f"fold{k}"
            folder.mkdir(exist_ok=True)
            train.iloc[fit_rows].to_csv(folder / "train.csv", index=False)
            hidden = train.iloc[held_out]
            hidden.drop(columns=[spec.target]).to_csv(folder / "test.csv", index=False)
            predictions_file, error = await _run(script, folder, folder, limits, deadline)
            if error:
                evaluation.error = f"fold {k}: {error}"
                return _timed(evaluation, started)
            predictions = read_submission(predictions_file, spec, hidden[spec.id_column])
            truth = hidden[spec.target].reset_index(drop=True)
            evaluation.fold_scores.append(round(metrics.score(spec, truth, predictions.reset_index(drop=True)), 6))
        if splits:
            evaluation.cv_mean = float(np.mean(evaluation.fold_scores))
        if not folds:
            predictions_file, error = await _run(script, data.data_dir, workdir, limits, deadline)
            if error:
                evaluation.error = f"final fit: {error}"
                return _timed(evaluation, started)
            read_submission(predictions_file, spec, data.test_ids)
            evaluation.submission_path = predictions_file.rename(workdir / "submission.csv")
    except InvalidSubmission as exc:
        evaluation.error = str(exc)
        return _timed(evaluation, started)
    evaluation.status = CandidateStatus.succeeded
    return _timed(evaluation, started)


def _timed(evaluation: Evaluation, started: float) -> Evaluation:
    evaluation.runtime_s = round(time.monotonic() - started, 3)
    return evaluation
