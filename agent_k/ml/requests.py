"""The evaluation every evaluator runs for a request (`agent_k.ml.evaluate.EvaluationRequest`, which every hop
passes on whole): our template, an agent's script through the harness, or the training prior."""

from __future__ import annotations

from agent_k.ml.evaluate import Evaluation, EvaluationRequest, evaluate
from agent_k.ml.harness import evaluate_script
from agent_k.ml.prior import evaluate_prior
from agent_k.ml.recipes import Prior, Script
from agent_k.sandbox import Runner, run_sandboxed


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
    return await evaluate(r, run)
