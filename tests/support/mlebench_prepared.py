"""A competition as MLE-bench prepares it (openai/mle-bench): `<data>/<id>/prepared/public` (what an agent sees:
the files of `prepare.py`, and `description.md` as `run_agent.py` copies it in), `…/private/test.csv` (the
answers), and the repository's `mlebench/competitions/<id>/` with `config.yaml`, `description.md` and a
`leaderboard.csv` of Kaggle's columns (`teamId`, `submissionDate`, `score`, best first; MLE-bench drops names)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tests.support import mlebench

SPACESHIP = "spaceship-titanic"

CONFIG = """id: spaceship-titanic
name: Spaceship Titanic
competition_type: simple
awards_medals: false
prizes: null
description: mlebench/competitions/spaceship-titanic/description.md

dataset:
  answers: spaceship-titanic/prepared/private/test.csv
  sample_submission: spaceship-titanic/prepared/public/sample_submission.csv

grader:
  name: accuracy
  grade_fn: mlebench.competitions.spaceship-titanic.grade:grade

preparer: mlebench.competitions.spaceship-titanic.prepare:prepare
"""

_METRIC = (
    "Submissions are evaluated based on their [classification accuracy]"
    "(https://developers.google.com/machine-learning/crash-course/classification/accuracy), the percentage of "
    "predicted labels that are correct."
)
DESCRIPTION = f"""# Overview

## Description

Welcome to the year 2912, where your data science skills are needed to solve a cosmic mystery.

## Evaluation

### Metric

{_METRIC}

### Submission Format

The submission format for the competition is a csv file with the following format:

```
PassengerId,Transported
0013_01,False
0018_01,False
etc.
```

## Frequently Asked Questions
"""


@dataclass(frozen=True)
class Prepared:
    data: Path
    repo: Path
    public: Path
    answers: Path
    leaderboard: Path


def spaceship(root: Path, *, teams: int = 300, seed: int = 0) -> Prepared:
    """Spaceship Titanic as MLE-bench prepares it, with a board of `teams` whose scores span what a mission can
    reach on these rows (so its place is neither first nor last)."""
    rng = np.random.default_rng(seed)
    data, repo = root / "data", root / "mle-bench"
    public = data / SPACESHIP / "prepared" / "public"
    answers = data / SPACESHIP / "prepared" / "private" / "test.csv"
    mlebench.spaceship_titanic(public, rng, answers=answers)
    folder = repo / "mlebench" / "competitions" / SPACESHIP
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(CONFIG)
    (folder / "description.md").write_text(DESCRIPTION)
    shutil.copyfile(folder / "description.md", public / "description.md")
    scores = np.sort(rng.uniform(0.55, 1.0, teams).round(5))[::-1]
    board = pd.DataFrame({
        "teamId": rng.choice(10_000_000, teams, replace=False),
        "submissionDate": pd.Timestamp("2024-02-11") - pd.to_timedelta(rng.integers(0, 400, teams), unit="D"),
        "score": scores,
    })  # fmt: skip
    board.to_csv(folder / "leaderboard.csv", index=False)
    return Prepared(data, repo, public, answers, folder / "leaderboard.csv")


GRADE_HELPERS = '''class InvalidSubmissionError(Exception):
    """
    A custom exception for when the agent submission cannot be graded.
    """

    pass
'''
UTILS = """import pandas as pd

from mlebench.grade_helpers import InvalidSubmissionError


def prepare_for_accuracy_metric(
    submission: pd.DataFrame,
    answers: pd.DataFrame,
    target_column: str,
    id_column: str,
) -> dict:

    # Answers checks
    assert target_column in answers.columns, f"Answers must have a `{target_column}` column"
    assert id_column in answers.columns, f"Answers must have a `{id_column}` column"

    # Submission checks
    if len(submission) != len(answers):
        raise InvalidSubmissionError("Submission must have the same length as the answers.")
    if target_column not in submission.columns:
        raise InvalidSubmissionError(f"Submission must have a `{target_column}` column")
    if id_column not in submission.columns:
        raise InvalidSubmissionError(f"Submission must have a `{id_column}` column")

    # sort on id to ensure correct order
    submission = submission.sort_values(id_column)
    answers = answers.sort_values(id_column)

    if (submission[id_column].values != answers[id_column].values).any():
        raise InvalidSubmissionError(f"Submission and Answers `{id_column}`'s do not match")

    y_pred = submission[target_column].to_numpy()
    y_true = answers[target_column].to_numpy()

    return {"y_true": y_true, "y_pred": y_pred}
"""
GRADE = """import pandas as pd
from sklearn.metrics import accuracy_score

from mlebench.competitions.utils import prepare_for_accuracy_metric


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    accuracy_inputs = prepare_for_accuracy_metric(
        submission=submission, answers=answers, target_column="Transported", id_column="PassengerId"
    )
    return accuracy_score(**accuracy_inputs)
"""


def install_grader(repo: Path) -> None:
    """Make the checkout importable as MLE-bench's package, as far as spaceship-titanic's grader reaches:
    `grade.py`, `prepare_for_accuracy_metric` and `InvalidSubmissionError`, each as the repository writes it (its
    `mlebench/utils.py`, which needs tqdm, kaggle and the rest, stays out: the grader needs none of it)."""
    package = repo / "mlebench"
    (package / "__init__.py").write_text("")
    (package / "grade_helpers.py").write_text(GRADE_HELPERS)
    (package / "competitions" / "__init__.py").write_text("")
    (package / "competitions" / "utils.py").write_text(UTILS)
    (package / "competitions" / SPACESHIP / "grade.py").write_text(GRADE)
