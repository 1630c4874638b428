"""`GraphContext`: the services every phase uses. Built per run, never serialised."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from agent_k.config import Settings
from agent_k.events.emitter import EventEmitter
from agent_k.mission.budget import BudgetClock
from agent_k.ml.executors import Evaluator
from agent_k.platforms.base import PlatformAdapter
from agent_k.sandbox import SandboxChoice
from agent_k.secrets import Scrubber
from agent_k.store.repository import Store

if TYPE_CHECKING:
    from opentelemetry.trace import Span
    from pydantic_ai.models import Model


@dataclass
class GraphContext:
    settings: Settings
    store: Store
    events: EventEmitter
    platform: PlatformAdapter
    http: httpx.AsyncClient
    budget: BudgetClock
    evaluator: Evaluator
    mission_dir: Path
    sandbox: SandboxChoice
    scrub: Scrubber
    """Takes every secret value out of text we keep or send on (candidate errors above all)."""
    model: Model | None = None
    """The language model of agent mode; None in workflow mode or when it could not be built."""
    model_error: str | None = None
    mission_span: Span | None = None
    """The mission's trace span, and the running phase step's under it (no-op spans unless tracing is on)."""
    phase_span: Span | None = None

    def __getstate__(self) -> None:
        raise TypeError("GraphContext holds live connections and is never serialised")
