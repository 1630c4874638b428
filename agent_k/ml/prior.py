"""The training prior as a candidate: computed in the runner's own process, and rendered like any solution.

Its predictions come from our own module (`agent_k.ml.training_prior`), imported and called in a thread, never
from running a rendered script here; its out-of-fold predictions are scored by our code like any candidate's.
The `solution.py` it archives embeds that module and reproduces its files standalone. Milliseconds where a
sandboxed model costs seconds: what a mission falls back to when the budget leaves no room for a model.
"""

from __future__ import annotations

import asyncio
import time
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition import Competition
from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import OOF, SUBMISSION, CompetitionData, Evaluation, check_oof, fold_scores, oof_log_loss
from agent_k.ml.literals import in_docstring, literal
from agent_k.ml.render import PRIOR_LIBRARY, library
from agent_k.ml.training_prior import write_prior
from agent_k.store.status import CandidateStatus


@cache
def _template() -> Template:
    return Template(resources.files("agent_k.ml").joinpath("templates/prior.py.tmpl").read_text(encoding="utf-8"))


def prior_spec(competition: Competition, cv: CVScheme) -> dict[str, Any]:
    """What the prior needs of the competition (`agent_k.ml.training_prior`), as plain data."""
    return {
        "targets": competition.target_columns,
        "id_column": competition.id_column,
        "task": competition.task.value,
        "prediction": competition.prediction.value,
        "classes": competition.classes,
        "statistic": competition.scored_by.constant,
        "top_k": competition.top_k or 1,
        "folds": cv.plan(),
        "group_column": cv.group_column,
        "time": cv.time.spec() if cv.kind == "forward" and cv.time else None,
    }


def render_prior(competition: Competition, cv: CVScheme) -> str:
    """The prior's standalone script: our `training_prior` module and its spec, as a literal."""
    return _template().substitute(
        competition_id=in_docstring(competition.id),
        library=library(PRIOR_LIBRARY),
        prior=literal(prior_spec(competition, cv)),
    )


def _run(data: CompetitionData, cv: CVScheme, workdir: Path) -> tuple[list[float], float | None]:
    write_prior(prior_spec(data.spec, cv), data.data_dir, workdir / SUBMISSION, workdir / OOF)
    oof = check_oof(data, pd.read_csv(workdir / OOF))
    return fold_scores(data, oof), oof_log_loss(data, oof)


async def evaluate_prior(data: CompetitionData, cv: CVScheme, workdir: Path) -> Evaluation:
    """Cross-validate the prior and write its submission (`Evaluation` as for any candidate)."""
    started = time.monotonic()
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "solution.py"
    script.write_text(render_prior(data.spec, cv), encoding="utf-8")
    evaluation = Evaluation(status=CandidateStatus.failed, runtime_s=0.0, script_path=script)
    try:
        scores, log_loss = await asyncio.to_thread(_run, data, cv, workdir)
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
