"""Tracing on, with an in-memory exporter: a mission's spans nest mission > phase step > candidate."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent_k import tracing
from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    previous = trace._TRACER_PROVIDER  # the API allows one global provider; a test restores what it found
    trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE._done = None, False
    tracing.install("otlp", provider)
    yield exporter
    trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE._done = previous, previous is not None


def test_a_missions_spans_nest_mission_phase_candidate(exporter: InMemorySpanExporter, home: Path) -> None:
    url = f"sqlite:///{home / 'agent_k.db'}"  # about tracing, not storage: one database is enough
    settings, store = Settings(home=home, database_url=url, workers=2), Store.open(url)
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    spec = MissionSpec(
        mission_id="traced",
        criteria=Criteria(competition="penguins"),
        mode=Mode.workflow,
        time_budget=12,
        stop_early=True,
    )
    runner.create(spec)
    result = asyncio.run(runner.run("traced"))
    store.close()
    assert result.success, result.detail

    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    (mission,) = [s for s in spans if s.name == "mission"]
    assert mission.parent is None and mission.attributes["mission"] == "traced"
    phases = [s for s in spans if s.name.startswith("phase ")]
    assert [p.name for p in phases][:3] == ["phase discovery", "phase research", "phase prototype"]
    assert all(p.parent is not None and p.parent.span_id == mission.context.span_id for p in phases)
    candidates = [s for s in spans if s.name == "candidate"]
    assert candidates and all(c.parent is not None for c in candidates)
    parents = {by_id[c.parent.span_id].name for c in candidates if c.parent is not None}
    assert parents <= {"phase prototype", "phase evolution"} and "phase prototype" in parents
    assert all(p.start_time <= c.start_time and c.end_time <= p.end_time for c in candidates
               for p in [by_id[c.parent.span_id]] if c.parent is not None)  # fmt: skip
