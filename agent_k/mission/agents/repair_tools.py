"""The repair agent's tools: the failed step, the competition's files as they are, and a way to try a fix.

A fix is measured like any candidate: our harness cross-validates it (the held-out labels withheld from it) and
the archive keeps it, so a repaired step is held to the same checks as a workflow one.
"""

from __future__ import annotations

import asyncio
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic_ai import ModelRetry, RunContext

from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.candidates import ArchivedCandidate
from agent_k.mission.phases import Phase
from agent_k.mission.recovery import StepError
from agent_k.mission.screening import evaluate_proposals
from agent_k.ml.recipes import Script
from agent_k.ml.search import Proposal
from agent_k.store.status import FailureReason

if TYPE_CHECKING:
    from agent_k.mission.agents.tools import PhaseTools

DataFile = Literal["train.csv", "test.csv", "sample_submission.csv", "description.md"]
MAX_LINES = 50
MAX_LINE_CHARS = 300


def register_repair_tools(tools: PhaseTools) -> None:
    @tools.tool
    def step_failure(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """The step that failed: its name, its intent, the error, and what each failed attempt said."""
        goal = ctx.deps.repair
        if goal is None:
            raise ModelRetry("no step has failed; there is nothing to repair")
        return {"step": goal.step.name, "intent": goal.step.intent, "error": goal.error, "attempts": goal.failures}

    @tools.tool
    async def read_data_file(ctx: RunContext[AgentDeps], name: DataFile, first_lines: int = 15) -> dict[str, Any]:
        """The first lines of one of the competition's files exactly as they are (at most 50 lines)."""
        data_dir = ctx.deps.state.data_dir
        if data_dir is None:
            raise ModelRetry("the competition's files are not fetched yet")
        path = Path(data_dir) / name
        if not path.is_file():
            raise ModelRetry(f"there is no {name}")
        lines = await asyncio.to_thread(_head, path, max(1, min(first_lines, MAX_LINES)))
        return {"file": name, "bytes": path.stat().st_size, "lines": lines}

    @tools.tool
    async def try_solution(ctx: RunContext[AgentDeps], source: str) -> dict[str, Any]:
        """Cross-validate a complete solution.py (`python solution.py --data DIR --out FILE`: train on
        DIR/train.csv, write predictions for every id of DIR/test.csv in the submission format). Our harness
        scores it; the result says its CV score, or why it failed."""
        try:
            candidate = await evaluate_script(ctx.deps, source)
        except StepError as exc:
            return {"status": "failed", "error": exc.detail}
        return {"key": candidate.key, "status": candidate.status, "cv": candidate.cv, "error": candidate.error}


async def evaluate_script(deps: AgentDeps, source: str) -> ArchivedCandidate:
    """Evaluate a repair's script as a Prototype candidate (idempotent: the same source is evaluated once).
    Raises `StepError` when no time is left to."""
    mission, state = deps.mission, deps.state
    goal = deps.repair
    note = f"repair of {goal.step.name}" if goal else "repair"
    # Like the workflow's baseline, a repaired one may use the time up to the end of Evolution's window.
    window = Phase.evolution if deps.phase is Phase.prototype else deps.phase
    evaluated = await evaluate_proposals(
        mission,
        state,
        [Proposal(Script(source=source, note=note), ())],
        generation=0,
        phase=deps.phase,
        timeout_s=max(1.0, mission.budget.remaining(window)),
        parallel=1,
    )
    if not evaluated:
        raise StepError(FailureReason.repair_failed, "no time was left to cross-validate the repair")
    return evaluated[0]


def _head(path: Path, lines: int) -> list[str]:
    with path.open(errors="replace") as file:
        return [line.rstrip("\n")[:MAX_LINE_CHARS] for line in islice(file, lines)]
