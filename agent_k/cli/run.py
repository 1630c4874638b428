"""`agent-k run` and `agent-k resume`: drive a mission with a live view, then report."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from agent_k.cli.common import (
    EXIT_FAILED,
    fail_input,
    known_metric,
    known_platform,
    load_settings,
    open_store,
    start_tracing,
)
from agent_k.cli.view import MissionView, summary_table
from agent_k.competition import TaskType
from agent_k.mission.option_help import OPTION_HELP
from agent_k.mission.phases import Mode
from agent_k.store.status import MissionStatus

if TYPE_CHECKING:
    from agent_k.config import Settings
    from agent_k.mission.runner import MissionRunner
    from agent_k.mission.state import MissionResult
    from agent_k.platforms.folders import FolderCompetition

ExecutorOption = Annotated[
    str | None, typer.Option(help="where candidates run: local (default) or tcp://HOST:PORT of a Dask scheduler")
]
JsonOption = Annotated[bool, typer.Option("--json", help="print the result as JSON on the last stdout line")]


def report(result: MissionResult, competition: str | None) -> dict[str, Any]:
    """The `--json` contract object (docs/cli.md, "agent-k run")."""
    from agent_k.competition import Scores

    return {
        "mission_id": result.mission_id,
        "status": result.status,
        "competition": result.competition_id or competition,
        **result.model_dump(include=set(Scores.model_fields)),
        "submission_path": result.submission_path,
        "solution_path": result.solution_path,
        "leakage_suspects": result.leakage_suspects,
        "elapsed_s": result.duration_s,
        "notes": result.notes,
        "error": result.error,
    }


def drive(
    mission_id: str,
    *,
    settings: Settings,
    as_json: bool,
    executor: str | None,
    prepare: Callable[[MissionRunner], object] | None = None,
    competition: str | None = None,
    deliver: Callable[[MissionResult], str] | None = None,
) -> None:
    """Run (or resume) `mission_id` with a live view; print the summary and exit 0 or 1. `prepare` makes the
    mission first (held by the runner, so no worker takes it); `deliver` hands a mission's submission on (`--out`)
    and says where, or raises `ValueError` or `OSError` saying why it could not."""
    from agent_k.dashboard.report import report_path, write_report
    from agent_k.mission.control import MissionError
    from agent_k.mission.runner import MissionRunner
    from agent_k.ml.executors import ExecutorError, make_evaluator
    from agent_k.store.repository import MissionExists

    try:
        evaluator = make_evaluator(executor or settings.executor, settings.parallel_evaluations)
    except ExecutorError as exc:
        fail_input(str(exc))
    start_tracing(settings)
    store = open_store(settings)
    console = Console(stderr=as_json)
    view = MissionView(console=console, live=console.is_terminal)
    runner = MissionRunner(settings, store, on_event=view.handle, evaluator=evaluator)
    try:
        if prepare is not None:
            prepare(runner)
        with view:
            result = asyncio.run(runner.run(mission_id))
    except (MissionExists, MissionError) as exc:
        fail_input(str(exc))
    except KeyboardInterrupt:
        console.print(f"interrupted; continue with: agent-k resume {mission_id}")
        raise typer.Exit(130) from None
    finally:
        evaluator.close()
    try:
        page = write_report(store, mission_id, report_path(settings.missions_dir, mission_id))
    except OSError as exc:  # the mission's outcome stands without its report
        page = None
        console.print(f"the report could not be written: {exc.strerror or exc}", markup=False)
    finally:
        store.close()
    data = report(result, competition)
    console.print(summary_table(data))
    if page is not None:
        console.print(f"report: {page}", highlight=False)
    if result.status == MissionStatus.awaiting_approval:
        console.print(f"awaiting approval: agent-k approve {mission_id}  (or: agent-k reject {mission_id})")
    succeeded = result.status in (MissionStatus.succeeded, MissionStatus.awaiting_approval)
    if deliver is not None and result.submission_path is not None:
        try:
            console.print(deliver(result), markup=False, highlight=False)
        except (ValueError, OSError) as exc:
            console.print(f"the submission could not be written: {' '.join(str(exc).split())}", markup=False)
            succeeded = False
    if as_json:
        sys.stdout.write(json.dumps(data) + "\n")
    raise typer.Exit(0 if succeeded else EXIT_FAILED)


def _help(option: str) -> str:
    """An option's description as its help, its `[default: …]` shown as written (not read as rich markup)."""
    return escape(OPTION_HELP[option])


def run(
    competition: Annotated[str | None, typer.Option("--competition", "-c", help="competition id")] = None,
    time_budget: Annotated[
        float | None,
        typer.Option(help=escape("seconds for the whole mission [default: AGENT_K_TIME_BUDGET]")),
    ] = None,
    mode: Annotated[Mode, typer.Option(help=_help("mode"))] = Mode.auto,
    model: Annotated[str | None, typer.Option(help=_help("model"))] = None,
    max_cost: Annotated[float | None, typer.Option(min=0.0, help=_help("max_cost_usd"))] = None,
    platform: Annotated[
        str | None, typer.Option(help="competition platform [default: local]", callback=known_platform)
    ] = None,
    mission_id: Annotated[str | None, typer.Option(help="choose the mission id (default: generated)")] = None,
    keep_columns: Annotated[
        list[str] | None, typer.Option("--keep-columns", help=_help("keep_columns") + " (one per option)")
    ] = None,
    task: Annotated[TaskType | None, typer.Option(help="without --competition: wanted task")] = None,
    metric: Annotated[
        str | None,
        typer.Option(help="without --competition: wanted metric; with --data: how it is scored", callback=known_metric),
    ] = None,
    max_rows: Annotated[int | None, typer.Option(min=1, help="without --competition: largest dataset")] = None,
    keyword: Annotated[list[str] | None, typer.Option(help="without --competition: rank by these words")] = None,
    executor: ExecutorOption = None,
    require_approval: Annotated[bool, typer.Option(help=_help("require_approval"))] = False,
    allow_unsandboxed_code: Annotated[bool, typer.Option(help=_help("allow_unsandboxed_code"))] = False,
    stop_early: Annotated[bool, typer.Option(help=_help("stop_early"))] = False,
    webhook_url: Annotated[str | None, typer.Option(help=_help("webhook_url"))] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            help="instead of --competition: a competition's folder, as an agent is handed it (docs/mlebench.md)"
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="write the mission's submission here, laid out as the folder's sample")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Run a mission: Discovery, Research, Prototype, Evolution, Submission."""
    from agent_k.mission.launch import LaunchError, MissionRequest, launch_spec
    from agent_k.platforms.folders import folder_competition
    from agent_k.platforms.targets import CompetitionInputError

    settings = load_settings()
    entered, started = None, time.monotonic()
    try:
        if data is not None:
            if competition is not None or platform is not None:
                raise CompetitionInputError("--data is the competition: leave out --competition and --platform")
            entered = folder_competition(settings, data, metric)
            competition, platform, metric = entered.competition_id, entered.platform, None
    except CompetitionInputError as exc:
        fail_input(str(exc))
    try:
        request = MissionRequest.checked(
            competition=competition,
            task=task,
            metric=metric,
            max_rows=max_rows,
            keywords=keyword or [],
            mode=mode,
            model=model,
            **({"platform": platform} if platform else {}),
            time_budget=time_budget,
            keep_columns=keep_columns or [],
            require_approval=require_approval,
            max_cost_usd=max_cost,
            allow_unsandboxed_code=allow_unsandboxed_code,
            stop_early=stop_early,
            webhook_url=webhook_url,
            mission_id=mission_id,
        )
        spec = asyncio.run(launch_spec(request, settings))
        if entered is not None:  # the budget bounds the whole run, entering the folder included
            spec = spec.model_copy(update={"time_budget": _left(spec.time_budget, time.monotonic() - started)})
    except LaunchError as exc:
        fail_input(str(exc))
    drive(
        spec.mission_id,
        settings=settings,
        as_json=as_json,
        executor=executor,
        prepare=lambda runner: runner.create(spec),
        competition=spec.criteria.competition,
        deliver=None if out is None else partial(_deliver, entered, out),
    )


def _left(budget: float, spent: float) -> float:
    from agent_k.config import MIN_TIME_BUDGET_S
    from agent_k.mission.launch import LaunchError

    if budget - spent < MIN_TIME_BUDGET_S:
        raise LaunchError(f"entering the folder took {spent:.0f} s of the {budget:g} s budget")
    return budget - spent


def _deliver(entered: FolderCompetition | None, out: Path, result: MissionResult) -> str:
    """The mission's submission at `out`, laid out as its folder's own sample where it was entered from one."""
    from agent_k.platforms.folders import write_submission

    assert result.submission_path is not None
    write_submission(Path(result.submission_path), out, entered.submission_format() if entered else None)
    return f"submission: {out}"


def resume(
    mission_id: Annotated[str, typer.Argument(help="the mission to resume")],
    executor: ExecutorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Resume a mission from its last unfinished step (after a crash or kill)."""
    drive(mission_id, settings=load_settings(), as_json=as_json, executor=executor)
