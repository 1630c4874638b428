"""Evolution: one generation of the recipe search per graph step, so every generation is checkpointed.

When the search stops (converged, budget or exhausted), one more step tries a blend of its best.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

from pydantic_graph import End

from agent_k.events.models import EvolutionGeneration
from agent_k.mission.agents import AgentFailed, evolver_proposals
from agent_k.mission.blending import blend_reserve_s, final_blend
from agent_k.mission.candidates import (
    archive,
    best_single,
    evaluate_proposals,
    feature_drops,
    screen_for,
    search_history,
)
from agent_k.mission.nodes.base import PhaseContext, PhaseNode
from agent_k.mission.nodes.submission import SubmissionNode
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionResult
from agent_k.ml.search import EXPLORE, PATIENCE, improved, propose
from agent_k.store.status import CandidateStatus

MIN_GENERATION_S = 2.0
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
            return self.fail(ctx, "no_candidate", "evolution has no valid candidate to submit")
        if evolution.stop_reason is None:
            try:
                await self._generation(ctx)
            except AgentFailed as exc:
                return self.fail(ctx, "agent_failed", str(exc))
            if evolution.stop_reason in (None, "converged"):  # a generation ran: checkpoint it first
                return EvolutionNode()
        # The search is over: this last step blends its best.
        outcome = await final_blend(
            deps, state, generation=evolution.generation + 1, timeout_s=deps.budget.remaining(self.phase)
        )
        await self.emit(ctx, outcome)
        return SubmissionNode()

    async def _generation(self, ctx: PhaseContext) -> None:
        """Breed and evaluate one generation, or record why the search stops."""
        state, deps = ctx.state, ctx.deps
        evolution = state.evolution_state
        competition, findings = state.selected_competition, state.research_findings
        assert competition is not None and findings is not None
        # Candidates of this generation (from a run that crashed mid-generation) are not parents: the same
        # proposals come out again, and the ones already evaluated are taken from the archive.
        generation = evolution.generation + 1
        history = [c for c in await archive(deps, state) if c.generation < generation]
        runtimes = [c.runtime_s for c in history if c.succeeded and c.runtime_s]
        typical = statistics.median(runtimes) if runtimes else MIN_GENERATION_S
        remaining = deps.budget.remaining(self.phase) - blend_reserve_s(history, state)
        parallel = deps.evaluator.parallelism
        batch = 2 * parallel
        if remaining < max(MIN_GENERATION_S, typical * math.ceil(batch / parallel) * 1.1):
            evolution.stop_reason = "budget"
            return

        proposals = propose(
            search_history(history),
            findings,
            competition,
            drop_columns=feature_drops(state),
            batch=batch,
            rng=random.Random(f"{state.mission_id}:{generation}"),
            explore=EXPLORE if evolution.no_improvement >= 2 else 0.0,
        )
        proposals = await evolver_proposals(state, deps, proposals, feature_drops(state), batch)
        if not proposals:
            evolution.stop_reason = "search_space_exhausted"
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
            screen=screen_for(history, competition, findings.cv, typical),
        )
        evolution.generation = generation
        evolution.evaluated += len(results)
        evolution.failed += sum(1 for r in results if r.status == CandidateStatus.failed)
        evolution.screened_out += sum(1 for r in results if r.status == CandidateStatus.screened_out)
        top = best_single(history + results, competition)
        if top is not None and top.cv is not None and improved(top.cv, evolution.best_score, competition):
            evolution.best_score, evolution.best_candidate_key = top.cv, top.key
            evolution.no_improvement = 0
        else:
            evolution.no_improvement += 1
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
        if evolution.no_improvement >= PATIENCE:
            evolution.stop_reason = "converged"
