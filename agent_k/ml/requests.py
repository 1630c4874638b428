"""One candidate's evaluation, as a request every hop passes on whole, and the evaluation every evaluator runs
for it: our template, an agent's script through the harness, or the training prior."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import CompetitionData, Evaluation, evaluate
from agent_k.ml.harness import evaluate_script
from agent_k.ml.prior import evaluate_prior
from agent_k.ml.recipes import Prior, Script, Solution
from agent_k.sandbox import Limits, Runner, run_sandboxed


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


async def evaluate_solution(request: EvaluationRequest, run: Runner = run_sandboxed) -> Evaluation:
    """Our template cross-validates itself (through `run`, which may be a warm worker); an agent's script goes
    through the harness instead, each run in a sandbox of its own, and is never screened on a sample of rows;
    the training prior is computed here, in this process."""
    r = request
    if isinstance(r.solution, Prior):
        return await evaluate_prior(r.data, r.cv, r.workdir)
    if isinstance(r.solution, Script):
        folds = r.cv.n_folds if r.cv_only else r.folds
        return await evaluate_script(r.solution, r.data, r.cv, r.workdir, r.limits, folds=folds)
    return await evaluate(
        r.solution,
        r.data,
        r.cv,
        r.workdir,
        r.limits,
        folds=r.folds,
        rows=r.rows,
        cv_only=r.cv_only,
        timed_rounds=r.timed_rounds,
        run=run,
    )
