"""Competitions on the local platform, with their leaderboards."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel

from agent_k.api.deps import CompetitionId, PlatformDep
from agent_k.competition import Competition
from agent_k.platforms.base import CompetitionNotFound, CompetitionUnsupported, LeaderboardEntry
from agent_k.platforms.ranking import MedalThreshold, medal_thresholds

router = APIRouter(prefix="/competitions", tags=["competitions"])


class CompetitionDetail(BaseModel):
    competition: Competition
    leaderboard: list[LeaderboardEntry]
    """The reference teams, and ours by its best public submission (its `note` says so)."""
    medals: list[MedalThreshold]
    """What each medal takes: a submission is ranked against the reference teams alone."""


@router.get("")
async def list_competitions(platform: PlatformDep) -> list[Competition]:
    return await platform.list_competitions()


@router.get("/{competition_id}")
async def get_competition(competition_id: CompetitionId, platform: PlatformDep) -> CompetitionDetail:
    try:
        competition = await platform.get_competition(competition_id)
        leaderboard = await platform.leaderboard(competition_id)
    except CompetitionNotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except CompetitionUnsupported as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    medals = medal_thresholds([e for e in leaderboard if e.reference], competition.scored_by)
    return CompetitionDetail(competition=competition, leaderboard=leaderboard, medals=medals)
