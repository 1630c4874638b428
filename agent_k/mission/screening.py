"""Cheap-first evaluation: how a generation's candidates are evaluated within its time (docs/architecture.md,
"Search").

Three ways to spend little on a candidate that will lose: successive halving on a sample of large data's rows
(the better half goes on to full CV), a screen on one fold before a costly full CV, and not starting what could
not end in the time left (further for boosting whose rounds end with the time, `agent_k.ml.rounds`). The
archive (`agent_k.mission.candidates`) keeps what each evaluation found."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agent_k import tracing
from agent_k.competition import Competition
from agent_k.competition.research import CVScheme
from agent_k.mission.candidates import ArchivedCandidate, archive, candidate_dir, candidate_limits, record, sizing
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionState
from agent_k.ml.evaluate import CompetitionData, Evaluation, EvaluationRequest
from agent_k.ml.executors import Evaluator
from agent_k.ml.families import TIMED_ROUNDS_STRETCH
from agent_k.ml.recipes import Recipe, Solution
from agent_k.ml.search import Proposal
from agent_k.sandbox import Limits
from agent_k.store.status import CandidateStatus

SCREEN_MIN_RUNTIME_S = 3.0
"""Below this likely runtime a candidate is cheaper to evaluate in full than to screen first."""
SCREEN_RANK = 3
"""A screened candidate goes on to full CV if its first fold beats the SCREEN_RANK-th best candidate's."""
SAMPLE_MIN_TRAIN_ROWS = 20_000
SAMPLE_MIN_RUNTIME_S = 6.0
"""From this many training rows, and when a full evaluation typically takes this long, a generation is first
scored on a sample (successive halving). Below either, full CV is cheap enough, and a sample would only favour
the models that do well on little data (linear ones) over those that win on all of it."""
SAMPLE_SHARE = 0.125
SAMPLE_MIN_ROWS = 5_000
MIN_START_S = 1.0
"""A candidate is not started with less than this left before its generation's deadline (it could not finish)."""


@dataclass(frozen=True)
class Screen:
    """Cheap-first evaluation: run `folds` folds, and go on only if they score at least `threshold`."""

    folds: int
    threshold: float


def sample_rows(n_train: int, typical_runtime_s: float, *, new_family: bool = False) -> int | None:
    """How many rows a generation's first look uses: an eighth of large, costly data (at least 5,000), or None
    where a full evaluation is cheap enough. A generation that brings a family not yet run on this data has no
    cost to go by (forests take five to ten times boosting's on the same rows: on diamonds' 40,000 a random forest
    and extra trees timed out at 35-41 s each, a third of a 120 s mission's time): on large data its first look is
    the sample, whatever the others cost."""
    if n_train < SAMPLE_MIN_TRAIN_ROWS or (typical_runtime_s < SAMPLE_MIN_RUNTIME_S and not new_family):
        return None
    return max(SAMPLE_MIN_ROWS, int(n_train * SAMPLE_SHARE))


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


def time_stretch(solution: Solution) -> float:
    """How far past the time left its projected cost may go: further where its boosting rounds end with the time,
    and that is most of its cost (its text models' fits do not end early)."""
    timed = isinstance(solution, Recipe) and solution.family.spec.stops_early and not solution.text_columns
    return TIMED_ROUNDS_STRETCH if timed else 1.0


def may_finish(solution: Solution, likely_s: float | None, cv: CVScheme, screen: Screen | None, limits: Limits) -> bool:
    """Whether a candidate's first step (its screened fold, or its full CV) likely ends within the time left
    (stretched by `time_stretch`); one that would only time out is not started (a costly family late in a
    generation, where a blend's time is next)."""
    if likely_s is None:
        return True
    first = likely_s * screen.folds / (cv.n_folds + 1) if screen else likely_s
    return first <= limits.timeout_s * time_stretch(solution)


async def screen_then_evaluate(
    evaluator: Evaluator, request: EvaluationRequest, screen: Screen | None
) -> tuple[Evaluation, CandidateStatus]:
    """The request's full evaluation, after a quick screen when one is given. Returns the evaluation and the status.

    Both share the request's timeout. A candidate that passes its screen but whose full CV (its folds, each about
    what the screened fold cost; the submission averages the fold models) would not end in the time left is not
    started: it would only time out, spending that time for nothing."""
    spent, cv = 0.0, request.cv
    if screen is not None:
        quick = await evaluator.evaluate(replace(request, folds=screen.folds))
        if quick.status != CandidateStatus.succeeded or quick.cv_mean is None:
            return quick, CandidateStatus.failed
        if request.data.spec.better(screen.threshold, quick.cv_mean):
            quick.error = f"screened out: {quick.cv_mean:.6g} on {screen.folds} fold(s), needed {screen.threshold:.6g}"
            return quick, CandidateStatus.screened_out
        spent = quick.runtime_s
        likely, left = spent * cv.n_folds / screen.folds, request.limits.timeout_s - spent
        if likely > left * time_stretch(request.solution):
            quick.error = f"screened out: its full CV would take ~{likely:.0f} s, {left:.0f} s were left"
            return quick, CandidateStatus.screened_out
    rest = replace(request.limits, timeout_s=request.limits.timeout_s - spent)
    result = await evaluator.evaluate(replace(request, limits=rest))
    result.runtime_s += spent
    return result, result.status


@dataclass
class _Generation:
    """What a generation's evaluations share: the data, the limits, how many run at once, and the deadline."""

    ctx: GraphContext
    state: MissionState
    phase: Phase
    generation: int
    history: list[ArchivedCandidate]
    data: CompetitionData
    limits: Limits
    slots: asyncio.Semaphore
    deadline: float

    @property
    def known(self) -> dict[str, ArchivedCandidate]:
        return {c.key: c for c in self.history}

    def bounded(self) -> Limits | None:
        """The limits for a candidate starting now: it ends by the generation's deadline, however late it starts
        (a queued one would otherwise get a whole timeout of its own); None when too little is left to start."""
        left = self.deadline - time.monotonic()
        return replace(self.limits, timeout_s=min(self.limits.timeout_s, left)) if left >= MIN_START_S else None

    def request(self, solution: Solution, limits: Limits, *, rows: int | None = None) -> EvaluationRequest:
        assert self.state.research_findings is not None
        workdir = candidate_dir(self.ctx.mission_dir, solution.key)
        return EvaluationRequest(solution, self.data, self.state.research_findings.cv, workdir, limits, rows=rows)

    async def first_look(self, recipe: Solution, rows: int) -> Evaluation | None:
        """CV on a sample of `rows` rows; None when too little time is left to start it."""
        async with self.slots:
            if (now := self.bounded()) is None:
                return None
            with tracing.span(
                "candidate", self.ctx.phase_span, key=recipe.key, recipe=recipe.summary()[:200], rows=rows
            ):
                return await self.ctx.evaluator.evaluate(self.request(recipe, now, rows=rows))

    async def full(self, recipe: Solution, *, screen: bool) -> tuple[Evaluation, CandidateStatus] | None:
        """Full CV (first on one fold where `screen` and its likely cost call for it); None when it could not end
        in the time left, so is not started."""
        assert self.state.selected_competition is not None and self.state.research_findings is not None
        cv = self.state.research_findings.cv
        async with self.slots:
            likely = likely_runtime_s(recipe, self.history)
            quick = screen_for(self.history, self.state.selected_competition, cv, likely) if screen else None
            if (now := self.bounded()) is None or not may_finish(recipe, likely, cv, quick, now):
                return None
            with tracing.span("candidate", self.ctx.phase_span, key=recipe.key, recipe=recipe.summary()[:200]):
                return await screen_then_evaluate(self.ctx.evaluator, self.request(recipe, now), quick)

    async def record(
        self, proposal: Proposal, result: Evaluation, status: CandidateStatus, fidelity: float
    ) -> ArchivedCandidate:
        return await record(
            self.ctx, self.state, proposal.recipe, result, status=status, generation=self.generation,
            parents=proposal.parents, phase=self.phase, fidelity=fidelity,
        )  # fmt: skip


@dataclass(frozen=True)
class _Halving:
    """Successive halving's first look: each sampled recipe's evaluation on `rows` rows, and which go on."""

    rows: int
    fidelity: float
    looks: dict[str, Evaluation]
    unstarted: frozenset[str]
    better_half: frozenset[str]
    promoted: frozenset[str]
    """The better half whose full CV (the look's runtime scaled up by the sample's share) fits in the time left."""
    bar: float | None

    def screened(self, key: str) -> tuple[Evaluation, CandidateStatus]:
        """A look that does not go on, as it is archived: at the sample's fidelity, with why."""
        result = self.looks[key]
        if result.status != CandidateStatus.succeeded:
            return result, CandidateStatus.failed
        why = "no time left for its full CV" if key in self.better_half else f"the better half reached {self.bar:.6g}"
        result.error = f"screened out on {self.rows:,} rows ({self.fidelity:.0%}): {result.cv_mean:.6g}; {why}"
        return result, CandidateStatus.screened_out


async def _halve(generation: _Generation, sampled: Sequence[Solution], rows: int) -> _Halving:
    competition, findings = generation.state.selected_competition, generation.state.research_findings
    assert competition is not None and findings is not None
    looks = await asyncio.gather(*(generation.first_look(recipe, rows) for recipe in sampled))
    done = {r.key: e for r, e in zip(sampled, looks, strict=True) if e is not None}
    scored = [(r, e) for r in sampled if (e := done.get(r.key)) and e.status == CandidateStatus.succeeded]
    scored = competition.scored_by.ranked(
        [(r, e) for r, e in scored if e.cv_mean is not None], lambda re: re[1].cv_mean
    )
    better_half = scored[: (len(scored) + 1) // 2]
    fidelity = min(1.0, rows / max(1, findings.n_train))
    left = generation.deadline - time.monotonic()
    return _Halving(
        rows=rows,
        fidelity=fidelity,
        looks=done,
        unstarted=frozenset(r.key for r, e in zip(sampled, looks, strict=True) if e is None),
        better_half=frozenset(r.key for r, _ in better_half),
        promoted=frozenset(
            r.key for r, e in better_half if e.runtime_s / max(fidelity, 1e-3) <= left * time_stretch(r)
        ),
        bar=better_half[-1][1].cv_mean if better_half else None,
    )


async def _start(
    ctx: GraphContext, state: MissionState, *, phase: Phase, generation: int, timeout_s: float, parallel: int, n: int
) -> _Generation:
    competition, findings = state.selected_competition, state.research_findings
    assert competition is not None and findings is not None and state.data_dir is not None
    history = await archive(ctx, state)
    data = await asyncio.to_thread(CompetitionData.load, competition, Path(state.data_dir), findings.cv)
    size = sizing(ctx, state, parallel)
    threads = max(1, ctx.settings.parallel_evaluations // max(1, min(size.parallel, n)))
    limits = candidate_limits(ctx, state, timeout_s=timeout_s, threads=threads, memory_mb=size.memory_mb)
    slots, deadline = asyncio.Semaphore(size.parallel), time.monotonic() + timeout_s
    return _Generation(ctx, state, phase, generation, history, data, limits, slots, deadline)


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
    run = await _start(
        ctx, state, phase=phase, generation=generation, timeout_s=timeout_s, parallel=parallel, n=len(proposals)
    )
    known = run.known
    fresh = [p.recipe for p in proposals if p.recipe.key not in known]
    sampled = [r for r in fresh if isinstance(r, Recipe)] if rows and len(fresh) > 1 else []
    halving = await _halve(run, sampled, rows) if sampled and rows else None

    async def one(proposal: Proposal) -> ArchivedCandidate | None:
        key = proposal.recipe.key
        if key in known:
            return known[key]
        look = halving.looks.get(key) if halving else None
        if halving and key in halving.unstarted:
            return None
        if halving and look is not None and key not in halving.promoted:
            (result, status), fidelity = halving.screened(key), halving.fidelity
        else:
            if (done := await run.full(proposal.recipe, screen=screen and look is None)) is None:
                return None
            (result, status), fidelity = done, 1.0
            result.runtime_s += look.runtime_s if look else 0.0
        return await run.record(proposal, result, status, fidelity)

    return [c for c in await asyncio.gather(*(one(p) for p in proposals)) if c is not None]
