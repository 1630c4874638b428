"""`agent-k run` and `agent-k resume`: drive a mission with a live view, then report."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from agent_k.cli.common import EXIT_FAILED, MISSION_ID, fail_input, load_settings, open_store
from agent_k.cli.view import MissionView, summary_table
from agent_k.platforms.base import TaskType

if TYPE_CHECKING:
    from agent_k.config import Settings
    from agent_k.mission.runner import MissionSpec
    from agent_k.mission.state import MissionResult


class ModeOption(StrEnum):
    auto = "auto"
    workflow = "workflow"
    agent = "agent"


class PlatformOption(StrEnum):
    local = "local"
    kaggle = "kaggle"


class MetricOption(StrEnum):
    auc = "auc"
    accuracy = "accuracy"
    logloss = "logloss"
    rmse = "rmse"
    mae = "mae"
    r2 = "r2"


def report(result: MissionResult, competition: str | None) -> dict[str, Any]:
    """The `--json` contract object (DESIGN §7)."""
    return {
        "mission_id": result.mission_id,
        "status": result.status,
        "competition": result.competition_id or competition,
        "cv_score": result.cv_score,
        "public_score": result.public_score,
        "private_score": result.private_score,
        "rank": result.rank,
        "teams": result.teams,
        "percentile": result.percentile,
        "medal": result.medal,
        "submission_path": result.submission_path,
        "solution_path": result.solution_path,
        "leakage_suspects": result.leakage_suspects,
        "elapsed_s": result.duration_s,
        "error": result.error,
    }


def drive(
    mission_id: str, *, settings: Settings, as_json: bool, executor: str | None, create: MissionSpec | None = None
) -> None:
    """Run (or resume) `mission_id` with a live view; print the summary and exit 0 or 1."""
    from agent_k.mission.control import MissionError
    from agent_k.mission.runner import MissionRunner
    from agent_k.ml.executors import ExecutorError, make_evaluator
    from agent_k.store.repository import MissionExists

    try:
        evaluator = make_evaluator(executor or settings.executor, settings.parallel_evaluations)
    except ExecutorError as exc:
        fail_input(str(exc))
    store = open_store(settings)
    console = Console(stderr=as_json)
    view = MissionView(console=console, live=console.is_terminal)
    runner = MissionRunner(settings, store, on_event=view.handle, evaluator=evaluator)
    try:
        if create is not None:
            runner.create(mission_id, create)
        with view:
            result = asyncio.run(runner.run(mission_id))
    except (MissionExists, MissionError) as exc:
        fail_input(str(exc))
    except KeyboardInterrupt:
        console.print(f"interrupted; continue with: agent-k resume {mission_id}")
        raise typer.Exit(130) from None
    finally:
        evaluator.close()
        store.close()
    data = report(result, create.criteria.competition if create else None)
    console.print(summary_table(data))
    if result.status == "awaiting_approval":
        console.print(f"awaiting approval: agent-k approve {mission_id}  (or: agent-k reject {mission_id})")
    if as_json:
        sys.stdout.write(json.dumps(data) + "\n")
    raise typer.Exit(0 if result.status in ("succeeded", "awaiting_approval") else EXIT_FAILED)


def run(
    competition: Annotated[str | None, typer.Option("--competition", "-c", help="competition id")] = None,
    time_budget: Annotated[
        float | None, typer.Option(min=1.0, help="seconds for the whole mission [default: 120]")
    ] = None,
    mode: Annotated[
        ModeOption,
        typer.Option(help="auto: agents when a model is set, else workflow; agent: no fallback; workflow: no model"),
    ] = ModeOption.auto,
    model: Annotated[
        str | None, typer.Option(help="pydantic-ai model string, e.g. openai:gpt-4o [default: AGENT_K_MODEL]")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option(min=0.0, help="USD the agents may spend; then the rest runs as workflow")
    ] = None,
    platform: Annotated[PlatformOption, typer.Option(help="competition platform")] = PlatformOption.local,
    mission_id: Annotated[str | None, typer.Option(help="choose the mission id (default: generated)")] = None,
    keep_columns: Annotated[
        list[str] | None, typer.Option("--keep-columns", help="keep this leakage suspect as a feature")
    ] = None,
    task: Annotated[TaskType | None, typer.Option(help="without --competition: wanted task")] = None,
    metric: Annotated[MetricOption | None, typer.Option(help="without --competition: wanted metric")] = None,
    max_rows: Annotated[int | None, typer.Option(min=1, help="without --competition: largest dataset")] = None,
    keyword: Annotated[list[str] | None, typer.Option(help="without --competition: rank by these words")] = None,
    executor: Annotated[
        str | None, typer.Option(help="where candidates run: local (default) or tcp://HOST:PORT of a Dask scheduler")
    ] = None,
    require_approval: Annotated[
        bool, typer.Option(help="stop before Submission until `agent-k approve ID` (or reject)")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON on the last stdout line")] = False,
) -> None:
    """Run a mission: Discovery, Research, Prototype, Evolution, Submission."""
    from agent_k.mission.runner import MissionSpec
    from agent_k.mission.state import Mode
    from agent_k.platforms.base import Criteria

    settings = load_settings()
    model = check_model(model or settings.model, mode)
    check_competition(platform.value, competition, settings)
    mission_id = mission_id or f"m-{uuid.uuid4().hex[:12]}"
    if not MISSION_ID.match(mission_id):
        fail_input(f"invalid mission id '{mission_id}': use letters, digits, '-', '_' or '.' (at most 64)")
    spec = MissionSpec(
        criteria=Criteria(
            competition=competition,
            task=task,
            metric=metric.value if metric else None,
            max_rows=max_rows,
            keywords=keyword or [],
        ),
        mode=Mode(mode.value),
        model=model,
        max_cost_usd=max_cost,
        time_budget=time_budget or settings.time_budget,
        keep_columns=tuple(keep_columns or ()),
        platform=platform.value,
        require_approval=require_approval,
    )
    drive(mission_id, settings=settings, as_json=as_json, executor=executor, create=spec)


def check_competition(platform: str, competition: str | None, settings: Settings) -> None:
    """Exit 2, before any mission is written, when the platform is unusable here or lacks the competition."""
    from agent_k.platforms.base import PlatformError
    from agent_k.platforms.factory import check_platform, verify_competition

    try:
        if competition is None:
            check_platform(platform, settings)
        else:
            asyncio.run(verify_competition(platform, competition, settings))
    except PlatformError as exc:
        fail_input(str(exc))


def check_model(model: str | None, mode: ModeOption) -> str | None:
    """The model a mission will use (None in workflow mode); exits 2 when it cannot be used here."""
    from agent_k.agents.models import ModelUnavailable, build_model

    if mode is ModeOption.workflow:
        return None
    if model is None:
        if mode is ModeOption.agent:
            fail_input("--mode agent needs a model: pass --model or set AGENT_K_MODEL")
        return None
    try:
        build_model(model)
    except ModelUnavailable as exc:
        fail_input(str(exc))
    return model


def resume(
    mission_id: Annotated[str, typer.Argument(help="the mission to resume")],
    executor: Annotated[
        str | None, typer.Option(help="where candidates run: local (default) or tcp://HOST:PORT of a Dask scheduler")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON on the last stdout line")] = False,
) -> None:
    """Resume a mission from its last unfinished step (after a crash or kill)."""
    drive(mission_id, settings=load_settings(), as_json=as_json, executor=executor)
