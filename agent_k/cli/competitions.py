"""`agent-k competitions list|show|add`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from agent_k.cli.common import (
    EXIT_FAILED,
    err_console,
    fail_input,
    known_metric,
    known_platform,
    load_settings,
    local_platform,
)
from agent_k.competition.kinds import TestSplit

if TYPE_CHECKING:
    from agent_k.competition import Competition, Metric
    from agent_k.config import Settings
    from agent_k.platforms.base import LeaderboardEntry

app = typer.Typer(help="Browse competitions; add your own to the local platform.", no_args_is_help=True)


@app.command("list")
def list_competitions(
    platform: Annotated[str, typer.Option(help="local, or kaggle (credentials)", callback=known_platform)] = "local",
    search: Annotated[
        list[str] | None, typer.Option(help="words a remote platform searches for (the local platform lists all)")
    ] = None,
) -> None:
    """List the built-in and added competitions, or search a platform's (those AGENT-K can score)."""
    settings = load_settings()
    table = Table("id", "task", "metric", "train", "test", "daily submissions", "title")
    for c in _search(platform, settings, search or []):
        rows = (str(c.n_train or "-"), str(c.n_test or "-"))
        table.add_row(c.id, c.task.value, c.metric, *rows, str(c.max_daily_submissions or "-"), c.title)
    Console().print(table)


def _search(platform: str, settings: Settings, words: list[str]) -> list[Competition]:
    import httpx

    from agent_k.competition import Criteria
    from agent_k.platforms.base import CredentialsMissing, PlatformError
    from agent_k.platforms.factory import open_platform

    async def search() -> list[Competition]:
        async with httpx.AsyncClient(timeout=30.0) as http:
            adapter = open_platform(platform, settings, http)
            found = await adapter.list_competitions(Criteria(keywords=words) if words else None)
            for slug, reason in getattr(adapter, "skipped", {}).items():
                err_console.print(f"skipped {slug}: {reason}", highlight=False)
            return found

    try:
        return asyncio.run(search())
    except CredentialsMissing as exc:
        fail_input(str(exc))
    except PlatformError as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(EXIT_FAILED) from None


@app.command("show")
def show(competition_id: Annotated[str, typer.Argument()]) -> None:
    """Describe a competition and its leaderboard (materialising a built-in one on first use)."""
    from agent_k.platforms.base import CompetitionNotFound, CompetitionUnsupported

    platform = local_platform(load_settings())
    try:
        spec = platform.ensure(competition_id)
    except (CompetitionNotFound, CompetitionUnsupported) as exc:
        fail_input(str(exc))
    console = Console()
    console.print(f"[bold]{spec.title}[/] ({spec.id})\n{spec.description}")
    console.print(
        f"task {spec.task.value}, target '{spec.target}', metric {spec.metric} "
        f"({'higher' if spec.maximize else 'lower'} is better), {spec.n_train} train / {spec.n_test} test rows"
    )
    board = asyncio.run(platform.leaderboard(spec.id))
    ordered = spec.scored_by.ranked(board, lambda e: e.private_score)
    table = Table("#", "team", "public", "private", "built in", title="leaderboard (private score order)")
    for position, entry in enumerate(ordered, 1):
        table.add_row(
            str(position),
            entry.team + (f" ({entry.note})" if entry.note else ""),
            f"{entry.public_score:.5g}" if entry.public_score is not None else "-",
            f"{entry.private_score:.5g}" if entry.private_score is not None else "-",
            f"{entry.build_s:.1f} s" if entry.build_s is not None else "",
        )
    console.print(table)
    console.print(medal_meaning(board, spec.scored_by), markup=False, highlight=False)


def medal_meaning(board: list[LeaderboardEntry], metric: Metric) -> str:
    """What each medal takes on this board: a mission's submission is ranked against the reference teams alone."""
    from agent_k.platforms.ranking import medal_thresholds

    references = [e for e in board if e.reference]
    thresholds = medal_thresholds(references, metric)
    if not thresholds:
        return "no medals: the board has no scored reference team"
    lines = [f"a medal is a submission's own place among these {len(references)} reference teams (as MLE-bench "
             "grades one run: the team's other submissions do not count):"]  # fmt: skip
    for threshold in thresholds:
        lines.append(
            f"  {threshold.medal:<7} at least as good as place {threshold.place}, {threshold.team}: "
            f"private {threshold.score:.5g}"
        )
    best = metric.ranked(references, lambda e: e.private_score)[0]
    lines.append(f"the strongest reference: {best.team} (private {best.private_score:.5g})")
    return "\n".join(lines)


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="id for the new competition (lowercase, digits, dashes)")],
    metric: Annotated[str, typer.Option(help="how submissions are scored (docs/shapes.md)", callback=known_metric)],
    train: Annotated[Path | None, typer.Option(help="training table (CSV, TSV, JSON, JSON lines, Parquet)")] = None,
    data: Annotated[
        Path | None, typer.Option(help="instead of --train: a folder laid out as Kaggle's (docs/shapes.md)")
    ] = None,
    target: Annotated[
        list[str] | None, typer.Option(help="the column to predict; repeat it for several targets")
    ] = None,
    id_column: Annotated[str | None, typer.Option(help="row id column (default: one is added)")] = None,
    test: Annotated[Path | None, typer.Option(help="test table without the target")] = None,
    solution: Annotated[Path | None, typer.Option(help="hidden labels of the test rows: id and target")] = None,
    time_column: Annotated[str | None, typer.Option(help="the column that times the rows")] = None,
    series: Annotated[
        list[str] | None, typer.Option(help="a column that, with time, names a series (repeatable)")
    ] = None,
    group: Annotated[str | None, typer.Option(help="the column of entities folds must not split")] = None,
    top_k: Annotated[int | None, typer.Option(min=1, max=100, help="map_at_k: labels ranked per row")] = None,
    split: Annotated[
        TestSplit,
        typer.Option(
            help="hidden rows when there is no --test: random, future (the last --horizon "
            "times), group (whole entities); auto: future with --time-column, else group "
            "with --group, else random"
        ),
    ] = "auto",
    horizon: Annotated[int | None, typer.Option(min=1, help="time steps a future split hides")] = None,
) -> None:
    """Add your own competition. With no test table, hidden test rows are split off the training table."""
    import tempfile

    from agent_k.platforms.local.materialise import Hints
    from agent_k.platforms.local.user_files import from_files, from_folder, hidden_rows
    from agent_k.platforms.targets import CompetitionInputError

    platform = local_platform(load_settings())
    hints = Hints(time_column=time_column, series_keys=tuple(series or ()), group_column=group)
    platform.root.mkdir(parents=True, exist_ok=True)
    try:
        if (train is None) == (data is None):
            raise CompetitionInputError("give the training table with --train, or a competition folder with --data")
        with tempfile.TemporaryDirectory(dir=platform.root, prefix=".unzipped-") as scratch:
            if data is not None:
                if test is not None or id_column is not None:
                    raise CompetitionInputError("--data reads the test table and the id column off the folder")
                tables = from_folder(data, name, target or [], solution=solution, scratch=Path(scratch))
            else:
                assert train is not None
                tables = from_files(train, target or [], id_column=id_column, test=test, solution=solution)
            hidden = hidden_rows(split, horizon, hints, tables)
            spec = platform.add(name, tables, metric=metric, top_k=top_k, hidden=hidden, hints=hints)
    except CompetitionInputError as exc:
        fail_input(str(exc))
    scoring = "hidden labels: scored" if spec.has_hidden_labels else "no hidden labels: scores are unknown"
    Console().print(
        f"added [bold]{spec.id}[/]: {spec.task.value}, {spec.metric}{f' (k={spec.top_k})' if spec.top_k else ''}, "
        f"{spec.n_train} train / {spec.n_test} test rows ({scoring})"
    )
