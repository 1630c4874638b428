"""Missions: launch, list, detail, the event stream, the artifacts, and cancel/resume/approve/reject."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent

from agent_k.api.deps import FeedsDep, MissionId, SettingsDep, StoreDep
from agent_k.api.schemas import MissionCreate, MissionDetail, MissionPage, MissionSummary
from agent_k.api.security import require_intent
from agent_k.api.streaming import follow
from agent_k.mission import control
from agent_k.mission.document import mission_document
from agent_k.mission.launch import LaunchError, MissionRequest, launch_spec
from agent_k.mission.runner import MissionRunner
from agent_k.store.repository import Store
from agent_k.store.status import TERMINAL, MissionStatus

router = APIRouter(prefix="/missions", tags=["missions"])

Artifact = Literal["solution.py", "submission.csv"]
INTENT = [Depends(require_intent)]
MAX_INT = 2**31 - 1
"""Offsets and seqs beyond a 32-bit integer column are a 422, not a database overflow."""


def _not_found(mission_id: str) -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, f"no mission '{mission_id}'")


@router.get("")
async def list_missions(
    store: StoreDep,
    status_: Annotated[MissionStatus | None, Query(alias="status")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_INT)] = 0,
) -> MissionPage:
    rows = await run_in_threadpool(store.list_missions, status=status_, limit=limit + 1, offset=offset)
    items = [MissionSummary.model_validate(row, from_attributes=True) for row in rows[:limit]]
    next_offset = offset + limit if len(rows) > limit else None
    return MissionPage(items=items, limit=limit, offset=offset, next_offset=next_offset)


@router.post(
    "",
    dependencies=INTENT,
    status_code=status.HTTP_201_CREATED,
    responses={502: {"description": "the platform failed (e.g. Kaggle rejected our credentials or is unreachable)"}},
)
async def create_mission(body: MissionCreate, store: StoreDep, settings: SettingsDep) -> MissionSummary:
    """Queue a mission on a known competition; nothing is written when the competition or platform is unusable."""
    request = MissionRequest.model_validate(body.model_dump())
    try:
        spec = await launch_spec(request, settings)
    except LaunchError as exc:
        code = status.HTTP_502_BAD_GATEWAY if exc.platform_failed else status.HTTP_422_UNPROCESSABLE_CONTENT
        raise HTTPException(code, str(exc)) from exc
    await run_in_threadpool(MissionRunner(settings, store).create, spec, queue=True)
    return await _summary(store, spec.mission_id)


@router.get("/{mission_id}")
async def get_mission(mission_id: MissionId, store: StoreDep) -> MissionDetail:
    document = await run_in_threadpool(mission_document, store, mission_id)
    if document is None:
        raise _not_found(mission_id)
    return MissionDetail.model_validate(document)


async def _existing(mission_id: MissionId, store: StoreDep) -> str:
    """Checked before a stream starts: once it has, the status code is sent."""
    if await run_in_threadpool(store.get_mission, mission_id) is None:
        raise _not_found(mission_id)
    return mission_id


async def _stream_start(
    mission_id: Annotated[str, Depends(_existing)],
    store: StoreDep,
    after: Annotated[int | None, Query(ge=0, le=MAX_INT, description="replay events after this seq")] = None,
    last_event_id: Annotated[
        int | None, Header(ge=0, le=MAX_INT, description="set by EventSource on reconnect")
    ] = None,
) -> int:
    """Where the stream starts; 204 when the mission has ended and nothing is left after that point, which tells
    an `EventSource` to stop reconnecting (HTML's SSE processing model) instead of retrying every few seconds."""
    start = last_event_id if last_event_id is not None else (after or 0)
    mission = await run_in_threadpool(store.get_mission, mission_id)
    ended = mission is not None and mission.status in TERMINAL and mission.lease_owner is None
    if ended and not await run_in_threadpool(store.events_after, mission_id, start, 1):
        raise HTTPException(status.HTTP_204_NO_CONTENT)
    return start


@router.get(
    "/{mission_id}/events",
    response_class=EventSourceResponse,
    responses={204: {"description": "the mission has ended and no event is left after the requested one"}},
)
async def mission_events(
    mission_id: MissionId,
    start: Annotated[int, Depends(_stream_start)],
    store: StoreDep,
    feeds: FeedsDep,
) -> AsyncIterator[ServerSentEvent]:
    """The mission's events as SSE: replayed from `Last-Event-ID` or `after`, then live until it ends."""
    async for event in follow(feeds, store, mission_id, start):
        yield event


@router.get("/{mission_id}/artifacts/{name}")
async def artifact(mission_id: MissionId, name: Artifact, store: StoreDep) -> FileResponse:
    document = await run_in_threadpool(mission_document, store, mission_id)
    if document is None:
        raise _not_found(mission_id)
    state = document["state"] or {}
    recorded = state.get("solution_path" if name == "solution.py" else "submission_path")
    if not recorded or not FilePath(recorded).is_file():
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"mission '{mission_id}' has no {name} yet")
    media = "text/x-python" if name == "solution.py" else "text/csv"
    return FileResponse(recorded, media_type=media, filename=name)


async def _control(operation: Callable[[Store, str], str], store: Store, mission_id: str) -> str:
    try:
        return await run_in_threadpool(operation, store, mission_id)
    except control.MissionNotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except control.MissionError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc


async def _summary(store: Store, mission_id: str) -> MissionSummary:
    row = await run_in_threadpool(store.get_mission, mission_id)
    return MissionSummary.model_validate(row, from_attributes=True)


CONTROL_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: {"description": "no such mission"},
    409: {"description": "the mission's status does not allow it"},
    415: {"description": "neither Content-Type: application/json nor an X-Agent-K header (a cross-site form?)"},
}


@router.post(
    "/{mission_id}/cancel",
    dependencies=INTENT,
    responses={202: {"description": "its worker is stopping it"}, **CONTROL_RESPONSES},
)
async def cancel_mission(mission_id: MissionId, store: StoreDep, response: Response) -> MissionSummary:
    """Cancel: at once when no worker runs the mission (200), else its worker stops the running step and its
    sandboxed processes within seconds (202; the stream ends with `mission.cancelled`)."""
    if await _control(control.cancel, store, mission_id) == "cancelling":
        response.status_code = status.HTTP_202_ACCEPTED
    return await _summary(store, mission_id)


@router.post("/{mission_id}/resume", dependencies=INTENT, responses=CONTROL_RESPONSES)
async def resume_mission(mission_id: MissionId, store: StoreDep) -> MissionSummary:
    """Queue a cancelled mission, or one whose step raised, to continue from its last snapshot."""
    await _control(control.resume, store, mission_id)
    return await _summary(store, mission_id)


@router.post("/{mission_id}/approve", dependencies=INTENT, responses=CONTROL_RESPONSES)
async def approve_mission(mission_id: MissionId, store: StoreDep) -> MissionSummary:
    """Let a mission waiting at the approval gate go on to Submission."""
    await _control(control.approve, store, mission_id)
    return await _summary(store, mission_id)


@router.post("/{mission_id}/reject", dependencies=INTENT, responses=CONTROL_RESPONSES)
async def reject_mission(mission_id: MissionId, store: StoreDep) -> MissionSummary:
    """End a mission waiting at the approval gate without submitting."""
    await _control(control.reject, store, mission_id)
    return await _summary(store, mission_id)
