"""Research: profile the data (types, target, ids, leakage, drift) and plan the validation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from pydantic_graph import End

from agent_k._blocking import run_blocking
from agent_k.agents.errors import AgentFailed
from agent_k.events.models import ResearchFinding
from agent_k.mission.nodes.base import PhaseContext, PhaseNode
from agent_k.mission.nodes.prototype import PrototypeNode
from agent_k.mission.state import MissionResult, Phase
from agent_k.ml.profiling import profile

if TYPE_CHECKING:
    from pydantic_ai.run import AgentRunResult

    from agent_k.agents.deps import AgentDeps
    from agent_k.agents.scientist import ResearchPlan


@dataclass
class ResearchNode(PhaseNode):
    phase = Phase.research
    has_agent = True

    async def run(self, ctx: PhaseContext) -> PrototypeNode | End[MissionResult]:
        state = ctx.state
        assert state.selected_competition is not None and state.data_dir is not None
        data_dir = Path(state.data_dir)
        try:
            train = pd.read_csv(data_dir / "train.csv")
            test = pd.read_csv(data_dir / "test.csv")
            findings = await run_blocking(profile, state.selected_competition, train, test)
        except (OSError, ValueError, KeyError) as exc:
            return self.fail(ctx, "research_failed", f"cannot profile the data: {exc}")
        state.research_findings = findings
        try:
            plan = await _scientist_plan(ctx)
        except AgentFailed as exc:
            return self.fail(ctx, "agent_failed", str(exc))
        if plan is not None:
            self._apply(ctx, plan)
        self.emit(
            ctx,
            ResearchFinding(
                kind="profile",
                message=f"{findings.n_train} rows, {len(findings.columns)} features; CV: {findings.cv.n_folds}-fold "
                f"{findings.cv.kind}; families: {', '.join(findings.model_families)}",
            ),
        )
        for suspect in findings.leakage_details:
            self.emit(
                ctx,
                ResearchFinding(
                    kind="leakage",
                    message=f"'{suspect.column}' alone scores {suspect.single_column_score} in CV",
                ),
            )
        for note in findings.notes:
            self.emit(ctx, ResearchFinding(kind="note", message=note))
        return PrototypeNode()

    def _apply(self, ctx: PhaseContext, plan: ResearchPlan) -> None:
        """The plan orders the families and may leave columns out; scores still come from our CV."""
        findings = ctx.state.research_findings
        assert findings is not None
        findings.model_families = list(dict.fromkeys(family.value for family in plan.model_families))
        findings.excluded = sorted(set(plan.drop_columns))
        findings.notes.extend(plan.findings)
        if findings.excluded:
            self.emit(ctx, ResearchFinding(kind="plan", message=f"leaving out {', '.join(findings.excluded)}"))


async def _scientist_plan(ctx: PhaseContext) -> ResearchPlan | None:
    from agent_k.agents.phase import run_agent, usage_limits
    from agent_k.agents.scientist import build_scientist

    async def ask(deps: AgentDeps) -> AgentRunResult[ResearchPlan]:
        assert deps.mission.model is not None
        scientist = build_scientist(deps.mission.model)
        return await scientist.run("Study the data and plan the modelling.", deps=deps, usage_limits=usage_limits(deps))

    return await run_agent(ctx.state, ctx.deps, Phase.research, ask)
