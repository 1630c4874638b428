"""The local platform (docs/architecture.md, "Local platform"): Kaggle-style files, hidden labels, scoring, leaderboard,
validation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.competition import InvalidSubmission, metric_named
from agent_k.platforms.base import LeaderboardEntry, Submission, SubmissionStatus
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.encoding import MAX_ONE_HOT_LEVELS, make_preprocessor
from agent_k.platforms.local.materialise import prepare
from agent_k.platforms.local.references import KNN_TRAIN_ROWS, PRACTITIONER, reference_entries
from agent_k.platforms.ranking import medal_positions, medal_thresholds, standing, submission_standing
from tests.conftest import run_cli


@pytest.fixture
def platform(home: Path) -> LocalPlatform:
    return LocalPlatform(home / "competitions")


def perfect_submission(platform: LocalPlatform, competition: str, path: Path) -> Path:
    """What a perfect model would submit, built from the hidden labels (test-only knowledge)."""
    spec = platform.ensure(competition)
    solution = pd.read_csv(platform.root / competition / "private" / "solution.csv")
    solution[[spec.id_column, spec.target]].to_csv(path, index=False)
    return path


def test_public_files_never_contain_the_hidden_labels(platform: LocalPlatform) -> None:
    spec = platform.ensure("penguins")
    public = platform.root / "penguins" / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    solution = pd.read_csv(platform.root / "penguins" / "private" / "solution.csv")
    assert spec.target in train.columns and spec.target not in test.columns
    assert set(train["id"]).isdisjoint(test["id"])
    assert set(solution["id"]) == set(test["id"])
    assert set(solution["Usage"]) == {"Public", "Private"}
    assert len(train) + len(test) == 344
    sample = pd.read_csv(public / "sample_submission.csv")
    assert list(sample.columns) == ["id", "species"] and len(sample) == len(test)


def test_a_perfect_submission_scores_perfectly_and_ranks_first(platform: LocalPlatform, tmp_path: Path) -> None:
    file = perfect_submission(platform, "penguins", tmp_path / "perfect.csv")
    submission = asyncio.run(platform.submit("penguins", file, "perfect", "key-1"))
    assert submission.public_score == 1.0 and submission.private_score == 1.0
    board = asyncio.run(platform.leaderboard("penguins"))
    others = [e.private_score for e in board if e.reference]
    assert len(others) >= 10 and all(s is not None for s in others)
    assert standing(1.0, [s for s in others if s is not None], metric_named("auc")).rank == 1


def test_submit_is_idempotent_per_key(platform: LocalPlatform, tmp_path: Path) -> None:
    file = perfect_submission(platform, "penguins", tmp_path / "perfect.csv")
    first = asyncio.run(platform.submit("penguins", file, "once", "same-key"))
    again = asyncio.run(platform.submit("penguins", file, "twice", "same-key"))
    assert first.id == again.id
    assert len(asyncio.run(platform.list_submissions("penguins"))) == 1


def test_regression_scores_are_real_rmse(platform: LocalPlatform, tmp_path: Path) -> None:
    spec = platform.ensure("diabetes")
    solution = pd.read_csv(platform.root / "diabetes" / "private" / "solution.csv")
    shifted = solution[["id", "target"]].assign(target=solution["target"] + 10.0)
    shifted.to_csv(tmp_path / "shifted.csv", index=False)
    submission = asyncio.run(platform.submit("diabetes", tmp_path / "shifted.csv", "", "k"))
    assert submission.public_score == pytest.approx(10.0) and submission.private_score == pytest.approx(10.0)
    assert not spec.maximize


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda f: f.rename(columns={"species": "label"}), "columns must be"),
        (lambda f: f.iloc[1:], "expected 86 rows"),
        (lambda f: f.assign(id=f["id"].where(f.index != 0, f["id"].iloc[1])), "duplicate ids"),
        (lambda f: f.assign(species=f["species"].where(f.index != 3, None)), "missing values"),
        (lambda f: f.assign(species="Dodo"), "unknown class labels"),
    ],
)
def test_invalid_submissions_are_rejected(platform: LocalPlatform, tmp_path: Path, mutate, message: str) -> None:
    good = pd.read_csv(perfect_submission(platform, "penguins", tmp_path / "good.csv"))
    mutate(good).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InvalidSubmission, match=message):
        asyncio.run(platform.submit("penguins", tmp_path / "bad.csv", "", "bad"))
    assert asyncio.run(platform.list_submissions("penguins")) == []


def test_non_finite_probabilities_are_rejected(platform: LocalPlatform, tmp_path: Path) -> None:
    sample = pd.read_csv(platform.root / "titanic" / "public" / "sample_submission.csv")
    sample.loc[0, "survived"] = np.inf
    sample.to_csv(tmp_path / "inf.csv", index=False)
    with pytest.raises(InvalidSubmission, match="non-finite"):
        asyncio.run(platform.submit("titanic", tmp_path / "inf.csv", "", "inf"))


def test_medal_positions_follow_the_kaggle_thresholds() -> None:
    assert medal_positions(14) == (1, 2, 5)
    assert medal_positions(150) == (10, 30, 60)
    assert medal_positions(500) == (11, 50, 100)
    assert medal_positions(2000) == (14, 100, 200)


def test_standing_ranks_percentile_and_medal() -> None:
    others = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]
    assert standing(0.95, others, metric_named("auc")).model_dump() == {
        "rank": 1,
        "teams": 11,
        "percentile": 100.0,
        "medal": "gold",
    }
    assert standing(0.75, others, metric_named("auc")).medal == "bronze"  # third place of eleven: top 40%
    assert standing(0.05, others, metric_named("auc")).medal is None
    assert standing(0.05, [1.0, 2.0], metric_named("rmse")).rank == 1  # lower is better


def test_every_reference_team_trains_on_every_training_row(tmp_path: Path) -> None:
    """More rows than the old boards' 20,000-row cap: each team learns from all of them (k-NN from a sample its
    name gives), and a team's score is the one a model fitted on the whole training table gets."""
    from sklearn.metrics import mean_squared_error
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(3)
    table = pd.DataFrame(rng.normal(size=(28_000, 3)), columns=["a", "b", "c"])
    table["y"] = 3 * table["a"] - 2 * table["b"] ** 2 + rng.normal(scale=0.5, size=len(table))
    prepared = prepare("wide", "Wide", table, target="y", metric="rmse")
    board = {e["team"]: e for e in reference_entries(prepared)}
    n_train = len(prepared.train)
    assert n_train > 20_000
    for team, entry in board.items():
        expected = KNN_TRAIN_ROWS if "knn" in team else n_train
        assert entry["train_rows"] == expected, team
        assert float(str(entry["build_s"])) >= 0
    assert {t for t in board if "knn" in t} == {f"reference/knn-{k}-sample-{KNN_TRAIN_ROWS}" for k in (1, 15)}

    features = ["a", "b", "c"]
    tree = DecisionTreeRegressor(random_state=0).fit(prepared.train[features], prepared.train["y"])
    assert prepared.solution is not None
    truth = prepared.solution.set_index("id").loc[prepared.test["id"]]
    private = (truth["Usage"] == "Private").to_numpy()
    predicted = tree.predict(prepared.test[features])[private]
    rmse = mean_squared_error(truth["y"].to_numpy()[private], predicted) ** 0.5
    assert board["reference/tree-full"]["private_score"] == pytest.approx(rmse)
    boosting, ridge = (float(str(board[f"reference/{t}"]["private_score"])) for t in (PRACTITIONER, "ridge"))
    assert boosting < 0.7 * ridge, "the practitioner's entry learns the square a linear model cannot"


def test_the_practitioners_boosting_answers_one_column_per_class_it_was_trained_on() -> None:
    """A multi-label column can be constant in training: LightGBM then still answers two columns, and the entry
    must give the one class every row, as a probability table of its own classes."""
    from agent_k.platforms.local.practitioner import EarlyStoppedBoosting

    x = np.random.default_rng(0).normal(size=(60, 3))
    for labels in (np.zeros(60, dtype=int), np.arange(60) % 3):
        model = EarlyStoppedBoosting(regression=False).fit(x, labels)
        proba = model.predict_proba(x[:5])
        assert proba.shape == (5, len(np.unique(labels))) and np.allclose(proba.sum(axis=1), 1.0)


def test_medal_thresholds_name_each_place_score_and_team() -> None:
    board = [LeaderboardEntry(team=f"t{i}", public_score=None, private_score=i / 20) for i in range(20)]
    thresholds = medal_thresholds(board, metric_named("auc"))
    assert [(t.medal, t.place, t.score, t.team) for t in thresholds] == [
        ("gold", 2, 0.9, "t18"),
        ("silver", 4, 0.8, "t16"),
        ("bronze", 8, 0.6, "t12"),
    ]
    assert (
        standing(0.9, [e.private_score for e in board if e.private_score is not None], metric_named("auc")).medal
        == "gold"
    )
    assert standing(0.89, [0.9, 0.95], metric_named("auc")).medal is None


def test_a_submission_is_ranked_on_its_own_score_not_its_teams_best() -> None:
    references = [LeaderboardEntry(team=f"reference/{i}", public_score=i / 10, private_score=i / 10) for i in range(10)]
    ours_best = LeaderboardEntry(team="agent-k", public_score=1.0, private_score=1.0, reference=False)
    worse = Submission(id="s2", competition_id="c", created_at="2026-12-01T00:00:00Z",
                       status=SubmissionStatus.complete, public_score=0.45, private_score=0.35)  # fmt: skip
    place = submission_standing([*references, ours_best], "agent-k", worse, metric_named("auc"))
    assert place is not None and place.model_dump() == {"rank": 7, "teams": 11, "percentile": 40.0, "medal": None}
    pending = worse.model_copy(update={"private_score": None})
    public = submission_standing([*references, ours_best], "agent-k", pending, metric_named("auc"))
    assert public is not None and public.rank == 6  # no private score of ours: public among public
    unscored = pending.model_copy(update={"public_score": None})
    assert submission_standing(references, "agent-k", unscored, metric_named("auc")) is None


def test_add_with_a_missing_target_exits_2_and_writes_nothing(home: Path, tmp_path: Path) -> None:
    pd.DataFrame({"a": range(50), "b": range(50)}).to_csv(tmp_path / "train.csv", index=False)
    before = sorted(p.name for p in (home / "competitions").iterdir())
    result = run_cli(
        "competitions", "add", "mine", "--train", str(tmp_path / "train.csv"), "--target", "nope", "--metric", "auc"
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "target column 'nope'" in result.stderr
    assert sorted(p.name for p in (home / "competitions").iterdir()) == before


def test_add_splits_hidden_labels_and_scores_submissions(home: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=300), "colour": rng.choice(["red", "blue"], 300)})
    frame["y"] = (frame["x"] + rng.normal(scale=0.5, size=300) > 0).astype(int)
    frame.to_csv(tmp_path / "train.csv", index=False)
    result = run_cli(
        "competitions", "add", "coins", "--train", str(tmp_path / "train.csv"), "--target", "y", "--metric", "logloss"
    )
    assert result.returncode == 0, result.stderr
    spec = json.loads((home / "competitions" / "coins" / "public" / "competition.json").read_text())
    assert spec["task"] == "binary" and spec["has_hidden_labels"] and spec["n_test"] == 75
    shown = run_cli("competitions", "show", "coins")
    assert shown.returncode == 0 and "reference/logistic" in shown.stdout


def test_classes_that_are_whole_and_fractional_numbers_are_named_alike_by_training_and_a_submission(
    home: Path, tmp_path: Path
) -> None:
    """Years of schooling as the target (sampleSelection's Smoke: 6.0, 8.0, ..., 13.5, ... 18.0 in its CSV): a
    submission that predicts only whole years names them as the training labels do, whether written 12 or 12.0."""
    rng = np.random.default_rng(2)
    shares = [0.05, 0.1, 0.1, 0.4, 0.1, 0.1, 0.1, 0.05]
    years = rng.choice([6.0, 8.0, 10.0, 12.0, 13.5, 15.0, 16.0, 18.0], 400, p=shares)
    frame = pd.DataFrame({"age": rng.integers(17, 80, 400), "educ": years})
    frame.to_csv(tmp_path / "smoke.csv", index=False)
    arguments = ["--train", str(tmp_path / "smoke.csv"), "--target", "educ", "--metric", "accuracy"]
    added = run_cli("competitions", "add", "smoke", *arguments)
    assert added.returncode == 0, added.stderr
    spec = json.loads((home / "competitions" / "smoke" / "public" / "competition.json").read_text())
    assert spec["classes"] == ["6", "8", "10", "12", "13.5", "15", "16", "18"]
    platform = LocalPlatform(home / "competitions")
    test = pd.read_csv(home / "competitions" / "smoke" / "public" / "test.csv")
    for written in ("12", "12.0"):
        pd.DataFrame({"id": test["id"], "educ": written}).to_csv(tmp_path / "twelve.csv", index=False)
        submission = asyncio.run(platform.submit("smoke", tmp_path / "twelve.csv", "", f"twelve-{written}"))
        assert submission.public_score is not None and 0.2 < submission.public_score < 0.6, submission


def test_add_with_test_but_no_solution_has_unknown_scores(home: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    train = pd.DataFrame({"key": range(100), "x": rng.normal(size=100)})
    train["y"] = train["x"] * 2
    test = pd.DataFrame({"key": range(100, 140), "x": rng.normal(size=40)})
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    result = run_cli(
        "competitions",
        "add",
        "blind",
        "--train",
        str(tmp_path / "train.csv"),
        "--target",
        "y",
        "--metric",
        "rmse",
        "--id-column",
        "key",
        "--test",
        str(tmp_path / "test.csv"),
    )
    assert result.returncode == 0, result.stderr
    assert "scores are unknown" in result.stdout
    platform = LocalPlatform(home / "competitions")
    sample = home / "competitions" / "blind" / "public" / "sample_submission.csv"
    submission = asyncio.run(platform.submit("blind", sample, "", "k"))
    assert submission.public_score is None and submission.private_score is None


def test_add_rejects_a_solution_whose_ids_do_not_match(home: Path, tmp_path: Path) -> None:
    pd.DataFrame({"id": range(50), "x": range(50), "y": [0, 1] * 25}).to_csv(tmp_path / "train.csv", index=False)
    pd.DataFrame({"id": range(50, 60), "x": range(10)}).to_csv(tmp_path / "test.csv", index=False)
    pd.DataFrame({"id": range(70, 80), "y": [0, 1] * 5}).to_csv(tmp_path / "solution.csv", index=False)
    result = run_cli(
        "competitions",
        "add",
        "mismatch",
        "--train",
        str(tmp_path / "train.csv"),
        "--target",
        "y",
        "--metric",
        "accuracy",
        "--id-column",
        "id",
        "--test",
        str(tmp_path / "test.csv"),
        "--solution",
        str(tmp_path / "solution.csv"),
    )
    assert result.returncode == 2 and "solution ids do not match" in result.stderr
    assert not (home / "competitions" / "mismatch").exists()


def test_reference_models_one_hot_an_id_like_column_into_a_bounded_width() -> None:
    """A 1,000-level column would be 1,000 dense columns for every linear, naive-Bayes and k-NN reference;
    the frequent levels stay apart up to the cap, the rest share one column."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "x": rng.normal(size=20_000),
            "user": [f"u{i}" for i in rng.integers(0, 1_000, 20_000)],
            "colour": rng.choice(["red", "green", "blue"], 20_000),
        }
    )
    width = make_preprocessor(frame, scale=True, one_hot=True).fit_transform(frame).shape[1]
    assert width == 1 + MAX_ONE_HOT_LEVELS + 3


def test_a_built_in_board_older_references_built_is_rebuilt_and_its_submissions_stay(
    platform: LocalPlatform, tmp_path: Path
) -> None:
    """A home from before boards trained on every row holds a bare list of 13 teams; its first use rebuilds it."""
    file = perfect_submission(platform, "penguins", tmp_path / "perfect.csv")
    submitted = asyncio.run(platform.submit("penguins", file, "before", "key-old"))
    path = platform.root / "penguins" / "private" / "leaderboard.json"
    current = json.loads(path.read_text())
    old = [{k: v for k, v in team.items() if k in ("team", "public_score", "private_score")}
           for team in current["teams"] if "lightgbm" not in team["team"]]  # fmt: skip
    path.write_text(json.dumps(old))
    board = asyncio.run(platform.leaderboard("penguins"))
    rebuilt = json.loads(path.read_text())
    assert rebuilt["version"] == current["version"] and all(t["build_s"] >= 0 for t in rebuilt["teams"])

    def scores(teams: list[dict[str, object]]) -> dict[object, tuple[object, ...]]:
        return {t["team"]: (t["train_rows"], t["public_score"], t["private_score"]) for t in teams}

    assert scores(rebuilt["teams"]) == scores(current["teams"]), "the teams of a fresh build, as they scored there"
    assert {e.team for e in board if e.reference} == {t["team"] for t in current["teams"]}
    assert [s.id for s in asyncio.run(platform.list_submissions("penguins"))] == [submitted.id]
