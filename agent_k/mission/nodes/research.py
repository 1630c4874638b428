"""Research: profile the data (types, target, ids, leakage, drift) and plan the validation."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from pydantic_graph import End

from agent_k._blocking import run_blocking
from agent_k.competition.research import MediaProfile, ResearchFindings
from agent_k.events.models import MediaGallery, ResearchFinding
from agent_k.mission.agents import AgentFailed, runs_agent
from agent_k.mission.candidates import candidate_limits
from agent_k.mission.nodes.base import PhaseContext, PhaseNode
from agent_k.mission.nodes.prototype import PrototypeNode
from agent_k.mission.phases import Phase
from agent_k.mission.recovery import Step, StepError, run_step
from agent_k.mission.state import MissionResult
from agent_k.ml.featurise import CHUNK_TIMEOUT_S, FeaturesFailed, featurise, media_notes, plan_features
from agent_k.ml.gallery import examples, previews
from agent_k.ml.profiling import profile, recommended_families
from agent_k.ml.tables import write_tables
from agent_k.sandbox import gpu_usable
from agent_k.store.status import FailureReason

if TYPE_CHECKING:
    from agent_k.mission.agents.scientist import ResearchPlan

PROFILE = Step(Phase.research, "profile", "read the competition's files and profile them for modelling")
FEATURES = Step(Phase.research, "features", "featurise the competition's media files once, for every candidate")
FEATURE_SHARE = 0.25
"""Of the mission's budget, what the media features may take: the plan picks the richest embedding that fits."""
FEATURE_MEMORY_MB = 2048
TABLES_MIN_ROWS = 10_000
"""Below this a CSV parses in milliseconds: the Parquet copy would only cost the time to write it."""


@dataclass
class ResearchNode(PhaseNode):
    phase = Phase.research
    has_agent = True

    async def run(self, ctx: PhaseContext) -> PrototypeNode | End[MissionResult]:
        state = ctx.state
        assert state.selected_competition is not None and state.data_dir is not None
        data_dir = Path(state.data_dir)
        competition = state.selected_competition

        async def profile_data() -> tuple[ResearchFindings, str | None]:
            try:
                train = await asyncio.to_thread(pd.read_csv, data_dir / "train.csv")
                test = await asyncio.to_thread(pd.read_csv, data_dir / "test.csv")
                if competition.media:  # a file name is no feature: the files' features come in the next step
                    train, test = (t.drop(columns=[competition.media.column]) for t in (train, test))
                findings = await run_blocking(profile, competition, train, test, budget_s=ctx.deps.budget.total_s)
                unwritten = None
                if len(train) >= TABLES_MIN_ROWS:
                    unwritten = await run_blocking(write_tables, {"train.csv": train, "test.csv": test}, data_dir)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise StepError(FailureReason.research_failed, f"cannot profile the data: {exc}") from exc
            return findings, unwritten

        try:
            profiled = await run_step(state, ctx.deps, PROFILE, profile_data)
        except StepError as failed:
            return self.fail(ctx, failed.reason, failed.detail)
        assert profiled is not None  # a profile cannot be ignored: nothing follows without one
        findings, unwritten = profiled
        state.research_findings = findings
        if competition.media is not None:
            try:
                media = await run_step(state, ctx.deps, FEATURES, lambda: self._featurise(ctx, data_dir))
            except StepError as failed:
                return self.fail(ctx, failed.reason, failed.detail)
            findings.media = media
            findings.notes.extend(media_notes(media) if media else [])
            findings.model_families = recommended_families(competition, findings)
        if runs_agent(state, self.phase):
            from agent_k.mission.agents.scientist import scientist_plan

            try:
                plan = await scientist_plan(state, ctx.deps)
            except AgentFailed as exc:
                return self.fail(ctx, FailureReason.agent_failed, str(exc))
            if plan is not None:
                await self._apply(ctx, plan)
        features = len(findings.columns) + (findings.media.features if findings.media else 0)
        await self.emit(
            ctx,
            ResearchFinding(
                kind="profile",
                rows=findings.n_train,
                features=features,
                message=f"{findings.n_train:,} rows, {features:,} features; CV: {findings.cv.n_folds}-fold "
                f"{findings.cv.kind}; families: {', '.join(findings.model_families)}",
            ),
        )
        for suspect in findings.leakage_details:
            await self.emit(
                ctx,
                ResearchFinding(
                    kind="leakage",
                    message=f"'{suspect.column}' alone scores {suspect.single_column_score} in CV",
                ),
            )
        if unwritten:
            findings.notes.append(f"candidates read the CSVs: the Parquet copy could not be written ({unwritten})")
        for note in findings.notes:
            await self.emit(ctx, ResearchFinding(kind="note", message=note))
        return PrototypeNode()

    async def _featurise(self, ctx: PhaseContext, data_dir: Path) -> MediaProfile:
        """The files' features, once: chunks a killed mission finished are kept (`agent_k.ml.featurise`)."""
        state, deps = ctx.state, ctx.deps
        competition = state.selected_competition
        assert competition is not None and competition.media is not None
        files = competition.n_train + competition.n_test
        plan = plan_features(competition.media.kind, files, deps.budget.total_s * FEATURE_SHARE,
                             budget_s=deps.budget.total_s, gpu=gpu_usable())  # fmt: skip
        limits = candidate_limits(deps, state, timeout_s=CHUNK_TIMEOUT_S, threads=1, memory_mb=FEATURE_MEMORY_MB)

        async def progress(done: int, total: int) -> None:
            await self.emit(ctx, ResearchFinding(kind="features", message=f"featurised {done:,} of {total:,} files"))

        work = deps.mission_dir / "features"
        try:
            media = await featurise(competition, data_dir, work, plan, limits, models=deps.settings.models_dir,
                                    progress=progress, parallel=deps.settings.parallel_evaluations)  # fmt: skip
        except (FeaturesFailed, OSError, ValueError) as exc:
            raise StepError(FailureReason.research_failed, f"cannot featurise the media files: {exc}") from exc
        train = await asyncio.to_thread(pd.read_csv, data_dir / "train.csv")
        items = examples(competition, train, await asyncio.to_thread(previews, work))
        if items:
            await self.emit(ctx, MediaGallery(kind="examples", items=items))
        return media

    async def _apply(self, ctx: PhaseContext, plan: ResearchPlan) -> None:
        """The plan orders the families and may leave columns out; scores still come from our CV."""
        findings = ctx.state.research_findings
        assert findings is not None
        findings.model_families = list(dict.fromkeys(family.value for family in plan.model_families))
        findings.excluded = sorted(set(plan.drop_columns))
        findings.notes.extend(plan.findings)
        if findings.excluded:
            await self.emit(ctx, ResearchFinding(kind="plan", message=f"leaving out {', '.join(findings.excluded)}"))
