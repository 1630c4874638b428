"""Rank, percentile and medal of one score against a leaderboard (Kaggle thresholds as MLE-bench applies them)."""

from __future__ import annotations

from pydantic import BaseModel

from agent_k.competition import Medal, Metric
from agent_k.platforms.base import LeaderboardEntry


class Standing(BaseModel):
    rank: int
    teams: int
    percentile: float
    """Share of the other teams ranked below this score (ties count in its favour), 0 to 100."""
    medal: Medal | None


def medal_positions(teams: int) -> tuple[int, int, int]:
    """The last leaderboard position that still earns gold, silver and bronze."""
    if teams < 100:
        return max(1, int(teams * 0.1)), max(1, int(teams * 0.2)), max(1, int(teams * 0.4))
    if teams < 250:
        return 10, max(1, int(teams * 0.2)), max(1, int(teams * 0.4))
    if teams < 1000:
        return 10 + int(teams * 0.002), 50, 100
    return 10 + int(teams * 0.002), max(1, int(teams * 0.05)), max(1, int(teams * 0.1))


def standing(score: float, others: list[float], metric: Metric) -> Standing:
    """Where `score` lands among the other teams' scores (ties rank in our favour, as Kaggle does)."""
    ordered = metric.ranked(others, lambda s: s)
    rank = 1 + sum(1 for other in ordered if metric.better(other, score))
    teams = len(ordered) + 1
    percentile = 100.0 * (teams - rank) / len(ordered) if ordered else 100.0
    medal: Medal | None = None
    if ordered:
        for name, position in zip(("gold", "silver", "bronze"), medal_positions(len(ordered)), strict=True):
            threshold = ordered[min(position, len(ordered)) - 1]
            if not metric.better(threshold, score):
                medal = name  # type: ignore[assignment]
                break
    return Standing(rank=rank, teams=teams, percentile=round(percentile, 2), medal=medal)


def team_standing(board: list[LeaderboardEntry], team: str, metric: Metric) -> Standing | None:
    """Our place on a live leaderboard, found by our team's name (never by looking for our score).

    Private scores rank once the board has them, public ones before; None when our team is not on it."""
    ours = [e for e in board if e.team == team]
    if not ours:
        return None
    private = ours[0].private_score is not None

    def score(entry: LeaderboardEntry) -> float | None:
        return entry.private_score if private else entry.public_score

    mine = score(ours[0])
    if mine is None:
        return None
    others = [s for e in board if e.team != team and (s := score(e)) is not None]
    return standing(mine, others, metric)
