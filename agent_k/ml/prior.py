"""The training prior as a candidate: rendered like any solution, evaluated in the runner's own process.

Its `solution.py` is AGENT-K's own code reading only the public labels, so there is nothing to sandbox: the
rendered script's `run()` is called directly, in a thread, and its out-of-fold predictions are scored by our
code like any candidate's. Milliseconds where a sandboxed model costs seconds: what a mission falls back to when
the budget leaves no room for a model.
"""

from __future__ import annotations

import asyncio
import runpy
import time
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template

import numpy as np
import pandas as pd

from agent_k.competition import Competition
from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import OOF, SUBMISSION, CompetitionData, Evaluation, check_oof, fold_scores, oof_log_loss
from agent_k.ml.render import competition_constants
from agent_k.store.status import CandidateStatus

MEDIAN_METRICS = frozenset({"mae", "medae", "mape", "smape"})
"""Metrics a constant does best on at the median (RMSLE: at the log-mean; the others: at the mean)."""


@cache
def _template() -> Template:
    return Template(resources.files("agent_k.ml").joinpath("templates/prior.py.tmpl").read_text())


def render_prior(competition: Competition, cv: CVScheme) -> str:
    statistic = "median" if competition.metric in MEDIAN_METRICS else "mean"
    statistic = "log-mean" if competition.metric == "rmsle" else statistic
    return _template().substitute(**competition_constants(competition, cv), statistic=repr(statistic))


def _run(script: Path, data: CompetitionData, workdir: Path) -> tuple[list[float], float | None]:
    runpy.run_path(str(script), run_name="agent_k_prior")["run"](data.data_dir, workdir / SUBMISSION, workdir / OOF)
    oof = check_oof(data, pd.read_csv(workdir / OOF))
    return fold_scores(data, oof), oof_log_loss(data, oof)


async def evaluate_prior(data: CompetitionData, cv: CVScheme, workdir: Path) -> Evaluation:
    """Cross-validate the prior and write its submission (`Evaluation` as for any candidate)."""
    started = time.monotonic()
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "solution.py"
    script.write_text(render_prior(data.spec, cv))
    evaluation = Evaluation(status=CandidateStatus.failed, runtime_s=0.0, script_path=script)
    try:
        scores, log_loss = await asyncio.to_thread(_run, script, data, workdir)
    except Exception as exc:  # our own code on data of any shape: whatever it meets makes a failed candidate
        evaluation.error = f"the training prior could not be computed: {type(exc).__name__}: {exc}"
    else:
        evaluation.status = CandidateStatus.succeeded
        evaluation.fold_scores = [round(s, 6) for s in scores]
        evaluation.cv_mean = float(np.mean(evaluation.fold_scores))
        evaluation.log_loss = None if log_loss is None else round(log_loss, 6)
        evaluation.oof_path, evaluation.submission_path = workdir / OOF, workdir / SUBMISSION
    evaluation.runtime_s = round(time.monotonic() - started, 3)
    return evaluation
