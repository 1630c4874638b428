"""Evaluate recipes for a mission and keep every result in the candidate archive (idempotently)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path

from agent_k import tracing
from agent_k.competition import Competition
from agent_k.competition.research import CVScheme
from agent_k.events.models import CandidateEvaluated
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.screening import Screen, may_finish, screen_then_evaluate, time_stretch
from agent_k.mission.state import CandidateMemory, MissionState
from agent_k.ml.evaluate import CompetitionData, Evaluation
from agent_k.ml.recipes import Ensemble, ModelFamily, Recipe, Solution, load_solution
from agent_k.ml.requests import EvaluationRequest
from agent_k.ml.search import Proposal, Scored
from agent_k.ml.sizing import data_mb, size_candidates
from agent_k.sandbox import Limits, UntrustedOutput, read_regular
from agent_k.secrets import Scrubber
from agent_k.store.models import CandidateRow, utcnow
from agent_k.store.status import CandidateStatus

LOG_BYTES = 1 << 20
SOURCE_BYTES = 1 << 20
SCREEN_MIN_RUNTIME_S = 3.0
"""Below this likely runtime a candidate is cheaper to evaluate in full than to screen first."""
SCREEN_RANK = 3
"""A screened candidate goes on to full CV if its first fold beats the SCREEN_RANK-th best candidate's."""
SAMPLE_MIN_TRAIN_ROWS = 20_000
SAMPLE_MIN_RUNTIME_S = 6.0
"""From this many training rows, and when a full evaluation typically takes this long, a generation is first
scored on a sample (successive halving). Below either, full CV is cheap enough, and a sample would only favour
the models that do well on little data (linear ones) over those that win on all of it."""
MIN_START_S = 1.0
"""A candidate is not started with less than this left before its generation's deadline (it could not finish)."""
SAMPLE_SHARE = 0.125
SAMPLE_MIN_ROWS = 5_000


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


def sample_rows(n_train: int, typical_runtime_s: float, *, new_family: bool = False) -> int | None:
    """How many rows a generation's first look uses: an eighth of large, costly data (at least 5,000), or None
    where a full evaluation is cheap enough. A generation that brings a family not yet run on this data has no
    cost to go by (forests take five to ten times boosting's on the same rows: on diamonds' 40,000 a random forest
    and extra trees timed out at 35-41 s each, a third of a 120 s mission's time): on large data its first look is
    the sample, whatever the others cost."""
    if n_train < SAMPLE_MIN_TRAIN_ROWS or (typical_runtime_s < SAMPLE_MIN_RUNTIME_S and not new_family):
        return None
    return max(SAMPLE_MIN_ROWS, int(n_train * SAMPLE_SHARE))


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


def likely_runtime_s(recipe: Solution, candidates: list[ArchivedCandidate]) -> float | None:
    """What a full evaluation of `recipe` likely takes: the median of its model family's full runs so far, else
    of all full runs (None: none yet). Families differ tenfold on the same data (forests against boosting)."""
    full = [c for c in candidates if c.succeeded and c.fidelity >= 1.0]
    kin = [c for c in full if isinstance(recipe, Recipe) and getattr(c.recipe, "family", None) == recipe.family]
    times = [c.runtime_s for c in kin or full if c.runtime_s]
    return statistics.median(times) if times else None


def screen_for(
    candidates: list[ArchivedCandidate], competition: Competition, cv: CVScheme, likely_s: float | None
) -> Screen | None:
    """Screen on one fold a recipe whose full CV likely takes `likely_s` (`likely_runtime_s`), when that is costly
    and there is a reference to beat; otherwise None."""
    done = [c for c in candidates if c.succeeded and c.cv is not None and c.fold_scores]
    if likely_s is None or likely_s < SCREEN_MIN_RUNTIME_S or cv.n_folds < 3 or len(done) < SCREEN_RANK:
        return None
    done = competition.scored_by.ranked(done, lambda c: c.cv)
    return Screen(folds=1, threshold=done[SCREEN_RANK - 1].fold_scores[0])


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


async def evaluate_proposals(
    ctx: GraphContext,
    state: MissionState,
    proposals: list[Proposal],
    *,
    generation: int,
    phase: Phase,
    timeout_s: float,
    parallel: int,
    screen: bool = False,
    rows: int | None = None,
) -> list[ArchivedCandidate]:
    """Evaluate in parallel; a recipe already in the archive (e.g. before a crash) is not run again. With
    `screen`, a recipe whose full CV is likely costly is first run on one fold (`screen_for`).

    With `rows`, successive halving: every new recipe is first cross-validated on a sample of that many rows,
    and the better half goes on to full CV when its likely runtime (the first look's, scaled up by the sample's
    share) fits in the time left. The others are archived as screened out, at their fidelity, so a sample's
    score is never compared with a full one."""
    competition, findings = state.selected_competition, state.research_findings
    assert competition is not None and findings is not None and state.data_dir is not None
    history = await archive(ctx, state)
    known = {c.key: c for c in history}
    data = await asyncio.to_thread(CompetitionData.load, competition, Path(state.data_dir), findings.cv)
    size = sizing(ctx, state, parallel)
    parallel = size.parallel
    threads = max(1, ctx.settings.parallel_evaluations // max(1, min(parallel, len(proposals))))
    limits = candidate_limits(ctx, state, timeout_s=timeout_s, threads=threads, memory_mb=size.memory_mb)
    semaphore = asyncio.Semaphore(parallel)
    fresh = [p for p in proposals if p.recipe.key not in known]
    sampled = [p for p in fresh if isinstance(p.recipe, Recipe)] if rows and len(fresh) > 1 else []
    fidelity = min(1.0, (rows or 0) / max(1, findings.n_train))
    started = time.monotonic()
    deadline = started + timeout_s

    def bounded() -> Limits | None:
        """The limits for a candidate starting now: it ends by the generation's deadline, however late it starts
        (a queued one would otherwise get a whole timeout of its own); None when too little is left to start."""
        left = deadline - time.monotonic()
        return replace(limits, timeout_s=min(limits.timeout_s, left)) if left >= MIN_START_S else None

    async def first_look(proposal: Proposal) -> tuple[Proposal, Evaluation | None]:
        async with semaphore:
            if (now := bounded()) is None:
                return proposal, None
            workdir = candidate_dir(ctx.mission_dir, proposal.recipe.key)
            summary = proposal.recipe.summary()[:200]
            with tracing.span("candidate", ctx.phase_span, key=proposal.recipe.key, recipe=summary, rows=rows or 0):
                request = EvaluationRequest(proposal.recipe, data, findings.cv, workdir, now, rows=rows)
                return proposal, await ctx.evaluator.evaluate(request)

    gathered = await asyncio.gather(*(first_look(p) for p in sampled))
    unstarted = {p.recipe.key for p, e in gathered if e is None}
    looks = {p.recipe.key: (p, e) for p, e in gathered if e is not None}
    scored = [(p, e) for p, e in looks.values() if e.status == CandidateStatus.succeeded and e.cv_mean is not None]
    scored = competition.scored_by.ranked(scored, lambda pe: pe[1].cv_mean)
    left = timeout_s - (time.monotonic() - started)
    better_half = scored[: (len(scored) + 1) // 2]
    promoted = {
        p.recipe.key for p, e in better_half if e.runtime_s / max(fidelity, 1e-3) <= left * time_stretch(p.recipe)
    }
    bar = better_half[-1][1].cv_mean if better_half else None

    async def one(proposal: Proposal) -> ArchivedCandidate | None:
        recipe = proposal.recipe
        if recipe.key in known:
            return known[recipe.key]
        if recipe.key in unstarted:
            return None
        look = looks.get(recipe.key)
        if look is not None and recipe.key not in promoted:
            result, status, share = look[1], CandidateStatus.failed, fidelity
            if result.status == CandidateStatus.succeeded:
                status = CandidateStatus.screened_out
                in_half = any(p.recipe.key == recipe.key for p, _ in better_half)
                why = "no time left for its full CV" if in_half else f"the better half reached {bar:.6g}"
                result.error = f"screened out on {rows:,} rows ({fidelity:.0%}): {result.cv_mean:.6g}; {why}"
        else:
            workdir = candidate_dir(ctx.mission_dir, recipe.key)
            async with semaphore:
                likely = likely_runtime_s(recipe, history)
                quick = screen_for(history, competition, findings.cv, likely) if screen and not look else None
                if (now := bounded()) is None or not may_finish(recipe, likely, findings.cv, quick, now):
                    return None
                with tracing.span("candidate", ctx.phase_span, key=recipe.key, recipe=recipe.summary()[:200]):
                    result, status = await screen_then_evaluate(
                        ctx.evaluator, recipe, data, findings.cv, workdir, now, quick
                    )
            share = 1.0
            if look is not None:
                result.runtime_s += look[1].runtime_s
        return await record(
            ctx,
            state,
            recipe,
            result,
            status=status,
            generation=generation,
            parents=proposal.parents,
            phase=phase,
            fidelity=share,
        )

    return [c for c in await asyncio.gather(*(one(p) for p in proposals)) if c is not None]
