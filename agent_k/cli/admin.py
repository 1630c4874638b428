"""`agent-k graph` and `agent-k db upgrade`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agent_k.cli.common import fail_input, load_settings

db_app = typer.Typer(help="Database maintenance.", no_args_is_help=True)


def graph(
    contract: Annotated[
        Path | None,
        typer.Option(help="analyse this contract (JSON, as agent_k.mission.contract.PhaseContract) instead"),
    ] = None,
) -> None:
    """Print the mission graph as a Mermaid diagram, its phase contract, and the contract's analysis."""
    from pydantic import ValidationError

    from agent_k.mission.contract import MISSION_CONTRACT, PhaseContract
    from agent_k.mission.graph import build_graph, validate
    from agent_k.mission.nodes import PHASE_NODES

    chosen = MISSION_CONTRACT
    if contract is not None:
        try:
            chosen = PhaseContract.model_validate_json(contract.read_bytes())
        except (OSError, ValidationError) as exc:
            fail_input(f"cannot read the contract {contract}: {str(exc).splitlines()[0]}")
    validation = validate(PHASE_NODES, chosen)
    if validation.ok:
        typer.echo(build_graph(PHASE_NODES, chosen).render(title="AGENT-K mission"))
    for phase in chosen.phases:
        tools = ", ".join(t.name for t in chosen.tools_of(phase.name) if t.phases) or "-"
        who = f"agent {phase.agent}" if phase.agent else "workflow"
        typer.echo(
            f"phase {phase.name}: -> {' | '.join(phase.next)}; ends by {phase.deadline:.0%} of the budget; "
            f"{who}; on error: {phase.strategy.value}; tools: {tools}"
        )
    for line in validation.analysis.suppressed_lines():
        typer.echo(line)
    if validation.ok:
        entry = chosen.initial
        typer.echo(f"valid: {len(validation.nodes)} phases, entry {entry}, all reachable, all reach the end")
        return
    for problem in validation.problems:
        typer.echo(f"invalid: {problem}", err=True)
    raise typer.Exit(1)


@db_app.command("upgrade")
def upgrade() -> None:
    """Apply the database migrations (AGENT_K_DATABASE_URL, or SQLite under AGENT_K_HOME)."""
    from sqlalchemy.exc import SQLAlchemyError

    from agent_k.store.engine import current_revision, make_engine
    from agent_k.store.engine import upgrade as run_upgrade

    settings = load_settings()
    try:
        engine = make_engine(settings.resolved_database_url)
        run_upgrade(engine)
        revision = current_revision(engine)
    except (SQLAlchemyError, OSError) as exc:
        fail_input(f"cannot upgrade the database: {str(exc).splitlines()[0]}")
    Console().print(f"database at revision {revision}")
