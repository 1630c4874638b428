"""Replay: a mission's steps in order, each with the state it started from and the events it sent, for a person
who wants to see what the mission knew at any point (`agent-k replay`, `GET /missions/{id}/steps`)."""

from __future__ import annotations

import bisect
import json
from collections import Counter
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from agent_k.mission.control import MissionError
from agent_k.mission.state import MissionState
from agent_k.store.models import SnapshotRow
from agent_k.store.repository import Store


class StepNotFound(MissionError):
    pass


class ReplayStep(BaseModel):
    """One step: its snapshot's summary, and what happened while it ran."""

    seq: int
    node: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    phase: str | None
    """The phase the step ran in."""
    elapsed_s: float
    """Mission time spent before the step began."""
    best_score: float | None
    candidates: int
    """Candidates in the archive when it began."""
    event_types: dict[str, int]
    """The events sent while it ran, by type (the first step also has the mission's opening events)."""
    first_event: int | None
    last_event: int | None


def replay_steps(store: Store, mission_id: str) -> list[ReplayStep]:
    snapshots = store.snapshots(mission_id)
    starts = [_naive(s.started_at) for s in snapshots]
    events: list[list[Any]] = [[] for _ in snapshots]
    for event in store.events_after(mission_id):
        index = max(0, bisect.bisect_right(starts, _naive(event.ts)) - 1)
        if events:
            events[index].append(event)
    created = sorted(_naive(c.created_at) for c in store.candidates(mission_id))
    return [
        _step(snapshot, sent, bisect.bisect_left(created, start))
        for snapshot, sent, start in zip(snapshots, events, starts, strict=True)
    ]


def state_at(store: Store, mission_id: str, seq: int) -> dict[str, Any]:
    """The state step `seq` started from, as stored."""
    snapshot = next((s for s in store.snapshots(mission_id) if s.seq == seq), None)
    if snapshot is None:
        raise StepNotFound(f"mission '{mission_id}' has no step {seq}")
    return {
        "seq": snapshot.seq,
        "node": snapshot.node_kind,
        "status": snapshot.status,
        "state": json.loads(snapshot.state_json),
    }


def _step(snapshot: SnapshotRow, events: list[Any], candidates: int) -> ReplayStep:
    state = MissionState.model_validate_json(snapshot.state_json)
    return ReplayStep(
        seq=snapshot.seq,
        node=snapshot.node_kind,
        status=snapshot.status,
        started_at=snapshot.started_at,
        finished_at=snapshot.finished_at,
        phase=state.current_phase.value if state.current_phase else None,
        elapsed_s=round(state.budget.elapsed_s, 3),
        best_score=state.evolution_state.best_score,
        candidates=candidates,
        event_types=dict(Counter(e.type for e in events)),
        first_event=events[0].seq if events else None,
        last_event=events[-1].seq if events else None,
    )


def _naive(value: datetime) -> datetime:
    return value.replace(tzinfo=None)
