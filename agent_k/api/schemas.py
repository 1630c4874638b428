"""Response bodies of the API."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel


class MissionSummary(BaseModel):
    id: str
    competition: str | None
    status: str
    mode: str
    budget_s: float
    created_at: datetime
    updated_at: datetime


class MissionPage(BaseModel):
    items: list[MissionSummary]
    limit: int
    offset: int
    next_offset: int | None
    """Pass as `offset` for the next page; null on the last page."""


class StepSummary(BaseModel):
    seq: int
    node: str
    status: str
    error: str | None


class MissionDetail(BaseModel):
    id: str
    competition: str | None
    status: str
    mode: str
    budget_s: float
    created_at: datetime
    updated_at: datetime
    state: dict[str, Any] | None
    phase_history: list[dict[str, Any]]
    result: dict[str, Any] | None
    """Scores, rank, medal and paths once the mission has ended."""
    steps: list[StepSummary]
