"""Rank, percentile and medal of one submission against a leaderboard (Kaggle's thresholds as MLE-bench applies
them: docs/architecture.md, "Standings")."""

from __future__ import annotations

from pydantic import BaseModel

from agent_k.competition import Medal, Metric
from agent_k.platforms.base import LeaderboardEntry, Submission

MEDALS: tuple[Medal, ...] = ("gold", "silver", "bronze")


class Standing(BaseModel):
    rank: int
    teams: int
    percentile: float
    """Share of the other teams ranked below this score (ties count in its favour), 0 to 100."""
    medal: Medal | None


class MedalThreshold(BaseModel):
    """What a medal takes on one board: a place among its teams, and the score at that place."""

    medal: Medal
    place: int
    """The last place of the board's own teams that still earns the medal."""
    score: float
    """A submission needs this score or a better one."""
    team: str | None = None
    """The team at that place."""


def medal_positions(teams: int) -> tuple[int, int, int]:
    """The last leaderboard position that still earns gold, silver and bronze."""
    if teams < 100:
        return max(1, int(teams * 0.1)), max(1, int(teams * 0.2)), max(1, int(teams * 0.4))
    if teams < 250:
        return 10, max(1, int(teams * 0.2)), max(1, int(teams * 0.4))
    if teams < 1000:
        return 10 + int(teams * 0.002), 50, 100
    return 10 + int(teams * 0.002), max(1, int(teams * 0.05)), max(1, int(teams * 0.1))


def _places(teams: int) -> list[int]:
    return [min(position, teams) for position in medal_positions(teams)]


def medal_thresholds(board: list[LeaderboardEntry], metric: Metric) -> list[MedalThreshold]:
    """Each medal's place and score on a board of these teams (a submission is graded against them alone): by
    private scores where the board has them, else by public ones."""
    private = any(e.private_score is not None for e in board)
    scored = [(s, e.team) for e in board if (s := e.private_score if private else e.public_score) is not None]
    ordered = metric.ranked(scored, lambda pair: pair[0])
    return [
        MedalThreshold(medal=medal, place=place, score=ordered[place - 1][0], team=ordered[place - 1][1])
        for medal, place in zip(MEDALS, _places(len(ordered)) if ordered else [], strict=False)
    ]


def standing(score: float, others: list[float], metric: Metric) -> Standing:
    """Where `score` lands among the other teams' scores (ties rank in our favour, as Kaggle does)."""
    ordered = metric.ranked(others, lambda s: s)
    rank = 1 + sum(1 for other in ordered if metric.better(other, score))
    teams = len(ordered) + 1
    percentile = 100.0 * (teams - rank) / len(ordered) if ordered else 100.0
    earned = (
        medal
        for medal, place in zip(MEDALS, _places(len(ordered)) if ordered else [], strict=False)
        if not metric.better(ordered[place - 1], score)
    )
    return Standing(rank=rank, teams=teams, percentile=round(percentile, 2), medal=next(earned, None))


def submission_standing(
    board: list[LeaderboardEntry], team: str, submission: Submission, metric: Metric
) -> Standing | None:
    """One submission's own place among the board's other teams, as MLE-bench grades one run: never its team's
    best, nor any other submission of its team. Private scores rank once the submission and the board have them,
    public ones before; None when the submission has no score to rank."""
    others = [e for e in board if e.team != team]
    private = submission.private_score is not None and any(e.private_score is not None for e in others)
    mine = submission.private_score if private else submission.public_score
    if mine is None:
        return None
    scores = [s for e in others if (s := e.private_score if private else e.public_score) is not None]
    return standing(mine, scores, metric)
