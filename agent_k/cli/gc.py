"""`agent-k gc`: collect finished missions' files and intermediate snapshots under the retention policy."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_k.cli.common import load_settings, open_store


def gc(
    keep_best: Annotated[
        int | None,
        typer.Option(
            min=0, help=escape("candidates whose files each mission keeps [default: AGENT_K_RETENTION, else 3]")
        ),
    ] = None,
    older_than: Annotated[
        float | None, typer.Option(min=0, help=escape("days since a mission ended before it is collected [default: 7]"))
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="say what would be removed, remove nothing")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object per mission, then the totals")] = False,
) -> None:
    """Remove what finished missions no longer need: other candidates' folders, downloads, intermediate snapshots."""
    from agent_k.config import RetentionPolicy
    from agent_k.mission.retention import collect

    settings = load_settings()
    policy = settings.retention or RetentionPolicy()
    if keep_best is not None or older_than is not None:
        policy = policy.model_copy(
            update={k: v for k, v in {"best": keep_best, "days": older_than}.items() if v is not None}
        )
    store = open_store(settings)
    try:
        collected = collect(store, settings, policy, dry_run=dry_run)
    finally:
        store.close()
    before, freed = sum(c.bytes_before for c in collected), sum(c.bytes_freed for c in collected)
    totals = {"missions": len(collected), "bytes_before": before, "bytes_freed": freed, "dry_run": dry_run}
    if as_json:
        for item in collected:
            typer.echo(json.dumps(asdict(item)))
        typer.echo(json.dumps(totals))
        return
    table = Table("mission", "size", "freed", "candidates removed", "snapshots removed")
    for c in collected:
        removed = f"{c.candidates_removed} of {c.candidates}"
        table.add_row(c.mission_id, _size(c.bytes_before), _size(c.bytes_freed), removed, str(c.snapshots_removed))
    console = Console()
    if collected:
        console.print(table)
    share = f" ({freed / before:.0%})" if before else ""
    verb = "would free" if dry_run else "freed"
    console.print(f"{len(collected)} missions collected; {verb} {_size(freed)} of {_size(before)}{share}")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}"
