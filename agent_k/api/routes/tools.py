"""An operator narrows a running mission's agent tools, or gives back what they narrowed (never more)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, status
from fastapi.concurrency import run_in_threadpool

from agent_k.api.deps import MissionId, StoreDep
from agent_k.api.routes.missions import CONTROL_RESPONSES
from agent_k.api.schemas import ToolChange, ToolFilter
from agent_k.api.security import require_intent
from agent_k.mission import control
from agent_k.mission.contract import MISSION_CONTRACT

router = APIRouter(prefix="/missions", tags=["missions"])
RESPONSES = {**CONTROL_RESPONSES, 422: {"description": "a tool the contract does not declare"}}


@router.post("/{mission_id}/tools/narrow", dependencies=[Depends(require_intent)], responses=RESPONSES)
async def narrow_tools(mission_id: MissionId, body: ToolChange, store: StoreDep) -> ToolFilter:
    """Remove tools from the mission's agents; they are told before their next model request."""
    return await _change(store, mission_id, body.tools, narrow=True)


@router.post("/{mission_id}/tools/widen", dependencies=[Depends(require_intent)], responses=RESPONSES)
async def widen_tools(mission_id: MissionId, body: ToolChange, store: StoreDep) -> ToolFilter:
    """Give back tools an operator removed. A tool the contract withholds in a phase stays withheld there."""
    return await _change(store, mission_id, body.tools, narrow=False)


async def _change(store: StoreDep, mission_id: str, tools: list[str], *, narrow: bool) -> ToolFilter:
    try:
        removed = await run_in_threadpool(control.change_tools, store, mission_id, tools, narrow=narrow)
    except control.UnknownTools as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_ENTITY, str(exc)) from exc
    except control.MissionNotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except control.MissionError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    by_phase = {
        phase.name: [t.name for t in MISSION_CONTRACT.tools_of(phase.name) if t.name not in removed]
        for phase in MISSION_CONTRACT.phases
    }
    return ToolFilter(mission_id=mission_id, removed_by_operator=removed, tools_by_phase=by_phase)
