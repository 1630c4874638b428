"""Response bodies of the API."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict

from agent_k.config import TimeBudget
from agent_k.mission.launch import COMPETITION_ID, MISSION_ID
from agent_k.mission.options import LaunchOptions
from agent_k.mission.phases import Phase
from agent_k.platforms.registry import PlatformName
from agent_k.store.status import MissionStatus


class MissionSummary(BaseModel):
    id: str
    competition: str | None
    status: MissionStatus
    mode: str
    budget_s: float
    created_at: datetime
    updated_at: datetime
    approval: str | None = None
    """The gate before Submission, when asked for: `pending`, `approved` or `rejected`."""
    cancel_requested_at: datetime | None = None
    """Set while a worker is stopping the mission after a cancel."""
    parent_id: str | None = None
    """The mission this one was forked from."""


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


class WebhookDelivery(BaseModel):
    event_seq: int
    event_type: str
    status: str
    """`pending` (tried again later), `delivered` (the receiver answered 2xx) or `failed` (too many tries)."""
    attempts: int
    last_error: str | None
    delivered_at: datetime | None


class MissionDetail(MissionSummary):
    state: dict[str, Any] | None
    phase_history: list[dict[str, Any]]
    result: dict[str, Any] | None
    """Scores, rank, medal and paths once the mission has ended."""
    steps: list[StepSummary]
    forked_from_seq: int | None = None
    """The parent's step this fork started from."""
    children: list[str] = Field(default_factory=list)
    """Missions forked from this one."""
    code_version: str | None = None
    graph_fingerprint: str | None = None
    """The code and graph it last ran under."""
    collected_at: datetime | None = None
    """When retention last removed files of it."""
    webhooks: list[WebhookDelivery] = Field(default_factory=list)
    """Its webhook deliveries (endings, approval requests) and how each went."""


class MissionCreate(LaunchOptions):
    """A mission to queue; a worker runs it. (`max_cost`, the name this field had first, is still accepted.)"""

    model_config = ConfigDict(extra="forbid")

    competition: str = Field(pattern=f"^{COMPETITION_ID}$", max_length=100)
    time_budget: Annotated[TimeBudget, Strict()] | None = Field(
        default=None, description="seconds for the whole mission [default: AGENT_K_TIME_BUDGET]"
    )
    platform: PlatformName = "local"


class MissionFork(BaseModel):
    """A new mission from this one's snapshot at the start of a phase; a worker runs it."""

    model_config = ConfigDict(extra="forbid")

    from_phase: Phase = Field(description="the phase the fork starts at")
    time_budget: Annotated[TimeBudget, Strict()] | None = Field(
        default=None, description="seconds for the whole fork, the parent's spent ones included [default: the parent's]"
    )
    set: dict[str, Any] = Field(
        default_factory=dict,
        description="options to change: mode, model, keep_columns, require_approval, max_cost_usd, "
        "allow_unsandboxed_code, stop_early",
    )
    mission_id: str | None = Field(
        default=None, pattern=f"^{MISSION_ID}$", description="the fork's id [default: generated]"
    )


class ToolChange(BaseModel):
    tools: list[str] = Field(min_length=1, max_length=64, description="agent tool names, as the contract has them")


class ToolFilter(BaseModel):
    mission_id: str
    removed_by_operator: list[str]
    """Tools an operator removed; the contract's own narrowing (phase, preconditions, state) applies on top."""
    tools_by_phase: dict[str, list[str]]
    """What agents may be offered in each phase now: the contract's tools less the operator's filter."""
