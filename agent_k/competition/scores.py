"""`Scores`: how a mission did, in one shape for its result, its events and the CLI report."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Medal = Literal["gold", "silver", "bronze"]


class Scores(BaseModel):
    cv_score: float | None = None
    """Our cross-validated score of the submitted solution."""
    public_score: float | None = None
    private_score: float | None = None
    """The hidden score the final rank comes from."""
    rank: int | None = None
    teams: int | None = None
    percentile: float | None = None
    """Share of the other teams ranked below us (ties count in our favour), 0 to 100."""
    medal: Medal | None = None
