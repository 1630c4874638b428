"""Refit or fold average: does a solution's submission gain from fitting its models once more on all rows?

For each competition, the first recommended model families' starting recipes (Research's own CV and families)
are rendered once and run twice on the same folds: `--refit` (the cross-validation, then one more fit on all
rows) and `--no-refit` (the fold models' average prediction of the test rows). Both submissions are scored on
the hidden private rows. Plain subprocesses, no sandbox: these are our own templates on built-in data.

    python benchmarks/fold_average.py [--competitions penguins wine ...] [--families 4]
        [--only extra_trees random_forest]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from agent_k.ml.profiling import profile
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.render import render_solution
from agent_k.ml.search import feature_options, starting_recipe
from agent_k.platforms.local import LocalPlatform

SMALL = ["penguins", "titanic", "diamonds", "breast-cancer", "wine", "digits", "diabetes"]


def run(script: Path, data: Path, out: Path, refit: bool) -> float:
    started = time.monotonic()
    flag = "--refit" if refit else "--no-refit"
    command = [
        sys.executable,
        str(script),
        "--data",
        str(data),
        "--out",
        str(out),
        "--oof",
        str(out.with_suffix(".oof")),
        flag,
    ]
    subprocess.run(command, check=True, capture_output=True, cwd=out.parent)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--competitions", nargs="*", default=SMALL)
    parser.add_argument("--families", type=int, default=4, help="how many of Research's families to try")
    parser.add_argument("--only", nargs="*", choices=[f.value for f in ModelFamily], help="these families instead")
    parser.add_argument("--home", type=Path, help="competitions folder to reuse (default: a temp dir)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        platform = LocalPlatform(args.home or Path(tmp) / "competitions")
        for competition in args.competitions:
            spec = platform.ensure(competition)
            public = platform.root / competition / "public"
            train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
            findings = profile(spec, train, test)
            options = feature_options(findings, spec, ())
            for family in args.only or findings.model_families[: args.families]:
                recipe = starting_recipe(ModelFamily(family), options, tuple(findings.id_like))
                folder = Path(tmp) / competition / family
                folder.mkdir(parents=True)
                script = folder / "solution.py"
                script.write_text(render_solution(recipe, spec, findings.cv))
                row: dict[str, object] = {"competition": competition, "family": family, "metric": spec.metric}
                for refit in (True, False):
                    name = "refit" if refit else "average"
                    out = folder / f"{name}.csv"
                    row[f"{name}_s"] = round(run(script, public, out, refit), 2)
                    row[name] = platform.score_file(spec, out)[1]
                average, refit = float(row["average"]), float(row["refit"])  # type: ignore[arg-type]
                better = average > refit if spec.maximize else average < refit
                row["verdict"] = "tie" if average == refit else "average" if better else "refit"
                rows.append(row)
                print(json.dumps(row), flush=True)
    wins = {v: sum(r["verdict"] == v for r in rows) for v in ("average", "refit", "tie")}
    print(f"\nprivate score, fold average vs refit: {wins}")
    saved = sum(float(r["refit_s"]) - float(r["average_s"]) for r in rows) / max(
        1, sum(float(r["refit_s"]) for r in rows)
    )
    print(f"time saved by not refitting: {saved:.1%}")


if __name__ == "__main__":
    main()
