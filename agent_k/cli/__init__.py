"""The `agent-k` command line (DESIGN §7). Importing it loads typer and rich only."""

from __future__ import annotations

import typer

from agent_k.cli import admin, competitions, control, missions, run, serve, worker

app = typer.Typer(
    name="agent-k",
    help="AGENT-K: autonomous missions through ML competitions.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("run")(run.run)
app.command("resume")(run.resume)
app.command("cancel")(control.cancel)
app.command("approve")(control.approve)
app.command("reject")(control.reject)
app.command("graph")(admin.graph)
app.command("serve")(serve.serve)
app.command("worker")(worker.worker)
app.add_typer(missions.app, name="missions")
app.add_typer(competitions.app, name="competitions")
app.add_typer(admin.db_app, name="db")


def main() -> None:
    app()
