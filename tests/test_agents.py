"""Agent mode with a scripted model (pydantic-ai `FunctionModel` stands in for the remote LLM): the Scientist
drives Research through phase-scoped tools, out-of-phase calls are refused and recorded, and a failing model
falls back to the workflow path (or, in `--mode agent`, fails the mission)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.mission.state import MissionResult
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from tests.conftest import run_cli

RESEARCH_TOOLS = {
    "column_summaries",
    "column_details",
    "target_stats",
    "leakage_checks",
    "drift",
    "validation_scheme",
    "data_shape",
    "mission_status",
}


@pytest.fixture
def sqlite_store(home: Path, tmp_path: Path) -> tuple[Settings, Store]:
    url = f"sqlite:///{tmp_path / 'agents.db'}"  # about agents, not storage: one database is enough
    return Settings(home=home, database_url=url, workers=2), Store.open(url)


def _mission(
    settings: Settings,
    store: Store,
    model: FunctionModel,
    mode: Mode = Mode.auto,
    criteria: Criteria | None = None,
    budget: float = 8,
) -> MissionResult:
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir), model=model)
    criteria = criteria or Criteria(competition="penguins")
    spec = MissionSpec(
        mission_id="agentic", criteria=criteria, mode=mode, time_budget=budget, stop_early=True, model="function"
    )
    runner.create(spec)
    return asyncio.run(runner.run("agentic"))


def _phase(info: AgentInfo) -> str:
    tools = {tool.name for tool in info.function_tools}
    return next(phase for phase, tool in PHASE_TOOL.items() if tool in tools)


PHASE_TOOL = {"discovery": "inspect_competition", "research": "target_stats", "evolution": "candidates_so_far"}


def _returns(messages: list[ModelMessage]) -> dict[str, ToolReturnPart]:
    return {
        part.tool_name: part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    }


def test_the_scientist_plans_research_through_its_own_tools(sqlite_store: tuple[Settings, Store]) -> None:
    settings, store = sqlite_store
    seen: dict[str, object] = {}

    def scientist(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _phase(info) != "research":
            return _failing(messages, info)
        seen.setdefault("tools", {tool.name for tool in info.function_tools})
        returns = _returns(messages)
        if not returns:
            calls = ["column_summaries", "leakage_checks", "list_competitions"]  # the last is Discovery's
            return ModelResponse(parts=[ToolCallPart(name, {}, tool_call_id=f"c{i}") for i, name in enumerate(calls)])
        seen["refusal"] = returns["list_competitions"].content
        columns = [line.split(":")[0] for line in returns["column_summaries"].content]  # type: ignore[union-attr]
        seen["dropped"] = columns[-1]
        plan = {"findings": ["three species"], "model_families": ["linear", "lightgbm"], "drop_columns": [columns[-1]]}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, plan, tool_call_id="out")])

    result = _mission(settings, store, FunctionModel(scientist))
    assert result.success, result.detail

    assert seen["tools"] == RESEARCH_TOOLS, "the model sees only the tools of its phase"
    assert "Refused: 'list_competitions' is a discovery tool" in str(seen["refusal"])
    events = store.events_after("agentic")
    narrowed = [json.loads(e.payload) for e in events if e.type == "tool.narrowed"]
    assert narrowed == [
        {
            "type": "tool.narrowed",
            "tool": "list_competitions",
            "reason": "'list_competitions' is a discovery tool; it is not available in research",
            "code": "wrong_phase",
            "shadow": False,
        }
    ]
    row = store.get_mission("agentic")
    state = json.loads(row.result or "{}")["state"]  # type: ignore[union-attr]
    modes = {record["phase"]: record["mode"] for record in state["phase_history"]}
    assert modes["research"] == "agent" and modes["prototype"] == "workflow"
    findings = state["research_findings"]
    assert findings["model_families"] == ["linear", "lightgbm"] and findings["excluded"] == [seen["dropped"]]
    assert "three species" in findings["notes"]
    completed = [json.loads(e.payload) for e in events if e.type == "phase.completed" and e.phase == "research"]
    assert completed[0]["llm_requests"] == 2 and completed[0]["llm_tokens"] > 0
    assert state["budget"]["llm_tokens"]["research"] == completed[0]["llm_tokens"]


def _failing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ModelHTTPError(status_code=500, model_name="scripted", body="upstream exploded")


def test_a_failing_model_falls_back_to_the_workflow_path(sqlite_store: tuple[Settings, Store]) -> None:
    settings, store = sqlite_store
    result = _mission(settings, store, FunctionModel(_failing), budget=20)  # room for an Evolution generation
    assert result.success, result.detail
    fallbacks = [(e.phase, json.loads(e.payload)) for e in store.events_after("agentic") if e.type == "phase.fallback"]
    assert [phase for phase, _ in fallbacks] == ["research", "evolution"], "each agent phase falls back"
    assert fallbacks[0][1]["reason"].startswith("ModelHTTPError")
    state = json.loads(store.get_mission("agentic").result or "{}")["state"]  # type: ignore[union-attr]
    research = next(r for r in state["phase_history"] if r["phase"] == "research")
    assert research["mode"] == "workflow" and research["fallback"].startswith("ModelHTTPError")


def test_agent_mode_fails_the_mission_instead_of_falling_back(sqlite_store: tuple[Settings, Store]) -> None:
    settings, store = sqlite_store
    result = _mission(settings, store, FunctionModel(_failing), mode=Mode.agent)
    assert not result.success and result.error == "agent_failed"
    assert "research agent failed: ModelHTTPError" in (result.detail or "")
    assert "phase.fallback" not in [e.type for e in store.events_after("agentic")]


def test_the_lobbyist_ranks_the_eligible_competitions(sqlite_store: tuple[Settings, Store]) -> None:
    """Without a named competition, the Lobbyist orders those that fit the criteria (the workflow would take
    the smallest, wine); it must answer with an eligible id, and is made to retry when it does not."""
    settings, store = sqlite_store
    answers = iter([["kaggle-titanic-2"], ["penguins", "wine"]])

    def lobbyist(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        output = info.output_tools[0].name
        if _phase(info) == "evolution":
            return _failing(messages, info)
        if _phase(info) == "research":
            plan = {"findings": [], "model_families": ["lightgbm"], "drop_columns": []}
            return ModelResponse(parts=[ToolCallPart(output, plan)])
        if "inspect_competition" not in _returns(messages):
            return ModelResponse(parts=[ToolCallPart("inspect_competition", {"competition_id": "penguins"})])
        ranking = {"ranking": next(answers), "reason": "more rows to learn from"}
        return ModelResponse(parts=[ToolCallPart(output, ranking)])

    criteria = Criteria(task="multiclass", max_rows=400)
    result = _mission(settings, store, FunctionModel(lobbyist), criteria=criteria)
    assert result.success and result.competition_id == "penguins", result.detail
    state = json.loads(store.get_mission("agentic").result or "{}")["state"]  # type: ignore[union-attr]
    assert state["discovered_competitions"] == ["penguins", "wine", "tissue"]  # the unranked eligible one last
    assert state["phase_history"][0]["mode"] == "agent"
    logs = [json.loads(e.payload)["message"] for e in store.events_after("agentic") if e.type == "log"]
    assert "lobbyist chose penguins: more rows to learn from" in logs


def test_the_cli_refuses_a_model_it_cannot_use_before_writing_anything(home: Path) -> None:
    for args, message in (
        (["--mode", "agent"], "mode 'agent' needs a model"),
        (["--model", "anthropic:claude-sonnet-4-5"], "pip install 'agent-k[anthropic]'"),
        (["--model", "nosuch:model"], "Unknown model"),
    ):
        result = run_cli("run", "--competition", "penguins", *args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
    assert not (home / "agent_k.db").exists() and not (home / "missions").exists()


def test_the_evolvers_code_edit_is_measured_by_our_cv_not_by_its_claims(sqlite_store: tuple[Settings, Store]) -> None:
    """The Evolver edits the best candidate's solution.py and claims a perfect score; the edit is evaluated by
    the harness (each fold run without its held-out labels) and archived with the score our metric gives."""
    settings, store = sqlite_store
    parents: list[str] = []

    def evolver(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        output = info.output_tools[0].name
        if _phase(info) == "research":
            plan = {"findings": [], "model_families": ["lightgbm", "linear"], "drop_columns": []}
            return ModelResponse(parts=[ToolCallPart(output, plan)])
        returns = _returns(messages)
        if "candidates_so_far" not in returns:
            return ModelResponse(parts=[ToolCallPart("candidates_so_far", {"limit": 3})])
        parents.append(returns["candidates_so_far"].content["candidates"][0]["key"])  # type: ignore[index]
        best = parents[0]  # the same edit of the same script, every generation
        if "candidate_details" not in returns:
            return ModelResponse(parts=[ToolCallPart("candidate_details", {"candidate_key": best})])
        edit = {"find": "SEED = 42", "replace": "SEED = 7"}
        proposals = [
            {"kind": "script", "parent": best, "edits": [edit], "rationale": "reseeded: this scores 0.9999"},
            {"kind": "recipe", "parent": best, "recipe": {"family": "linear", "params": {"C": 0.3}}},
        ]
        return ModelResponse(parts=[ToolCallPart(output, {"proposals": proposals, "cv_score": 0.9999})])

    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir), model=FunctionModel(evolver))
    spec = MissionSpec(
        mission_id="agentic",
        criteria=Criteria(competition="penguins"),
        mode=Mode.auto,
        time_budget=120,
        stop_early=True,
        model="function",
    )
    runner.create(spec)
    result = asyncio.run(runner.run("agentic"))
    assert result.success, result.detail

    rows = {row.key: row for row in store.candidates("agentic")}
    scripts = [row for row in rows.values() if '"source"' in row.recipe]
    assert len(scripts) == 1, "the same edit proposed every generation is evaluated once"
    script = scripts[0]
    assert "SEED = 7" in json.loads(script.recipe)["source"]
    assert script.status == "succeeded", script.error_tail
    folds = json.loads(script.fold_scores)
    assert len(folds) == 5 and script.cv_mean == pytest.approx(sum(folds) / 5)
    assert script.cv_mean != 0.9999 and 0.9 < script.cv_mean <= 1.0
    folder = settings.missions_dir / "agentic" / "candidates" / script.key
    for k in range(5):
        held_out = (folder / f"fold{k}" / "test.csv").read_text().splitlines()[0].split(",")
        assert "species" not in held_out, "the script never sees the labels it is scored on"
    assert (folder / "submission.csv").exists()
    linear = [row for row in rows.values() if '"C":0.3' in row.recipe.replace(" ", "")]
    assert linear and linear[0].status == "succeeded"

    evaluated = {
        json.loads(e.payload)["candidate_key"]: json.loads(e.payload)
        for e in store.events_after("agentic")
        if e.type == "candidate.evaluated"
    }
    assert evaluated[script.key]["cv_score"] == script.cv_mean
    state = json.loads(store.get_mission("agentic").result or "{}")["state"]  # type: ignore[union-attr]
    assert {r["phase"]: r["mode"] for r in state["phase_history"]}["evolution"] == "agent"
    assert state["evolution_state"]["best_score"] != 0.9999


def test_output_still_invalid_after_retries_falls_back(sqlite_store: tuple[Settings, Store]) -> None:
    settings, store = sqlite_store
    asked = []

    def stubborn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _phase(info) != "research":
            return _failing(messages, info)
        asked.append(1)
        plan = {"findings": [], "model_families": ["linear"], "drop_columns": ["no_such_column"]}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, plan)])

    result = _mission(settings, store, FunctionModel(stubborn))
    assert result.success, result.detail
    assert len(asked) == 3, "asked once, then retried twice with the validator's reason"
    [fallback] = [
        json.loads(e.payload)
        for e in store.events_after("agentic")
        if e.phase == "research" and e.type == "phase.fallback"
    ]
    assert fallback["reason"].startswith("UnexpectedModelBehavior")


def test_the_scientist_sees_the_forecast_its_data_is(sqlite_store: tuple[Settings, Store]) -> None:
    """`data_shape` tells the model what the columns alone do not: the rows are monthly series per city, the
    test is their future, and validation forecasts too."""
    settings, store = sqlite_store
    seen: dict[str, object] = {}

    def scientist(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _phase(info) != "research":
            return _failing(messages, info)
        returns = _returns(messages)
        if "data_shape" not in returns:
            return ModelResponse(parts=[ToolCallPart("data_shape", {}, tool_call_id="shape")])
        seen["shape"] = returns["data_shape"].content
        plan = {"findings": ["monthly sales per city"], "model_families": ["linear"]}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, plan, tool_call_id="out")])

    _mission(settings, store, FunctionModel(scientist), criteria=Criteria(competition="txhousing"), budget=20)
    shape = seen["shape"]
    assert isinstance(shape, dict), shape
    assert shape["targets"] == ["sales"] and shape["text_columns"] == {}
    assert shape["time"]["forecast"] and shape["time"]["keys"] == ["city"] and shape["time"]["season"] == 12
    assert shape["cv"]["kind"] == "forward" and "forecast" in shape["cv"]["why"]
