"""`agent-k fork` and `agent-k replay`: a new mission from another's snapshot, and a finished one step by step."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_k.cli.common import err_console, fail_input, load_settings, open_store
from agent_k.cli.run import ExecutorOption, JsonOption, drive
from agent_k.mission.option_help import OPTION_HELP
from agent_k.mission.phases import Phase


def fork(
    mission_id: Annotated[str, typer.Argument(help="the mission to fork")],
    from_phase: Annotated[Phase, typer.Option("--from", help="the phase the fork starts at")],
    time_budget: Annotated[
        float | None,
        typer.Option(help=escape("seconds for the whole fork, spent ones included [default: the parent's]")),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help=f"change an option: {', '.join(OPTION_HELP)} (keep_columns comma-separated); KEY=none clears it",
        ),
    ] = None,
    new_id: Annotated[str | None, typer.Option("--mission-id", help="the fork's id (default: generated)")] = None,
    queue: Annotated[bool, typer.Option(help="leave the fork for a worker instead of running it here")] = False,
    executor: ExecutorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Fork a mission at a phase: a new mission from its snapshot there, reusing its findings and candidates."""
    from agent_k.mission.control import MissionError
    from agent_k.mission.fork import ForkChanges, fork_mission
    from agent_k.mission.launch import new_mission_id
    from agent_k.store.repository import MissionExists

    settings = load_settings()
    fork_id = new_id or new_mission_id()
    try:
        changes = ForkChanges.parse(set_ or [])
    except MissionError as exc:
        fail_input(str(exc))

    def make(owner: str | None) -> None:
        store = open_store(settings)
        try:
            fork_mission(
                store,
                settings,
                mission_id,
                from_phase,
                time_budget=time_budget,
                changes=changes,
                mission_id=fork_id,
                claimed_by=owner,
            )
            (forked,) = store.events_after(fork_id, 0, 1)
        except (MissionError, MissionExists) as exc:
            fail_input(str(exc))
        finally:
            store.close()
        d = json.loads(forked.payload)
        reused = f"{d['candidates_reused']} candidates reused"
        line = f"{fork_id}: forked from {mission_id} at {d['phase']} (its step {d['parent_seq']}), {reused}"
        err_console.print(line, highlight=False, markup=False)

    if queue:
        make(None)
        if as_json:
            typer.echo(json.dumps({"mission_id": fork_id, "status": "queued", "parent_id": mission_id}))
        else:
            typer.echo(f"{fork_id}: queued; `agent-k worker` or `agent-k resume {fork_id}` runs it")
        return
    drive(fork_id, settings=settings, as_json=as_json, executor=executor, prepare=lambda runner: make(runner.owner))


def replay(
    mission_id: Annotated[str, typer.Argument(help="the mission to replay")],
    step: Annotated[int | None, typer.Option(min=0, help="print the full state at this step (its seq)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Step through a mission's snapshots in order, with the events of each step; --step N shows one state."""
    from agent_k.mission.replay import StepNotFound, replay_steps, state_at

    store = open_store(load_settings())
    try:
        if store.get_mission(mission_id) is None:
            fail_input(f"no mission '{mission_id}'")
        if step is not None:
            try:
                typer.echo(json.dumps(state_at(store, mission_id, step), indent=2))
            except StepNotFound as exc:
                fail_input(str(exc))
            return
        steps = replay_steps(store, mission_id)
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps([s.model_dump(mode="json") for s in steps]))
        return
    console = Console()
    table = Table("step", "node", "status", "phase", "elapsed", "best CV", "candidates", "events", title=mission_id)
    for s in steps:
        table.add_row(
            str(s.seq),
            s.node,
            s.status,
            s.phase or "-",
            f"{s.elapsed_s:.1f}s",
            _score(s.best_score),
            str(s.candidates),
            _counts(s.event_types),
        )
    console.print(table)
    console.print(f"state at a step: agent-k replay {mission_id} --step N", highlight=False)


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _counts(types: dict[str, Any]) -> str:
    return ", ".join(f"{name} x{count}" if count > 1 else name for name, count in types.items()) or "-"
