"""Launching a mission: what a caller asks for (CLI options or an API body) becomes one validated `MissionSpec`.

The CLI, the API and the runner all come through here, so each rule is written once: the mission id, the
mode and model rules, the competition check, and how a spec is stored with its mission and read back.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import ConfigDict, Field, ValidationError

from agent_k.competition import Criteria, MetricName, TaskType
from agent_k.config import DEFAULT_TIME_BUDGET_S, MAX_TIME_BUDGET_S, MIN_TIME_BUDGET_S, Settings, TimeBudget
from agent_k.mission.options import LaunchOptions, first_error
from agent_k.mission.phases import Mode
from agent_k.mission.state import BudgetLedger, MissionState
from agent_k.mission.webhook_address import AddressRefused, check_literal
from agent_k.platforms.registry import PlatformName

if TYPE_CHECKING:
    from agent_k.store.models import MissionRow

MISSION_ID = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
"""A mission id, whole (matched with `fullmatch`: a trailing newline is no part of an id)."""
COMPETITION_ID = r"[a-z0-9][a-z0-9-]{0,99}"
"""A competition id as the platforms name them (Kaggle slugs; the local platform's are the same shape)."""
_ROW_COLUMNS = frozenset({"mission_id", "platform", "time_budget"})
"""Spec fields the mission row keeps in columns of their own; the rest is its `options` JSON."""


class LaunchError(Exception):
    """The request cannot become a mission; the message is one line saying why."""

    def __init__(self, message: str, *, platform_failed: bool = False) -> None:
        super().__init__(message)
        self.platform_failed = platform_failed
        """The platform itself failed (unreachable, refused our credentials), rather than the request."""


class MissionRequest(LaunchOptions):
    """What a caller may ask for; everything but the competition or criteria has a default. Checked by
    `launch_spec`, which says what is wrong in one line (the budget's bounds included)."""

    competition: str | None = None
    task: TaskType | None = None
    metric: MetricName | None = None
    max_rows: int | None = None
    keywords: list[str] = Field(default_factory=list)
    platform: PlatformName = "local"
    time_budget: float | None = None
    """Seconds for the whole mission; default AGENT_K_TIME_BUDGET."""
    mission_id: str | None = None
    """Default: a new id."""

    @classmethod
    def checked(cls, **values: Any) -> MissionRequest:
        """The request, or `LaunchError` with its first problem in one line."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise LaunchError(first_error(exc)) from None


class MissionSpec(LaunchOptions):
    """A mission as it was validated: stored with it, so any process can start or resume it."""

    model_config = ConfigDict(frozen=True)

    mission_id: str = Field(pattern=f"^{MISSION_ID}$")  # pydantic's Rust regex: `$` is the very end
    criteria: Criteria
    time_budget: TimeBudget = DEFAULT_TIME_BUDGET_S
    platform: PlatformName = "local"

    def row_options(self) -> str:
        """The `options` JSON of the mission row."""
        return self.model_dump_json(exclude=set(_ROW_COLUMNS))

    @classmethod
    def from_row(cls, row: MissionRow) -> MissionSpec:
        options = json.loads(row.options)
        return cls.model_validate(
            {**options, "mission_id": row.id, "platform": row.platform, "time_budget": row.budget_s}
        )

    def initial_state(self) -> MissionState:
        return MissionState(
            mission_id=self.mission_id,
            criteria=self.criteria,
            options=self.mission_options(),
            budget=BudgetLedger(total_s=self.time_budget),
        )


def new_mission_id() -> str:
    return f"m-{uuid.uuid4().hex[:12]}"


async def launch_spec(request: MissionRequest, settings: Settings) -> MissionSpec:
    """Check a request once, end to end, and return the spec to create; `LaunchError` says what is wrong.

    Nothing is written here: a request that fails leaves no trace."""
    mission_id = request.mission_id or new_mission_id()
    if not re.fullmatch(MISSION_ID, mission_id):
        raise LaunchError(f"invalid mission id {mission_id!r}: use letters, digits, '-', '_' or '.' (at most 64)")
    if request.competition is not None and not re.fullmatch(COMPETITION_ID, request.competition):
        raise LaunchError(f"invalid competition id {request.competition!r}: use lowercase letters, digits and '-'")
    time_budget = settings.time_budget if request.time_budget is None else request.time_budget
    if not MIN_TIME_BUDGET_S <= time_budget <= MAX_TIME_BUDGET_S:  # NaN fails both comparisons
        raise LaunchError(
            f"the time budget must be at least {MIN_TIME_BUDGET_S:g} s and at most {MAX_TIME_BUDGET_S:.0f} s (7 days)"
        )
    model = resolve_model(request.mode, request.model or settings.model)
    webhook_url = check_webhook(request.webhook_url or settings.webhook_url, settings)
    check_sandbox(settings)
    await check_competition(request.platform, request.competition, settings)
    criteria = Criteria(
        competition=request.competition,
        task=request.task,
        metric=request.metric,
        max_rows=request.max_rows,
        keywords=request.keywords,
    )
    return MissionSpec.model_validate(
        request.option_values()
        | {"model": model, "webhook_url": webhook_url}
        | {"mission_id": mission_id, "criteria": criteria, "time_budget": time_budget, "platform": request.platform}
    )


def check_webhook(url: str | None, settings: Settings) -> str | None:
    """A webhook URL this process can sign for (an unsigned webhook is never sent)."""
    if url is None:
        return None
    if not re.fullmatch(r"https?://\S+", url) or len(url) > 2000:
        raise LaunchError(f"invalid webhook URL {url[:100]!r}: use http:// or https://")
    if settings.webhook_secret is None:
        raise LaunchError("a webhook needs AGENT_K_WEBHOOK_SECRET to sign what it sends")
    try:
        check_literal(url, settings.webhook_allow)
    except AddressRefused as exc:
        raise LaunchError(str(exc)) from None
    except httpx.InvalidURL:
        raise LaunchError(f"invalid webhook URL {url[:100]!r}: no request can be sent to it") from None
    return url


def resolve_model(mode: Mode, model: str | None) -> str | None:
    """The model the mission will use: none in workflow mode, and one that can be built here otherwise."""
    from agent_k.llm import ModelUnavailable, build_model

    if mode is Mode.workflow:
        return None
    if model is None:
        if mode in (Mode.agent, Mode.amphiflow):
            raise LaunchError(f"mode '{mode.value}' needs a model: pass one or set AGENT_K_MODEL")
        return None
    try:
        build_model(model)
    except ModelUnavailable as exc:
        raise LaunchError(str(exc)) from None
    return model


def check_sandbox(settings: Settings) -> None:
    """The sandbox the settings insist on can run here."""
    from agent_k.sandbox import SandboxUnavailable, choose

    try:
        choose(settings.sandbox, settings.sandbox_user)
    except SandboxUnavailable as exc:
        raise LaunchError(str(exc)) from None


async def check_competition(platform: str, competition: str | None, settings: Settings) -> None:
    """The platform is usable from here and, when one is named, has the competition (nothing is downloaded)."""
    from agent_k.platforms.base import CompetitionNotFound, CompetitionUnsupported, CredentialsMissing, PlatformError
    from agent_k.platforms.factory import check_platform, verify_competition

    try:
        if competition is None:
            check_platform(platform, settings)
        else:
            await verify_competition(platform, competition, settings)
    except (CompetitionNotFound, CompetitionUnsupported, CredentialsMissing) as exc:
        raise LaunchError(str(exc)) from None
    except PlatformError as exc:
        raise LaunchError(str(exc), platform_failed=True) from None
