"""Fork and replay: a new mission from another's snapshot, and a mission's steps with the state each began from."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, status
from fastapi.concurrency import run_in_threadpool

from agent_k.api.deps import MissionId, SettingsDep, StoreDep
from agent_k.api.schemas import MissionFork, MissionSummary
from agent_k.api.security import require_intent
from agent_k.mission.control import MissionError, MissionNotFound
from agent_k.mission.fork import ForkChanges, InvalidFork, fork_mission
from agent_k.mission.replay import ReplayStep, StepNotFound, replay_steps, state_at
from agent_k.store.repository import MissionExists

router = APIRouter(prefix="/missions", tags=["missions"])

RESPONSES: dict[int | str, dict[str, Any]] = {404: {"description": "no such mission, or no such step"}}


@router.post(
    "/{mission_id}/fork",
    dependencies=[Depends(require_intent)],
    status_code=status.HTTP_201_CREATED,
    responses={
        **RESPONSES,
        409: {"description": "the mission is still running, never reached that phase, or the id is taken"},
        422: {
            "description": "an option that cannot change, a value it cannot take (a mode without a model, a "
            "webhook without a secret)"
        },
    },
)
async def fork(mission_id: MissionId, body: MissionFork, store: StoreDep, settings: SettingsDep) -> MissionSummary:
    """Queue a new mission that starts from this one's snapshot at `from_phase`, with its findings and its
    archive of candidates (none is evaluated again) and the options in `set` changed; this one is untouched."""
    try:
        spec = await run_in_threadpool(
            fork_mission,
            store,
            settings,
            mission_id,
            body.from_phase,
            time_budget=body.time_budget,
            changes=ForkChanges.checked(body.set),
            mission_id=body.mission_id,
        )
    except InvalidFork as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    except MissionNotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except (MissionError, MissionExists) as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    row = await run_in_threadpool(store.get_mission, spec.mission_id)
    return MissionSummary.model_validate(row, from_attributes=True)


@router.get("/{mission_id}/steps", responses=RESPONSES)
async def steps(mission_id: MissionId, store: StoreDep) -> list[ReplayStep]:
    """The mission's steps in order: each snapshot's summary and the events sent while it ran."""
    if await run_in_threadpool(store.get_mission, mission_id) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no mission '{mission_id}'")
    return await run_in_threadpool(replay_steps, store, mission_id)


@router.get("/{mission_id}/steps/{seq}", responses=RESPONSES)
async def step_state(
    mission_id: MissionId, seq: Annotated[int, Path(ge=0, le=2**31 - 1)], store: StoreDep
) -> dict[str, Any]:
    """The state step `seq` began from, as it was stored."""
    try:
        return await run_in_threadpool(state_at, store, mission_id, seq)
    except StepNotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
