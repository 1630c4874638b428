"""`agent-k missions list|show`."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agent_k.cli.common import fail_input, load_settings, open_store

app = typer.Typer(help="Inspect missions.", no_args_is_help=True)


@app.command("list")
def list_missions(
    status: Annotated[str | None, typer.Option(help="only missions with this status")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
) -> None:
    """List missions, newest first."""
    store = open_store(load_settings())
    table = Table("id", "competition", "status", "mode", "budget", "created", "forked from")
    for row in store.list_missions(status=status, limit=limit):
        table.add_row(
            row.id,
            row.competition or "-",
            row.status,
            row.mode,
            f"{row.budget_s:.0f}s",
            row.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            row.parent_id or "-",
        )
    Console().print(table)


def _document(mission_id: str) -> dict[str, Any]:
    from agent_k.mission.document import mission_document

    document = mission_document(open_store(load_settings()), mission_id)
    if document is None:
        fail_input(f"no mission '{mission_id}'")
    return document


@app.command("show")
def show(
    mission_id: Annotated[str, typer.Argument()],
    as_json: Annotated[bool, typer.Option("--json", help="the full document as JSON")] = False,
) -> None:
    """Show one mission: status, phase history and result."""
    document = _document(mission_id)
    if as_json:
        typer.echo(json.dumps(document, indent=2, default=str))
        return
    console = Console()
    console.print(f"[bold]{document['id']}[/] {document['competition'] or ''} — {document['status']}")
    history = Table("phase", "mode", "started", "ended", "outcome", "reason", title="phase history")
    for record in document["phase_history"]:
        history.add_row(
            *(str(record.get(k) or "-") for k in ("phase", "mode", "started", "ended", "outcome", "reason"))
        )
    console.print(history)
    if document["parent_id"] or document["children"]:
        parent = f"forked from {document['parent_id']} at its step {document['forked_from_seq']}"
        forks = f"forks: {', '.join(document['children'])}"
        lineage = [parent] * bool(document["parent_id"]) + [forks] * bool(document["children"])
        console.print("; ".join(lineage), highlight=False)
    settings = load_settings()
    page = settings.missions_dir / document["id"] / "report.html"
    console.print(f"report: {page}" if page.is_file() else f"report: agent-k report {document['id']}", highlight=False)
    if document["result"]:
        result = Table(show_header=False, title="result")
        for key, value in document["result"].items():
            result.add_row(key, json.dumps(value) if isinstance(value, list | dict) else str(value))
        console.print(result)
