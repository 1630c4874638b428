"""Amphiflow (docs/architecture.md, "Modes and phase contracts"): the workflow runs every phase, and a failed step gets
a scoped repair by an agent.

The competition's train file is laid out as a lab export would be: the target first, the id last, and a units
row under the header. The workflow's templates all crash on it; a scripted repair agent (`FunctionModel`, in
place of the remote LLM) reads the failure and the file, answers once with a script that still crashes (sent
back with our harness's error), then with one that leaves the units row out. Our cross-validation scores it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, RetryPromptPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sklearn.datasets import load_diabetes

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.mission.state import MissionResult
from agent_k.platforms.local import LocalPlatform, materialise
from agent_k.store.repository import Store

COMPETITION = "lab-export"
NAIVE = """
import argparse
import pandas as pd
from sklearn.linear_model import Ridge
p = argparse.ArgumentParser(); p.add_argument("--data"); p.add_argument("--out"); a = p.parse_args()
train, test = pd.read_csv(f"{a.data}/train.csv"), pd.read_csv(f"{a.data}/test.csv")
features = [c for c in test.columns if c != "id"]
model = Ridge().fit(train[features], train["target"])
pd.DataFrame({"id": test["id"], "target": model.predict(test[features])}).to_csv(a.out, index=False)
"""
FIXED = """
import argparse
import pandas as pd
from sklearn.linear_model import Ridge
p = argparse.ArgumentParser(); p.add_argument("--data"); p.add_argument("--out"); a = p.parse_args()
train, test = pd.read_csv(f"{a.data}/train.csv"), pd.read_csv(f"{a.data}/test.csv")
train = train[pd.to_numeric(train["target"], errors="coerce").notna()]  # the units row has no label
features = [c for c in test.columns if c != "id"]
X = train[features].apply(pd.to_numeric)
model = Ridge(alpha=0.01).fit(X, pd.to_numeric(train["target"]))
predictions = model.predict(test[features].apply(pd.to_numeric))
pd.DataFrame({"id": test["id"], "target": predictions}).to_csv(a.out, index=False)
"""


def _lab_export(root: Path) -> None:
    """A regression competition whose public train.csv is served as its host exported it."""
    frame = load_diabetes(as_frame=True).frame
    frame.insert(0, "id", np.arange(1000, 1000 + len(frame)))
    order = np.random.default_rng(0).permutation(len(frame))
    train, test = frame.iloc[order[:330]], frame.iloc[order[330:]]
    prepared = materialise.prepare(
        COMPETITION,
        "Lab export",
        train.reset_index(drop=True),
        target="target",
        metric="rmse",
        id_column="id",
        test=test.drop(columns="target").reset_index(drop=True),
        solution=test[["id", "target"]].reset_index(drop=True),
    )
    materialise.write(prepared, root, leaderboard=[])
    columns = ["target", *[c for c in train.columns if c not in ("id", "target")], "id"]
    units = {"target": "mg/dL", "id": ""} | {c: "std" for c in columns if c not in ("id", "target")}
    public = root / COMPETITION / "public" / "train.csv"
    with public.open("w") as file:
        file.write(",".join(columns) + "\n" + ",".join(units[c] for c in columns) + "\n")
        train[columns].to_csv(file, header=False, index=False)


def _repairer(seen: dict[str, object]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.setdefault("tools", sorted(tool.name for tool in info.function_tools))
        called = {
            part.tool_name
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if hasattr(part, "tool_name")
        }
        if "step_failure" not in called:
            return ModelResponse(
                parts=[
                    ToolCallPart("step_failure", {}, tool_call_id="f"),
                    ToolCallPart("read_data_file", {"name": "train.csv", "first_lines": 3}, tool_call_id="r"),
                ]
            )
        retried = [
            str(part.content)
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, RetryPromptPart) or getattr(part, "retry", None) is not None
        ]
        seen["retries"] = retried
        source = FIXED if retried else NAIVE
        answer = {"source": source, "explanation": "the row under the header holds units"}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, answer, tool_call_id=f"a{len(retried)}")])

    return FunctionModel(respond)


def _run(settings: Settings, store: Store, mode: Mode, mission_id: str, model: FunctionModel | None) -> MissionResult:
    platform = LocalPlatform(settings.competitions_dir)
    runner = MissionRunner(settings, store, platform, model=model)
    spec = MissionSpec(
        mission_id=mission_id,
        criteria=Criteria(competition=COMPETITION),
        mode=mode,
        time_budget=60,
        model="function" if model else None,
        stop_early=True,
    )
    runner.create(spec)
    return asyncio.run(runner.run(mission_id))


@pytest.fixture
def lab(home: Path, tmp_path: Path) -> tuple[Settings, Store]:
    url = f"sqlite:///{tmp_path / 'amphiflow.db'}"
    settings = Settings(home=home, database_url=url, workers=2)
    _lab_export(settings.competitions_dir)
    return settings, Store.open(url)


def test_a_failed_baseline_is_repaired_by_an_agent_and_scored_by_our_cv(lab: tuple[Settings, Store]) -> None:
    settings, store = lab
    workflow = _run(settings, store, Mode.workflow, "lab-workflow", None)
    assert not workflow.success and workflow.error == "no_valid_baseline"
    assert "could not convert string to float: 'mg/dL'" in (workflow.detail or "")

    seen: dict[str, object] = {}
    result = _run(settings, store, Mode.amphiflow, "lab-amphiflow", _repairer(seen))
    assert result.success, result.detail
    assert result.private_score is not None and result.cv_score is not None

    assert seen["tools"] == ["mission_status", "read_data_file", "step_failure", "try_solution"]
    [retry] = seen["retries"]  # type: ignore[misc]
    assert "failed our cross-validation: fold 0" in str(retry) and "could not convert string" in str(retry)
    events = [(e.type, json.loads(e.payload)) for e in store.events_after("lab-amphiflow")]
    repair = [(t, p) for t, p in events if t.startswith("phase.repair")]
    assert [t for t, _ in repair] == ["phase.repair.started", "phase.repair.succeeded"]
    assert repair[0][1]["step"] == "baseline" and "mg/dL" in repair[0][1]["error"]
    succeeded = repair[1][1]
    failed_step = next(p for t, p in events if t == "step.failed")
    assert failed_step["strategy"] == "repair" and failed_step["step"] == "baseline"

    # The repaired script is a candidate like any other: its score is our harness's, fold by fold.
    candidate = next(c for c in store.candidates("lab-amphiflow") if c.key == succeeded["candidate_key"])
    assert len(json.loads(candidate.fold_scores or "[]")) == 5
    assert candidate.cv_mean == pytest.approx(succeeded["cv_score"])
    state = json.loads(store.get_mission("lab-amphiflow").result or "{}")["state"]  # type: ignore[union-attr]
    prototype = next(r for r in state["phase_history"] if r["phase"] == "prototype")
    assert prototype["mode"] == "workflow" and prototype["strategy"] == "repair"
    assert prototype["repaired"] == "baseline" and prototype["step_failures"][0]["step"] == "baseline"
    assert state["prototype_score"] == pytest.approx(succeeded["cv_score"])
