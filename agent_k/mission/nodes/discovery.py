"""Discovery: choose the competition (the one named, or the best match for the criteria) and fetch its data."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from pydantic_graph import End

from agent_k.competition import Competition, Criteria
from agent_k.events.models import CompetitionSelected
from agent_k.mission.agents import AgentFailed, runs_agent
from agent_k.mission.nodes.base import PhaseContext, PhaseNode
from agent_k.mission.nodes.research import ResearchNode
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionResult, MissionState
from agent_k.platforms.base import CompetitionNotFound, CompetitionUnsupported
from agent_k.store.status import FailureReason


def rank_competitions(competitions: list[Competition], criteria: Criteria) -> list[Competition]:
    """Competitions that satisfy the criteria, best keyword match first, then smallest (cheapest) first."""

    def fits(c: Competition) -> bool:
        return (
            (criteria.task is None or c.task is criteria.task)
            and (criteria.metric is None or c.metric == criteria.metric)
            and (criteria.max_rows is None or c.n_train + c.n_test <= criteria.max_rows)
        )

    def relevance(c: Competition) -> tuple[int, int]:
        text = " ".join([c.id, c.title, c.description, *c.tags]).lower()
        hits = sum(1 for word in criteria.keywords if word.lower() in text)
        return -hits, c.n_train

    return sorted(filter(fits, competitions), key=relevance)


READ_ONLY = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH


def _read_only_copy(source: list[Path], dest: Path) -> None:
    """Replace `dest` with read-only copies, so a candidate can neither change nor delete the data."""
    staging = dest.with_name(dest.name + ".staging")
    for folder in (staging, dest):
        if folder.exists():
            for inner, _, _ in os.walk(folder):  # a media folder's read-only folders too
                Path(inner).chmod(0o755)
            shutil.rmtree(folder)
    staging.mkdir(parents=True)
    for path in source:
        copied = staging / path.name
        if path.is_dir():  # a media folder: moved whole (the downloads are deleted next), then made read-only
            shutil.move(path, copied)
            for inside, _, files in os.walk(copied):
                for name in files:
                    (Path(inside) / name).chmod(READ_ONLY)
                Path(inside).chmod(0o555)
            continue
        shutil.copyfile(path, copied)
        copied.chmod(READ_ONLY)
    staging.rename(dest)
    dest.chmod(0o555)


@dataclass
class DiscoveryNode(PhaseNode):
    phase = Phase.discovery
    has_agent = True

    def wants_agent(self, state: MissionState) -> bool:
        return state.criteria.competition is None  # a named competition leaves nothing to choose

    async def run(self, ctx: PhaseContext) -> ResearchNode | End[MissionResult]:
        state, deps = ctx.state, ctx.deps
        criteria = state.criteria
        if criteria.competition:
            try:
                named = await deps.platform.get_competition(criteria.competition)
            except (CompetitionNotFound, CompetitionUnsupported) as exc:
                return self.fail(ctx, FailureReason.no_matching_competition, str(exc))
            matches = [named]
        else:
            matches = rank_competitions(await deps.platform.list_competitions(criteria), criteria)
        if not matches:
            state.discovered_competitions = []
            return self.fail(
                ctx, FailureReason.no_matching_competition, f"no competition fits {criteria.model_dump_json()}"
            )
        if len(matches) > 1 and runs_agent(state, self.phase):
            from agent_k.mission.agents.lobbyist import lobbyist_ranking

            try:
                matches = await lobbyist_ranking(state, deps, matches)
            except AgentFailed as exc:
                return self.fail(ctx, FailureReason.agent_failed, str(exc))
        state.discovered_competitions = [c.id for c in matches]

        competition = matches[0] if criteria.competition else await deps.platform.get_competition(matches[0].id)
        state.selected_competition = competition
        state.competition_id = competition.id
        downloads = deps.mission_dir / "downloads"
        paths = await deps.platform.download_data(competition.id, downloads)
        data_dir = deps.mission_dir / "data"
        _read_only_copy(paths, data_dir)
        shutil.rmtree(downloads, ignore_errors=True)
        state.data_dir = str(data_dir)
        await self.emit(
            ctx,
            CompetitionSelected(
                competition=competition.id,
                task=competition.task.value,
                metric=competition.metric,
                maximize=competition.maximize,
                n_train=competition.n_train,
                n_test=competition.n_test,
            ),
        )
        return ResearchNode()
