"""Versions: a mission records the code and the graph it last ran under, and a resume under others checks that
the step it stopped at still exists and its state still validates (docs/architecture.md, "Versions").

Compatible: it continues and says so. Not: it stops before any step runs, failed with `incompatible_version`
and a one-line reason naming both versions (a resume under the code that wrote it can still continue it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import TypeAdapter, ValidationError

import agent_k
from agent_k.events.models import MissionFailed
from agent_k.mission.control import MissionError, result_json
from agent_k.mission.nodes import PhaseNode
from agent_k.mission.state import MissionResult, MissionState
from agent_k.store.models import MissionRow, SnapshotRow
from agent_k.store.repository import Store
from agent_k.store.status import FailureReason, MissionStatus

INCOMPATIBLE = FailureReason.incompatible_version


def code_version() -> str:
    return agent_k.__version__


class IncompatibleVersion(MissionError):
    """The mission's last snapshot cannot run under this code; the message names both versions."""


@dataclass(frozen=True)
class Restored:
    state: MissionState
    node: PhaseNode
    note: str | None
    """What a resume under another version says (None: the same code and graph)."""


def describe(code_version: str | None, fingerprint: str | None) -> str:
    return f"agent-k {code_version or '(unrecorded)'}, graph {fingerprint or '(unrecorded)'}"


def restore(
    row: MissionRow, snapshot: SnapshotRow, node_types: dict[str, type[PhaseNode]], fingerprint: str
) -> Restored:
    """The state and the step to continue from, checked against this code's graph."""
    here, there = describe(code_version(), fingerprint), describe(row.code_version, row.graph_fingerprint)
    node_type = node_types.get(snapshot.node_kind)
    if node_type is None:
        raise IncompatibleVersion(
            f"mission '{row.id}' stopped at step {snapshot.node_kind} under {there}; {here} has no such step"
        )
    try:
        state = MissionState.model_validate_json(snapshot.state_json)
        node = TypeAdapter(node_type).validate_json(snapshot.node_json)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise IncompatibleVersion(
            f"mission '{row.id}' was saved under {there}; its state does not validate under {here} "
            f"({where}: {error['msg']})"
        ) from None
    unrecorded = row.graph_fingerprint is None and row.code_version is None
    same = (row.code_version, row.graph_fingerprint) == (code_version(), fingerprint)
    note = None if same or unrecorded else f"resumed under {here} after {there}: the step and its state carry over"
    return Restored(state, node, note)


def stop_incompatible(store: Store, row: MissionRow, reason: str) -> None:
    """Record the mission as failed with the reason, before any step of it ran under this code."""
    result = MissionResult(
        success=False, status=MissionStatus.failed, mission_id=row.id, error=INCOMPATIBLE, detail=reason
    )
    store.finish_mission(row.id, last_snapshot_id=None, status=MissionStatus.failed, result=result_json(None, result))
    failed = MissionFailed(reason=INCOMPATIBLE, error=reason)
    store.append_next_event(
        row.id, type=failed.type, phase=None, payload=failed.model_dump_json(), ts=datetime.now(UTC)
    )
