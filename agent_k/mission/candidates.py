"""The candidate archive: every evaluated solution of a mission, kept once (idempotently), and what one candidate
may use (its memory, threads and sandbox). How a generation's candidates are evaluated is `screening`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from agent_k.competition import Competition
from agent_k.events.models import CandidateEvaluated
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import CandidateMemory, MissionState
from agent_k.ml.evaluate import Evaluation
from agent_k.ml.recipes import Ensemble, ModelFamily, Recipe, Solution, load_solution
from agent_k.ml.search import Scored
from agent_k.ml.sizing import data_mb, size_candidates
from agent_k.sandbox import Limits, UntrustedOutput, read_regular
from agent_k.secrets import Scrubber
from agent_k.store.models import CandidateRow, utcnow
from agent_k.store.status import CandidateStatus

LOG_BYTES = 1 << 20
SOURCE_BYTES = 1 << 20


@dataclass(frozen=True)
class ArchivedCandidate:
    key: str
    recipe: Solution
    generation: int
    status: CandidateStatus
    cv: float | None
    fold_scores: list[float]
    runtime_s: float | None
    error: str | None
    folder: Path
    fidelity: float = 1.0
    log_loss: float | None = None
    resplit_cv: float | None = None

    @property
    def succeeded(self) -> bool:
        return self.status == CandidateStatus.succeeded

    def source(self) -> str | None:
        """Its solution.py, read as untrusted (a regular file of a script's size), or None."""
        try:
            return read_regular(self.folder / "solution.py", SOURCE_BYTES).decode(errors="replace")
        except UntrustedOutput:
            return None

    @classmethod
    def from_row(cls, row: CandidateRow, mission_dir: Path) -> ArchivedCandidate:
        return cls(
            key=row.key,
            recipe=load_solution(row.recipe),
            generation=row.generation,
            status=CandidateStatus(row.status),
            cv=row.cv_mean,
            fold_scores=json.loads(row.fold_scores or "[]"),
            runtime_s=row.runtime_s,
            error=row.error_tail,
            folder=candidate_dir(mission_dir, row.key),
            fidelity=row.fidelity,
            log_loss=row.log_loss,
            resplit_cv=row.resplit_cv,
        )

    def rank(self, competition: Competition) -> tuple[float, float]:
        """Sorts candidates best last: by CV, then, between equal CV scores, by lower out-of-fold log loss
        (accuracy on a few hundred rows ties often, and a confident, calibrated model is the safer pick)."""
        return (-competition.scored_by.rank_key(self.cv), -(self.log_loss if self.log_loss is not None else math.inf))


def search_history(candidates: list[ArchivedCandidate]) -> list[Scored]:
    """Single-recipe candidates as the search sees them (ensembles are never parents)."""
    return [Scored(c.recipe, c.cv if c.succeeded else None) for c in candidates if isinstance(c.recipe, Recipe)]


def out_of_memory_families(candidates: list[ArchivedCandidate]) -> frozenset[ModelFamily]:
    """Families a candidate of which ran out of memory on this data: the search stops proposing them."""
    return frozenset(
        c.recipe.family
        for c in candidates
        if isinstance(c.recipe, Recipe) and c.status == CandidateStatus.failed and "out of memory" in (c.error or "")
    )


def best_single(candidates: list[ArchivedCandidate], competition: Competition) -> ArchivedCandidate | None:
    """The best evaluated candidate that is not a blend: workflow recipes and agents' recipes and scripts alike."""
    done = [c for c in candidates if c.succeeded and c.cv is not None and not isinstance(c.recipe, Ensemble)]
    return max(done, key=lambda c: c.rank(competition), default=None)


def feature_drops(state: MissionState) -> tuple[str, ...]:
    """Id-like columns, leakage suspects and columns the research plan left out, unless the user keeps them."""
    findings = state.research_findings
    assert findings is not None and state.selected_competition is not None
    drop = [*findings.id_like, *findings.leakage_suspects, *findings.excluded]
    keep = {state.selected_competition.id_column, *state.options.keep_columns}
    return tuple(sorted({c for c in drop if c not in keep}))


def sizing(ctx: GraphContext, state: MissionState, parallel: int) -> CandidateMemory:
    """Memory per candidate and how many run at once, for this mission's data on this machine (decided once per
    mission, then kept in its state)."""
    assert state.data_dir is not None
    if state.candidate_memory is None:
        size = size_candidates(data_mb(Path(state.data_dir)), parallel, cap_mb=ctx.settings.candidate_memory_mb)
        state.candidate_memory = CandidateMemory(memory_mb=size.memory_mb, parallel=size.parallel)
    decided = state.candidate_memory
    return decided.model_copy(update={"parallel": max(1, min(parallel, decided.parallel))})


def candidate_limits(
    ctx: GraphContext, state: MissionState, *, timeout_s: float, threads: int, memory_mb: int
) -> Limits:
    """What one candidate of this mission may use, and the sandbox it runs in."""
    forced = ctx.settings.sandbox
    return Limits(
        timeout_s=max(1.0, timeout_s),
        memory_mb=memory_mb,
        threads=threads,
        sandbox=None if forced == "auto" else forced,  # on a Dask worker: that machine's best
        allow_unsandboxed_code=state.options.allow_unsandboxed_code,
        user=ctx.settings.sandbox_user,
    )


def _scrub_logs(folder: Path, scrub: Scrubber) -> None:
    """A candidate's logs (its own, and each fold's) lose every secret value they may have printed."""
    if not scrub.values:
        return
    for log in (*folder.glob("*.log"), *folder.glob("fold*/*.log")):
        with contextlib.suppress(OSError, UntrustedOutput):
            text = read_regular(log, LOG_BYTES).decode(errors="replace")
            if (clean := scrub(text)) != text:
                log.write_text(clean)


def candidate_dir(mission_dir: Path, key: str) -> Path:
    return mission_dir / "candidates" / key


async def archive(ctx: GraphContext, state: MissionState) -> list[ArchivedCandidate]:
    rows = await asyncio.to_thread(ctx.store.candidates, state.mission_id)
    return [ArchivedCandidate.from_row(r, ctx.mission_dir) for r in rows]


async def record(
    ctx: GraphContext,
    state: MissionState,
    solution: Solution,
    result: Evaluation,
    *,
    status: CandidateStatus,
    generation: int,
    parents: tuple[str, ...],
    phase: Phase,
    fidelity: float = 1.0,
) -> ArchivedCandidate:
    """Archive one evaluated candidate and announce it. What its code printed is scrubbed of secrets first."""
    await asyncio.to_thread(_scrub_logs, candidate_dir(ctx.mission_dir, solution.key), ctx.scrub)
    row = CandidateRow(
        mission_id=state.mission_id,
        key=solution.key,
        generation=generation,
        recipe=solution.model_dump_json(),
        script_path=str(result.script_path) if result.script_path else None,
        cv_mean=result.cv_mean if status == CandidateStatus.succeeded else None,
        fold_scores=json.dumps(result.fold_scores),
        runtime_s=result.runtime_s,
        parents=json.dumps(list(parents)),
        status=status,
        error_tail=ctx.scrub.one_line(result.error),
        fidelity=round(fidelity, 4),
        log_loss=result.log_loss if status == CandidateStatus.succeeded else None,
        created_at=utcnow(),
    )
    await asyncio.to_thread(ctx.store.save_candidate, row)
    await ctx.events.emit(
        CandidateEvaluated(
            candidate_key=solution.key,
            generation=generation,
            recipe=solution.summary(),
            status=status,
            cv_score=row.cv_mean,
            runtime_s=result.runtime_s,
            error=row.error_tail,
            fidelity=row.fidelity,
        ),
        phase,
    )
    return ArchivedCandidate.from_row(row, ctx.mission_dir)
