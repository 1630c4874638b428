"""The `agent-k` command line (docs/cli.md). Importing it loads typer and rich only."""

from __future__ import annotations

import os
import sys

import typer

from agent_k.cli import admin, competitions, control, gc, lineage, missions, report, run, serve, worker
from agent_k.cli.common import print_error

app = typer.Typer(
    name="agent-k",
    help="AGENT-K: autonomous missions through ML competitions.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("run")(run.run)
app.command("resume")(run.resume)
app.command("fork")(lineage.fork)
app.command("replay")(lineage.replay)
app.command("cancel")(control.cancel)
app.command("approve")(control.approve)
app.command("reject")(control.reject)
app.command("gc")(gc.gc)
app.command("graph")(admin.graph)
app.command("report")(report.report)
app.command("serve")(serve.serve)
app.command("worker")(worker.worker)
app.add_typer(missions.app, name="missions")
app.add_typer(competitions.app, name="competitions")
app.add_typer(admin.db_app, name="db")


def main() -> None:
    """The console script. A usage error (an unknown option, a value out of range) is one line on stderr and
    exit code 2, like every input error of ours; `--help` and a bare group still print their help."""
    from typer._click.exceptions import ClickException, NoArgsIsHelpError

    from agent_k.config import FILE_UMASK, OPENMP_SPIN

    os.umask(FILE_UMASK)
    for name, value in OPENMP_SPIN.items():
        os.environ.setdefault(name, value)
    try:
        code = app(standalone_mode=False)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        sys.exit(130)
    except NoArgsIsHelpError as exc:
        sys.stdout.write(exc.format_message() + "\n")
        sys.exit(exc.exit_code)
    except ClickException as exc:
        print_error(" ".join(exc.format_message().split()))
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
