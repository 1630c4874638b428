"""Prototype: a first valid solution (the baseline), scored by our CV from its out-of-fold predictions.

Its one step, `baseline`, runs under the phase's error strategy: by default a failed baseline (every
template crashed, say on a file laid out as the workflow does not expect) goes to the repair agent where one
is available (amphiflow, or auto with a model), and otherwise ends the mission with `no_valid_baseline`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_graph import End

from agent_k.mission.agents.repairer import repair_step
from agent_k.mission.candidates import ArchivedCandidate, evaluate_proposals, feature_drops, search_history
from agent_k.mission.nodes.base import PhaseContext, PhaseNode
from agent_k.mission.nodes.evolution import EvolutionNode
from agent_k.mission.phases import Phase
from agent_k.mission.recovery import RepairGoal, Step, StepError, run_step
from agent_k.mission.state import MissionResult
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.search import Proposal, default_recipe, feature_options, ranked

CHEAP_BASELINE = ModelFamily.linear
"""Runs beside the recommended family, so a tight budget still yields a baseline."""
FALLBACK = ModelFamily.hist_gradient_boosting
BASELINE = Step(
    Phase.prototype,
    "baseline",
    "produce a first valid solution.py whose cross-validated score (measured by the mission from its "
    "out-of-fold predictions) becomes the baseline for the search",
)


@dataclass
class PrototypeNode(PhaseNode):
    phase = Phase.prototype

    async def run(self, ctx: PhaseContext) -> EvolutionNode | End[MissionResult]:
        state, deps = ctx.state, ctx.deps

        async def repair(error: StepError) -> ArchivedCandidate:
            return await repair_step(state, deps, RepairGoal.of(BASELINE, error))

        try:
            baseline = await run_step(state, deps, BASELINE, lambda: self._baseline(ctx), repair=repair)
        except StepError as failed:
            return self.fail(ctx, failed.reason, failed.detail)
        assert baseline is not None  # the baseline cannot be ignored: nothing follows without one
        state.prototype_code = str(baseline.folder / "solution.py")
        state.prototype_score = baseline.cv
        evolution = state.evolution_state
        evolution.best_candidate_key, evolution.best_score = baseline.key, baseline.cv
        return EvolutionNode()

    async def _baseline(self, ctx: PhaseContext) -> ArchivedCandidate:
        """The best of the recommended family and a fast linear one (then a fallback family if both fail)."""
        state, deps = ctx.state, ctx.deps
        competition, findings = state.selected_competition, state.research_findings
        assert competition is not None and findings is not None
        drops = feature_drops(state)
        dates = feature_options(findings, competition, drops).dates
        first = ModelFamily(findings.model_families[0])
        tried: list[ArchivedCandidate] = []
        for families in ({first, CHEAP_BASELINE}, {FALLBACK} - {first, CHEAP_BASELINE}):
            # The baseline may use the time up to the end of Evolution's window: without one, nothing follows.
            timeout = deps.budget.remaining(Phase.evolution)
            if timeout < 1 or not families:
                break
            proposals = [Proposal(default_recipe(f, drops, dates), ()) for f in sorted(families)]
            tried += await evaluate_proposals(
                deps,
                state,
                proposals,
                generation=0,
                phase=self.phase,
                timeout_s=timeout,
                parallel=deps.evaluator.parallelism,
            )
            state.evolution_state.evaluated = len(tried)
            state.evolution_state.failed = sum(1 for c in tried if not c.succeeded)
            best = ranked(search_history(tried), competition)
            if best:
                return next(c for c in tried if c.key == best[0].recipe.key)
        errors = tuple(f"{c.recipe.summary()}: {(c.error or c.status).splitlines()[0]}" for c in tried)
        raise StepError("no_valid_baseline", "; ".join(errors) or "no time left for a baseline", errors)
