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
