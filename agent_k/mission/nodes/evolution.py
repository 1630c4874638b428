"""Evolution: one generation of the recipe search per graph step, so every generation is checkpointed.

When the search stops (converged, budget or exhausted), one more step blends its best and makes the final pick.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

from pydantic_graph import End

from agent_k.events.models import EvolutionEnsemble, EvolutionGeneration, EvolutionPick, Log
from agent_k.mission.agents import AgentFailed, runs_agent
from agent_k.mission.blending import blend_reserve_s, final_blend
from agent_k.mission.candidates import archive, best_single, feature_drops, out_of_memory_families, search_history
from agent_k.mission.final_pick import final_pick, pick_reserve_s
from agent_k.mission.nodes.base import PhaseContext, PhaseNode
from agent_k.mission.nodes.submission import SubmissionNode
from agent_k.mission.phases import Phase
from agent_k.mission.recovery import Step, StepError, run_step
from agent_k.mission.screening import evaluate_proposals, sample_rows
from agent_k.mission.state import EvolutionState, MissionResult
from agent_k.ml.recipes import ModelFamily, Prior, Recipe
from agent_k.ml.search import EXPLORE, WIDE_EXPLORE, improved, propose
from agent_k.store.status import CandidateStatus, FailureReason

GENERATION = Step(Phase.evolution, "generation", "breed and cross-validate one generation of candidates")
MIN_GENERATION_S = 2.0
FIRST_LOOK_STARTUP_S = 2.0
"""A candidate's fixed cost (interpreter, imports, sandbox), which a sample does not shrink."""
MIN_CANDIDATE_TIMEOUT_S = 20.0
CANDIDATE_SHARE = 0.4
"""The most of Evolution's allowance that one candidate may take (at least MIN_CANDIDATE_TIMEOUT_S)."""


@dataclass
class EvolutionNode(PhaseNode):
    phase = Phase.evolution
    has_agent = True

    async def run(self, ctx: PhaseContext) -> EvolutionNode | SubmissionNode | End[MissionResult]:
        state, deps = ctx.state, ctx.deps
        evolution = state.evolution_state
        if evolution.best_candidate_key is None:
            return self.fail(ctx, FailureReason.no_candidate, "evolution has no valid candidate to submit")
        if evolution.stop_reason is None:

            async def generation() -> bool:
                try:
                    await self._generation(ctx)
                except AgentFailed:
                    raise
                except Exception as exc:  # the step's boundary: its strategy decides, not a traceback
                    raise StepError(FailureReason.generation_failed, f"{type(exc).__name__}: {exc}") from exc
                return True

            try:
                ran = await run_step(state, deps, GENERATION, generation, can_ignore=True)
            except AgentFailed as exc:
                return self.fail(ctx, FailureReason.agent_failed, str(exc))
            except StepError as failed:
                return self.fail(ctx, failed.reason, failed.detail)
            if ran is None:  # ignored: the search stops with what it has, and Submission follows
                evolution.stop_reason = "generation_failed"
            if evolution.stop_reason in (None, "converged"):  # a generation ran: checkpoint it first
                return EvolutionNode()
        await self._final_step(ctx)
        return SubmissionNode()

    async def _final_step(self, ctx: PhaseContext) -> None:
        """The search is over: blend its best, then pick over a second split. Both only improve on the best candidate
        the search found: whatever fails in them leaves that one to submit, and says why."""
        state, deps = ctx.state, ctx.deps
        evolution = state.evolution_state

        def why(step: str, exc: Exception) -> str:
            return f"the {step} failed: {deps.scrub.one_line(f'{type(exc).__name__}: {exc}')}"

        try:
            # Half of Submission's reserve may serve the blend where a generation ran late (it needs seconds).
            left = deps.budget.remaining(self.phase)
            left += max(0.0, deps.budget.remaining(Phase.submission) - left) / 2
            outcomes, blends = await final_blend(deps, state, generation=evolution.generation + 1, timeout_s=left)
        except Exception as exc:
            blend_failed = EvolutionEnsemble(
                members=[], weights=[], cv_score=None, best_single=None, kept=False, reason=why("blend", exc)
            )
            outcomes, blends = [blend_failed], []
        for outcome in outcomes:
            await self.emit(ctx, outcome)
        try:
            pick = await final_pick(deps, state, blends=blends, timeout_s=deps.budget.remaining(self.phase))
        except Exception as exc:
            best = evolution.best_candidate_key
            pick = EvolutionPick(candidates=[], chosen=best, changed=False, reason=why("pick", exc))
        await self.emit(ctx, pick)

    async def _generation(self, ctx: PhaseContext) -> None:
        """Breed and evaluate one generation, or record why the search stops."""
        state, deps = ctx.state, ctx.deps
        evolution = state.evolution_state
        competition, findings = state.selected_competition, state.research_findings
        assert competition is not None and findings is not None
        if state.options.stop_early and competition.scored_by.is_perfect(evolution.best_score):
            evolution.stop_reason = "converged"
            message = f"CV {evolution.best_score:g} is the best {competition.metric} there is: nothing left to improve"
            await self.emit(ctx, Log(message=message))
            return
        # Candidates of this generation (from a run that crashed mid-generation) are not parents: the same
        # proposals come out again, and the ones already evaluated are taken from the archive.
        generation = evolution.generation + 1
        history = [c for c in await archive(deps, state) if c.generation < generation]
        # The training prior fits no model: its runtime says nothing of what a generation's models will take.
        runtimes = [c.runtime_s for c in history if c.succeeded and c.runtime_s and not isinstance(c.recipe, Prior)]
        typical = statistics.median(runtimes) if runtimes else MIN_GENERATION_S
        window = deps.budget.remaining(self.phase)
        parallel = deps.evaluator.parallelism
        # A sample of a forecast's rows would break its series: a forecast is screened on its folds alone.
        tried = {c.recipe.family for c in history if isinstance(c.recipe, Recipe)}
        new_family = any(ModelFamily(f) not in tried for f in findings.model_families)  # proposed first: `propose`
        rows = None if findings.cv.kind == "forward" else sample_rows(findings.n_train, typical, new_family=new_family)

        def batches(seconds: float) -> list[int]:
            return [
                b for b in (2 * parallel, parallel) if seconds >= _cost(typical, b, parallel, rows, findings.n_train)
            ]

        # The final step's time is kept: the blend (seconds) and the pick's second split of the top few.
        remaining = window - blend_reserve_s(history, state) - pick_reserve_s(history, state, parallel)
        fits = batches(remaining)
        if not fits:
            evolution.stop_reason = "budget"
            return
        batch = fits[0]

        widened = evolution.widened_at is not None
        proposals = propose(
            search_history(history),
            findings,
            competition,
            drop_columns=feature_drops(state),
            batch=batch,
            rng=random.Random(f"{state.mission_id}:{generation}"),
            explore=WIDE_EXPLORE if widened else EXPLORE if evolution.no_improvement >= 2 else 0.0,
            seeds=1 if widened else 0,
            avoid=out_of_memory_families(history),
        )
        if runs_agent(state, self.phase):
            from agent_k.mission.agents.evolver import evolver_proposals

            proposals = await evolver_proposals(state, deps, proposals, feature_drops(state), batch)
        if not proposals:
            evolution.stop_reason = evolution.stop_reason or "search_space_exhausted"
            return
        # One slow candidate may not eat the generation's whole window (forests on big data can).
        cap = max(MIN_CANDIDATE_TIMEOUT_S, CANDIDATE_SHARE * deps.budget.allowance(self.phase))
        results = await evaluate_proposals(
            deps,
            state,
            proposals,
            generation=generation,
            phase=self.phase,
            timeout_s=min(remaining, cap),
            parallel=parallel,
            screen=True,
            rows=rows,
        )
        evolution.generation = generation
        if not results:  # no proposal could start, or would have finished, in the time left
            evolution.stop_reason = "budget"
        evolution.evaluated += len(results)
        evolution.failed += sum(1 for r in results if r.status == CandidateStatus.failed)
        evolution.screened_out += sum(1 for r in results if r.status == CandidateStatus.screened_out)
        top = best_single(history + results, competition)
        better = top is not None and top.cv is not None and improved(top.cv, evolution.best_score, competition)
        if top is not None and top.key != evolution.best_candidate_key:  # better CV, or equal CV and log loss
            evolution.best_score, evolution.best_candidate_key = top.cv, top.key
        settle(
            evolution, generation, improved=better, stop_early=state.options.stop_early, patience=deps.settings.patience
        )
        if evolution.widened_at == generation:
            message = "the search converged; widening it (more exploration, seeds of the best) for the budget left"
            await self.emit(ctx, Log(message=message))
        allowance = deps.budget.allowance(self.phase)
        await self.emit(
            ctx,
            EvolutionGeneration(
                generation=generation,
                best_score=evolution.best_score,
                best_candidate_key=evolution.best_candidate_key,
                evaluated=evolution.evaluated,
                budget_used=round(min(1.0, deps.budget.used_in_phase(self.phase) / allowance), 3) if allowance else 1.0,
            ),
        )


def settle(evolution: EvolutionState, generation: int, *, improved: bool, stop_early: bool, patience: int) -> None:
    """Count a generation without improvement; at `patience` of them the search has converged. It then stops
    (with `--stop-early`), or is widened once, to explore more and seed the best recipe until the budget ends."""
    evolution.no_improvement = 0 if improved else evolution.no_improvement + 1
    if evolution.no_improvement < patience or evolution.widened_at is not None:
        return
    if stop_early:
        evolution.stop_reason = "converged"
    else:
        evolution.widened_at, evolution.no_improvement = generation, 0


def _cost(typical_s: float, batch: int, parallel: int, rows: int | None, n_train: int) -> float:
    """The time a generation needs at least: its rounds of full evaluations or, when it is screened on a sample
    (successive halving), its rounds of first looks."""
    rounds = math.ceil(batch / parallel)
    # Screened on a sample, only the first looks must fit: the better half is promoted if its full CV fits too.
    first_looks = rounds * (FIRST_LOOK_STARTUP_S + typical_s * (rows or 0) / n_train)
    return max(MIN_GENERATION_S, (first_looks if rows else typical_s * rounds) * 1.1)
