"""Prototype: a first valid solution (the baseline), scored by our CV from its out-of-fold predictions.

First the training prior (class frequencies, or the target's mean): no model, computed in this process in
milliseconds, and always a valid file. Then the models, when they can finish before Evolution's deadline: the
best of them is the baseline. Its one step, `baseline`, runs under the phase's error strategy: by default a
failed baseline (every template crashed, say on a file laid out as the workflow does not expect) goes to the
repair agent where one is available (amphiflow, or auto with a model). Only when that fails too, or when the
budget leaves no room for a model at all, does the prior become the baseline, and the mission says so in a note.
It ends with `no_valid_baseline` only when not even the prior could be computed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_graph import End

from agent_k.events.models import Log
from agent_k.mission.candidates import ArchivedCandidate, feature_drops, search_history
from agent_k.mission.fallback import archive_prior
from agent_k.mission.nodes.base import PhaseContext, PhaseNode
from agent_k.mission.nodes.evolution import EvolutionNode
from agent_k.mission.phases import Phase
from agent_k.mission.recovery import RepairGoal, Step, StepError, run_step
from agent_k.mission.screening import evaluate_proposals
from agent_k.mission.state import MissionResult
from agent_k.ml.families import affordable
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.search import Proposal, first_recipes, ranked
from agent_k.sandbox import shared_reader
from agent_k.store.status import FailureReason

MODEL_MIN_S = 2.0
"""Models are not started with less than this before Evolution's deadline: a cold one takes ~1.5 s on idle
cores, more on busy ones, and one cut off at its timeout leaves nothing."""
READ_MARGIN_S = 0.5
"""Kept between a model's timeout and the deadline: stopping it, and reading what it left."""
CHEAP_BASELINE = ModelFamily.linear
"""Runs beside the recommended family, so a tight budget still yields a baseline; it, and the fallback, only where
their fit is affordable for the classes (`agent_k.ml.families.affordable`)."""
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
        shared_reader().prestart()  # Submission reads the final file through it: have it ready
        prior = await archive_prior(deps, state, self.phase)

        async def repair(error: StepError) -> ArchivedCandidate:
            from agent_k.mission.agents.repairer import repair_step  # pydantic-ai loads when a step needs a repair

            return await repair_step(state, deps, RepairGoal.of(BASELINE, error))

        try:
            baseline = await run_step(state, deps, BASELINE, lambda: self._baseline(ctx, prior), repair=repair)
        except StepError as failed:
            if not prior.succeeded:
                return self.fail(ctx, failed.reason, failed.detail)
            baseline = prior
            await self._settle_for_prior(ctx, f"no model gave a valid baseline ({failed.detail})")
        assert baseline is not None  # the baseline cannot be ignored: nothing follows without one
        state.prototype_code = str(baseline.folder / "solution.py")
        state.prototype_score = baseline.cv
        evolution = state.evolution_state
        evolution.best_candidate_key, evolution.best_score = baseline.key, baseline.cv
        return EvolutionNode()

    async def _settle_for_prior(self, ctx: PhaseContext, why: str) -> None:
        """Say why the baseline is the prior; Submission repeats it in the result if the prior is submitted."""
        ctx.state.prior_reason = ctx.deps.scrub(why)
        message = f"the baseline is the training prior, not a model: {ctx.state.prior_reason}"
        await self.emit(ctx, Log(level="warning", message=message))

    async def _baseline(self, ctx: PhaseContext, prior: ArchivedCandidate) -> ArchivedCandidate:
        """The best of the recommended family and a fast linear one (then a fallback family if both fail); the
        prior when the budget leaves no room for a model."""
        state, deps = ctx.state, ctx.deps
        competition, findings = state.selected_competition, state.research_findings
        assert competition is not None and findings is not None
        drops = feature_drops(state)
        first = ModelFamily(findings.model_families[0])
        rows, classes = findings.n_train, len(competition.classes or [])
        cheap, fallback = ({f} if affordable(f, rows, classes) else set() for f in (CHEAP_BASELINE, FALLBACK))
        tried: list[ArchivedCandidate] = []
        for families in ({first} | cheap, fallback - {first} - cheap):
            # The baseline may use the time up to the end of Evolution's window: without one, nothing follows.
            timeout = deps.budget.remaining(Phase.evolution) - READ_MARGIN_S
            if timeout < MODEL_MIN_S or not families:
                break
            proposals = [Proposal(r, ()) for r in first_recipes(sorted(families), findings, competition, drops)]
            tried += await evaluate_proposals(
                deps,
                state,
                proposals,
                generation=0,
                phase=self.phase,
                timeout_s=timeout,
                parallel=deps.evaluator.parallelism,
            )
            state.evolution_state.evaluated = len(tried) + 1
            state.evolution_state.failed = sum(1 for c in tried if not c.succeeded) + (not prior.succeeded)
            best = ranked(search_history(tried), competition)
            if best:
                return next(c for c in tried if c.key == best[0].recipe.key)
        no_time = all("timed out" in (c.error or "") for c in tried)  # none started is no time too
        if no_time and prior.succeeded:
            left = deps.budget.remaining(Phase.evolution)
            await self._settle_for_prior(
                ctx, f"{left:.1f} s were left before Evolution's deadline, too little for a model"
            )
            return prior
        errors = tuple(f"{c.recipe.summary()}: {(c.error or c.status).splitlines()[0]}" for c in tried)
        raise StepError(FailureReason.no_valid_baseline, "; ".join(errors) or "no time left for a baseline", errors)
