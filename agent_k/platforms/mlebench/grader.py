"""A competition's own grader (`grader.grade_fn` in its `config.yaml`: its `grade.py`), run where an MLE-bench
checkout is installed: in a subprocess of an interpreter that imports `mlebench` (`AGENT_K_MLEBENCH_PYTHON`, else
this one with the checkout on its path), the submission and the answers read as MLE-bench's `grade_csv` reads
them. Its score is the one MLE-bench reports, to 5 decimals; a submission its grader refuses
(`InvalidSubmissionError`, or any error, as MLE-bench's `Grader` treats one) has none. Where `mlebench` cannot be
imported, there is no grade here and AGENT-K's declaration of the metric grades instead (docs/mlebench.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

GRADE_TIMEOUT_S = 600.0
"""MLE-bench's graders read the whole answers once: a minute for the largest, ten to be safe."""
GRADER_NAME = "its grade.py"

_SCRIPT = """
import importlib, json, sys
try:
    import pandas as pd
    from mlebench.grade_helpers import InvalidSubmissionError
    module, name = sys.argv[1].split(":")
    grade = getattr(importlib.import_module(module), name)
except ImportError as exc:
    print(json.dumps({"missing": str(exc)[:300]}))
    raise SystemExit(0)
read = dict(float_precision="round_trip")  # mlebench.utils.read_csv
try:
    score = grade(pd.read_csv(sys.argv[2], **read), pd.read_csv(sys.argv[3], **read))
except InvalidSubmissionError as exc:
    print(json.dumps({"invalid": str(exc)[:300]}))
except Exception as exc:  # MLE-bench's Grader: any error is no score
    print(json.dumps({"invalid": f"{type(exc).__name__}: {str(exc)[:300]}"}))
else:
    print(json.dumps({"score": round(float(score), 5)}))
"""


@dataclass(frozen=True)
class Grade:
    score: float | None
    """None: the grader refused the submission."""
    reason: str | None = None


def grade_with_checkout(
    grade_fn: str, submission: Path, answers: Path, repo: Path, python: Path | None = None
) -> Grade | None:
    """The competition's own grade of `submission`; None where no interpreter imports `mlebench` and its grader
    (the answers not a CSV, or the checkout not installed)."""
    if not grade_fn or answers.suffix.lower() != ".csv":
        return None
    path = os.pathsep.join(p for p in (str(repo), os.environ.get("PYTHONPATH", "")) if p)
    try:
        ran = subprocess.run(
            [str(python or sys.executable), "-c", _SCRIPT, grade_fn, str(submission), str(answers)],
            env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, timeout=GRADE_TIMEOUT_S,
            check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = ran.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if ran.returncode == 0 and lines else {}
    except json.JSONDecodeError:
        return None
    if "score" in result:
        return Grade(float(result["score"]))
    if "invalid" in result:
        return Grade(None, str(result["invalid"]))
    return None
