"""Cancel, resume, approve and reject: what the API and the CLI can do to a mission from outside.

Each is one atomic status change in the store, so two callers racing cannot both win. A mission that a live
worker holds is never changed behind its back: a cancel only flags it, and the worker's heartbeat stops the run
and records the ending itself.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Literal

from agent_k.events.models import ApprovalGranted, ApprovalRejected, EventData, Log, MissionCancelled
from agent_k.mission.contract import MISSION_CONTRACT
from agent_k.mission.state import MissionResult, MissionState
from agent_k.mission.webhooks import owe_for
from agent_k.store.models import MissionRow, SnapshotRow, utcnow
from agent_k.store.repository import Store
from agent_k.store.status import RESUMABLE_FAILURES, TERMINAL, UNFINISHED, FailureReason, MissionStatus, StepStatus

CANCEL_ATTEMPTS = 40


class MissionError(Exception):
    """A mission cannot be started, resumed or changed as asked; the message says why."""


class MissionNotFound(MissionError):
    pass


class UnknownTools(MissionError):
    """Tool names that are not in the phase contract."""


def result_json(state: MissionState | None, result: MissionResult) -> str:
    """The mission row keeps the result and the final state, so `missions show` needs no snapshot."""
    return json.dumps({"result": result.model_dump(mode="json"), "state": state and state.model_dump(mode="json")})


def check_resumable(row: MissionRow, snapshot: SnapshotRow | None) -> None:
    """Unfinished missions, cancelled ones, and ones that failed for a passing reason can run again."""
    if row.status == MissionStatus.failed:
        reason = json.loads(row.result or "{}").get("result", {}).get("error")
        if reason not in RESUMABLE_FAILURES or snapshot is None:
            raise MissionError(f"mission '{row.id}' failed ({reason}); nothing to resume")
    elif row.status == MissionStatus.awaiting_approval:
        raise MissionError(f"mission '{row.id}' is awaiting approval: approve or reject it")
    elif row.status == MissionStatus.cancelled and row.approval == "rejected":
        raise MissionError(f"mission '{row.id}' was rejected at the approval gate")
    elif row.status in TERMINAL - {MissionStatus.cancelled}:
        raise MissionError(f"mission '{row.id}' already {row.status}")
    elif snapshot is not None and snapshot.status == StepStatus.succeeded:
        raise MissionError(f"mission '{row.id}' has no unfinished step to resume")


def cancel(store: Store, mission_id: str) -> Literal["cancelled", "cancelling"]:
    """End the mission now if no live process runs it; otherwise ask its worker to stop it (`cancelling`)."""
    for _ in range(CANCEL_ATTEMPTS):
        row = _existing(store, mission_id)
        if row.status in TERMINAL:
            raise MissionError(f"mission '{mission_id}' already {row.status}")
        snapshot = store.last_snapshot(mission_id)
        result = _ending(row, snapshot, error=FailureReason.cancelled)
        cancelled = MissionStatus.cancelled
        if store.update_mission(mission_id, statuses=UNFINISHED, unleased=True, status=cancelled, result=result):
            if snapshot is not None and snapshot.status == StepStatus.running:  # its worker died mid-step
                store.end_step(snapshot.id or 0, StepStatus.cancelled, "cancel requested")
            _record(store, mission_id, MissionCancelled(reason="cancel requested"))
            return "cancelled"
        running = (MissionStatus.queued, MissionStatus.running)
        if store.update_mission(mission_id, statuses=running, cancel_requested_at=utcnow()):
            return "cancelling"
        time.sleep(0.05)  # it changed under us (a runner is parking it for approval): look again
    raise MissionError(f"mission '{mission_id}' is changing state; try again")


def approve(store: Store, mission_id: str) -> str:
    """Let a mission waiting at the gate go on to Submission: it is queued for a worker to continue."""
    _existing(store, mission_id)
    waiting = (MissionStatus.awaiting_approval,)
    if not store.update_mission(mission_id, statuses=waiting, approval="approved", status=MissionStatus.queued):
        raise _not_waiting(store, mission_id)
    _record(store, mission_id, ApprovalGranted())
    return MissionStatus.queued


def reject(store: Store, mission_id: str) -> str:
    """End a mission waiting at the gate without submitting anything."""
    row = _existing(store, mission_id)
    result = _ending(row, store.last_snapshot(mission_id), error=FailureReason.rejected)
    updated = store.update_mission(
        mission_id,
        statuses=(MissionStatus.awaiting_approval,),
        approval="rejected",
        status=MissionStatus.cancelled,
        result=result,
    )
    if not updated:
        raise _not_waiting(store, mission_id)
    _record(store, mission_id, ApprovalRejected())
    _record(store, mission_id, MissionCancelled(reason="rejected at the approval gate"))
    return MissionStatus.cancelled


def change_tools(store: Store, mission_id: str, tools: list[str], *, narrow: bool) -> list[str]:
    """Remove agent tools from a mission (`narrow`), or give back ones an operator removed; the operator's
    filter after the change. It only ever removes: a tool the contract withholds stays withheld."""
    unknown = sorted(set(tools) - {tool.name for tool in MISSION_CONTRACT.tools})
    if unknown:
        raise UnknownTools(f"no such tools: {', '.join(unknown)}")
    for _ in range(CANCEL_ATTEMPTS):
        row = _existing(store, mission_id)
        if row.status in TERMINAL:
            raise MissionError(f"mission '{mission_id}' already {row.status}")
        current = set(operator_filter(row))
        changed = sorted(current | set(tools) if narrow else current - set(tools))
        if store.swap_tool_filter(mission_id, row.tool_filter, json.dumps(changed)):
            verb = "removed" if narrow else "gave back"
            _record(store, mission_id, Log(message=f"an operator {verb} tools: {', '.join(sorted(tools))}"))
            return changed
    raise MissionError(f"mission '{mission_id}' is changing state; try again")


def operator_filter(row: MissionRow | None) -> list[str]:
    return json.loads(row.tool_filter or "[]") if row is not None else []


def resume(store: Store, mission_id: str) -> str:
    """Queue a cancelled mission, or one whose step raised, so a worker continues it from its last snapshot."""
    row = _existing(store, mission_id)
    if row.status == MissionStatus.queued or (row.status == MissionStatus.running and row.lease_owner is None):
        raise MissionError(f"mission '{mission_id}' is already waiting for a worker")
    if row.status == MissionStatus.running:
        raise MissionError(f"mission '{mission_id}' is running under {row.lease_owner}")
    check_resumable(row, store.last_snapshot(mission_id))
    queued = MissionStatus.queued
    if not store.update_mission(mission_id, statuses=(row.status,), unleased=True, status=queued, result=None):
        raise MissionError(f"mission '{mission_id}' changed while resuming it; try again")
    return queued


def _existing(store: Store, mission_id: str) -> MissionRow:
    row = store.get_mission(mission_id)
    if row is None:
        raise MissionNotFound(f"no mission '{mission_id}'")
    return row


def _not_waiting(store: Store, mission_id: str) -> MissionError:
    row = _existing(store, mission_id)
    return MissionError(f"mission '{mission_id}' is {row.status}, not awaiting approval")


def _ending(row: MissionRow, snapshot: SnapshotRow | None, *, error: str) -> str:
    """The result of a mission cancelled from outside: its last recorded state, marked with why it ended."""
    if snapshot is None:
        cancelled = MissionResult(success=False, status=MissionStatus.cancelled, mission_id=row.id, error=error)
        return result_json(None, cancelled)
    state = MissionState.model_validate_json(snapshot.state_json)
    return result_json(state, MissionResult.from_state(state, error=error, status=MissionStatus.cancelled))


def _record(store: Store, mission_id: str, data: EventData) -> None:
    seq = store.append_next_event(
        mission_id, type=data.type, phase=None, payload=data.model_dump_json(), ts=datetime.now(UTC)
    )
    owe_for(store, mission_id, seq, data.type)  # a worker sends it
