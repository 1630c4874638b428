"""`agent-k report ID [-o FILE]`: the mission page as one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agent_k.cli.common import fail_input, load_settings, open_store


def report(
    mission_id: Annotated[str, typer.Argument(help="the mission")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help=escape("where to write it [default: the mission's folder]"))
    ] = None,
) -> None:
    """Write the mission page as one HTML file (data and scripts inlined): it opens offline, from disk."""
    from agent_k.dashboard.report import UnknownMission, report_path, write_report

    settings = load_settings()
    store = open_store(settings)
    target = output or report_path(settings.missions_dir, mission_id)
    try:
        written = write_report(store, mission_id, target)
    except UnknownMission as exc:
        fail_input(str(exc))
    except OSError as exc:
        fail_input(f"cannot write {target}: {exc.strerror or exc}")
    finally:
        store.close()
    typer.echo(str(written))
