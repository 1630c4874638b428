"""`agent-k cancel|approve|reject ID`: the same operations as the API's, straight on the store."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from agent_k.cli.common import fail_input, load_settings, open_store

if TYPE_CHECKING:
    from agent_k.store.repository import Store

MissionArgument = Annotated[str, typer.Argument(help="the mission id")]


def _apply(operation: Callable[[Store, str], str], mission_id: str) -> str:
    from agent_k.mission.control import MissionError

    store = open_store(load_settings())
    try:
        return operation(store, mission_id)
    except MissionError as exc:
        fail_input(str(exc))
    finally:
        store.close()


def cancel(mission_id: MissionArgument) -> None:
    """Cancel a mission: at once if no worker runs it, else its worker stops it within seconds."""
    from agent_k.mission.control import cancel as cancel_mission

    status = _apply(cancel_mission, mission_id)
    typer.echo(f"{mission_id}: {'cancelled' if status == 'cancelled' else 'cancel requested; its worker stops it'}")


def approve(mission_id: MissionArgument) -> None:
    """Approve a mission waiting before Submission; a worker (or `agent-k resume ID`) continues it."""
    from agent_k.mission.control import approve as approve_mission

    _apply(approve_mission, mission_id)
    typer.echo(f"{mission_id}: approved and queued; `agent-k worker` or `agent-k resume {mission_id}` continues it")


def reject(mission_id: MissionArgument) -> None:
    """Reject a mission waiting before Submission: it ends without submitting."""
    from agent_k.mission.control import reject as reject_mission

    _apply(reject_mission, mission_id)
    typer.echo(f"{mission_id}: rejected; nothing was submitted")
