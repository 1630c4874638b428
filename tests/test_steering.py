"""Steering agents with messages (docs/architecture.md, "Modes and phase contracts"), with scripted models
(`FunctionModel` in place of the LLM): a saturated Scientist is nudged and then acts; the 80% budget nudge reaches the
model; an Evolver answer asking for two phase outcomes is blocked and asked again; shadow mode records what it would
remove and removes nothing; and an operator narrows and widens a mission's tools over the HTTP API."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.mission.state import MissionResult
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from tests.support.api_client import serve

PLAN = {"findings": ["acted after the nudge"], "model_families": ["linear"], "drop_columns": []}
Respond = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


@pytest.fixture
def sqlite(home: Path, tmp_path: Path) -> tuple[str, Store]:
    url = f"sqlite:///{tmp_path / 'steering.db'}"
    return url, Store.open(url)


def _settings(home: Path, url: str, **values: Any) -> Settings:
    return Settings(home=home, database_url=url, workers=2, **values)


def _mission(settings: Settings, store: Store, respond: Respond, mission_id: str, budget: float = 10) -> MissionResult:
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir), model=FunctionModel(respond))
    if store.get_mission(mission_id) is None:
        spec = MissionSpec(
            mission_id=mission_id,
            criteria=Criteria(competition="penguins"),
            mode=Mode.auto,
            time_budget=budget,
            model="function",
            stop_early=True,
        )
        runner.create(spec)
    return asyncio.run(runner.run(mission_id))


def _texts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart | RetryPromptPart) or getattr(part, "retry", None) is not None
    ]


def _is_scientist(info: AgentInfo) -> bool:
    return "target_stats" in {tool.name for tool in info.function_tools}


def _evolver_declines(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """An Evolver with nothing to add: the search ends and the mission goes on to Submission."""
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"proposals": [], "finished": True})])


def _events(store: Store, mission_id: str, kind: str) -> list[dict[str, Any]]:
    return [json.loads(e.payload) for e in store.events_after(mission_id) if e.type == kind]


def test_a_saturated_scientist_is_nudged_and_then_acts(home: Path, sqlite: tuple[str, Store]) -> None:
    url, store = sqlite
    turns: list[str] = []

    def scientist(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not _is_scientist(info):
            return _evolver_declines(messages, info)
        if not any("Act now" in text for text in _texts(messages)):
            turns.append("read")  # the same summary again and again: nothing new is learned
            return ModelResponse(parts=[ToolCallPart("column_summaries", {}, tool_call_id=f"c{len(turns)}")])
        turns.append("answer")
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, PLAN, tool_call_id="plan")])

    result = _mission(_settings(home, url, saturation_turns=3), store, scientist, "saturated")
    assert result.success, result.detail
    assert turns == ["read", "read", "read", "answer"], "three stale turns, the nudge, then the answer"
    [saturation] = _events(store, "saturated", "exploration.saturation")
    assert saturation["agent"] == "scientist" and saturation["stale_turns"] == 3
    nudges = [n for n in _events(store, "saturated", "agent.nudged") if n["kind"] == "saturation"]
    assert len(nudges) == 1 and nudges[0]["agent"] == "scientist"
    transitions = _events(store, "saturated", "phase.transition")
    assert {"agent": "scientist", "previous": "exploring", "entered": "acting"}.items() <= transitions[0].items()
    state = json.loads(store.get_mission("saturated").result or "{}")["state"]  # type: ignore[union-attr]
    assert "acted after the nudge" in state["research_findings"]["notes"]


def test_the_budget_nudges_reach_the_models_messages(home: Path, sqlite: tuple[str, Store]) -> None:
    url, store = sqlite
    seen: list[str] = []

    def slow_scientist(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not _is_scientist(info):
            return _evolver_declines(messages, info)
        if len(messages) == 1:
            time.sleep(2.0)  # past the whole of Research's allowance (15% of 10 s)
            return ModelResponse(parts=[ToolCallPart("target_stats", {}, tool_call_id="t")])
        seen.extend(_texts(messages))
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, PLAN, tool_call_id="plan")])

    result = _mission(_settings(home, url), store, slow_scientist, "late")
    assert result.success, result.detail
    assert any("of this phase's time is used. Finish" in text for text in seen), seen
    assert any("Stop exploring" in text for text in seen), seen
    kinds = [n["kind"] for n in _events(store, "late", "agent.nudged")]
    assert kinds[:2] == ["finish", "validate"]


def test_an_answer_asking_for_two_phase_outcomes_is_blocked_and_asked_again(
    home: Path, sqlite: tuple[str, Store]
) -> None:
    url, store = sqlite
    answers: list[dict[str, Any]] = []

    def evolver(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        output = info.output_tools[0].name
        if _is_scientist(info):
            return ModelResponse(parts=[ToolCallPart(output, PLAN)])
        returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if not any(p.tool_name == "candidates_so_far" for p in returns):
            return ModelResponse(parts=[ToolCallPart("candidates_so_far", {})])
        table = next(p.content for p in returns if p.tool_name == "candidates_so_far")
        best = table["candidates"][0]["key"]  # type: ignore[index]
        proposal = {"kind": "recipe", "parent": best, "recipe": {"family": "linear", "params": {"C": 0.5}}}
        blocked = any("ambiguous_phase_transition" in text for text in _texts(messages))
        answer = {"proposals": [proposal], "finished": not blocked}  # both at first: search on, and stop
        answers.append(answer)
        return ModelResponse(parts=[ToolCallPart(output, answer)])

    result = _mission(_settings(home, url), store, evolver, "ambiguous", budget=20)
    assert result.success, result.detail
    assert answers[0]["finished"] and not answers[1]["finished"]
    blocked = _events(store, "ambiguous", "transition.blocked")
    assert blocked[0] == {
        "type": "transition.blocked",
        "reason": "ambiguous_phase_transition",
        "outcomes": ["evolution", "submission"],
    }
    keys = {c.key for c in store.candidates("ambiguous")}
    assert len(keys) >= 3, "the answer given again was evaluated"


def test_shadow_mode_records_what_it_would_remove_and_removes_nothing(home: Path, sqlite: tuple[str, Store]) -> None:
    url, store = sqlite
    seen: dict[str, Any] = {}

    def scientist(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not _is_scientist(info):
            return _evolver_declines(messages, info)
        seen.setdefault("tools", {tool.name for tool in info.function_tools})
        returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("list_competitions", {}, tool_call_id="l")])
        seen["competitions"] = returns[0].content
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, PLAN, tool_call_id="plan")])

    result = _mission(_settings(home, url, contracts="shadow"), store, scientist, "shadow")
    assert result.success, result.detail
    assert {"list_competitions", "candidates_so_far", "try_solution"} <= seen["tools"], "nothing is removed"
    assert any(c["id"] == "penguins" for c in seen["competitions"]), "a Discovery tool ran in Research"
    narrowed = [n for n in _events(store, "shadow", "tool.narrowed") if n["tool"] == "list_competitions"]
    assert narrowed[0]["shadow"] is True and narrowed[0]["code"] == "wrong_phase"
    unmet = [n for n in _events(store, "shadow", "tool.narrowed") if n["tool"] == "candidates_so_far"]
    assert (
        unmet and unmet[0]["shadow"] is True and {n["code"] for n in unmet} <= {"wrong_phase", "precondition_not_met"}
    )


@pytest.fixture
def api(home: Path, sqlite: tuple[str, Store]) -> Iterator[str]:
    url, _ = sqlite
    yield from serve({"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": url}, "--no-worker")


def test_an_operator_narrows_and_widens_a_missions_tools_over_the_api(
    home: Path, sqlite: tuple[str, Store], api: str
) -> None:
    url, store = sqlite
    created = httpx.post(f"{api}/missions", json={"competition": "penguins", "time_budget": 10, "stop_early": True})
    assert created.status_code == 201, created.text
    mission_id = created.json()["id"]
    tools = f"{api}/missions/{mission_id}/tools"

    narrowed = httpx.post(f"{tools}/narrow", json={"tools": ["drift", "leakage_checks"]})
    assert narrowed.status_code == 200, narrowed.text
    assert narrowed.json()["removed_by_operator"] == ["drift", "leakage_checks"]
    assert "drift" not in narrowed.json()["tools_by_phase"]["research"]
    widened = httpx.post(f"{tools}/widen", json={"tools": ["leakage_checks", "list_competitions"]})
    assert widened.json()["removed_by_operator"] == ["drift"]
    research = widened.json()["tools_by_phase"]["research"]
    assert "leakage_checks" in research and "list_competitions" not in research, "widening never adds past the contract"
    unknown = httpx.post(f"{tools}/narrow", json={"tools": ["rm_rf"]})
    assert unknown.status_code == 422 and "rm_rf" in unknown.text
    assert httpx.post(f"{api}/missions/nope/tools/narrow", json={"tools": ["drift"]}).status_code == 404

    seen: dict[str, Any] = {}

    def scientist(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not _is_scientist(info):
            return _evolver_declines(messages, info)
        seen.setdefault("tools", {tool.name for tool in info.function_tools})
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, PLAN)])

    result = _mission(_settings(home, url), store, scientist, mission_id)
    assert result.success, result.detail
    assert "drift" not in seen["tools"] and "leakage_checks" in seen["tools"]
    manual = [n for n in _events(store, mission_id, "tool.narrowed") if n["code"] == "manual_filter"]
    assert [n["tool"] for n in manual] == ["drift"]
    done = httpx.post(f"{tools}/widen", json={"tools": ["drift"]})
    assert done.status_code == 409 and "already succeeded" in done.text
