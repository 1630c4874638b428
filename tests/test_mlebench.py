"""AGENT-K as an MLE-bench agent (`agent-k run --data DIR --out FILE`) and MLE-bench as a platform: a competition
prepared as MLE-bench prepares it (`tests/support/mlebench_prepared.py`), its submission graded on the answers and
placed on its Kaggle leaderboard by MLE-bench's rules, recomputed here from the files."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score

from agent_k.competition.metric_names import metric_from_name, metrics_in_description, other_family, top_k_from_name
from agent_k.platforms.base import PlatformError
from agent_k.platforms.layouts import arrange_folder
from agent_k.platforms.mlebench.adapter import MlebenchPlatform
from agent_k.platforms.mlebench.grader import grade_with_checkout
from tests.conftest import run_cli
from tests.support import mlebench
from tests.support.mlebench_prepared import SPACESHIP, install_grader, spaceship

START = Path(__file__).resolve().parent.parent / "integrations" / "mlebench" / "start.sh"


def mlebench_medal(score: float, board: pd.DataFrame) -> tuple[str | None, bool]:
    """MLE-bench's `Grader.rank_score`, written out from its source: the medal a score earns on a leaderboard (best
    first), and whether it beats the median."""
    scores = board["score"]
    lower_is_better = bool(scores.iloc[0] < scores.iloc[-1])
    teams = len(board)
    if teams < 100:
        places = (max(1, int(teams * 0.1)), max(1, int(teams * 0.2)), max(1, int(teams * 0.4)))
    elif teams < 250:
        places = (10, max(1, int(teams * 0.2)), max(1, int(teams * 0.4)))
    elif teams < 1000:
        places = (10 + int(teams * 0.002), 50, 100)
    else:
        places = (10 + int(teams * 0.002), max(1, int(teams * 0.05)), max(1, int(teams * 0.1)))

    def reaches(threshold: float) -> bool:
        return score <= threshold if lower_is_better else score >= threshold

    medal = next((m for m, p in zip(("gold", "silver", "bronze"), places, strict=True) if reaches(scores.iloc[p - 1])),
                 None)  # fmt: skip
    above_median = score < scores.median() if lower_is_better else score > scores.median()
    return medal, above_median


def test_an_mlebench_run_writes_the_samples_file_and_takes_its_place_on_the_kaggle_board(tmp_path: Path) -> None:
    """The acceptance run, through the agent definition's own `start.sh` (as MLE-bench's `run_agent.py` starts
    it, with its folders and `TIME_LIMIT_SECS`) on a competition prepared as MLE-bench prepares it. The file is the
    sample's shape; its score, recomputed from the answers as its `grade.py` does, is the mission's; its rank and
    medal are those MLE-bench's rules give on the leaderboard."""
    prepared = spaceship(tmp_path / "mle", teams=300)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "venv").symlink_to(Path(sys.executable).parent.parent)
    folders = {name: tmp_path / name for name in ("submission", "logs", "code")}
    for folder in folders.values():
        folder.mkdir()
    env = {
        "AGENT_DIR": str(agent), "SUBMISSION_DIR": str(folders["submission"]), "LOGS_DIR": str(folders["logs"]),
        "CODE_DIR": str(folders["code"]), "TIME_LIMIT_SECS": "135", "AGENT_K_DATA": str(prepared.public),
        "AGENT_K_MLEBENCH_DATA": str(prepared.data), "AGENT_K_MLEBENCH_REPO": str(prepared.repo),
    }  # fmt: skip
    ran = subprocess.run(["bash", str(START)], env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    result = json.loads((folders["logs"] / "result.json").read_text().strip().splitlines()[-1])
    assert result["competition"] == SPACESHIP and result["status"] == "succeeded"
    assert (folders["code"] / "solution.py").is_file() and (folders["logs"] / "report.html").is_file()
    out = folders["submission"] / "submission.csv"

    sample = pd.read_csv(prepared.public / "sample_submission.csv", dtype=str)
    submitted = pd.read_csv(out, dtype=str)
    assert list(submitted.columns) == list(sample.columns)
    assert submitted["PassengerId"].tolist() == sample["PassengerId"].tolist(), "the sample's rows, in its order"
    assert set(submitted["Transported"]) <= {"True", "False"}

    # spaceship-titanic's grade.py: accuracy on the answers, both sorted by id
    answers = pd.read_csv(prepared.answers).sort_values("PassengerId")
    graded = pd.read_csv(out).sort_values("PassengerId")
    assert (graded["PassengerId"].to_numpy() == answers["PassengerId"].to_numpy()).all()
    score = round(accuracy_score(answers["Transported"], graded["Transported"]), 5)  # as its Grader rounds it
    assert result["private_score"] == score and result["public_score"] is None

    board = pd.read_csv(prepared.leaderboard)
    medal, _ = mlebench_medal(score, board)
    assert result["medal"] == medal
    assert result["rank"] == 1 + int((board["score"] > score).sum()) and result["teams"] == len(board) + 1
    assert 1 < result["rank"] < len(board), "the board spans the mission's score, so its place tells something"


def test_a_grader_name_and_a_description_name_the_same_metric() -> None:
    """Grader names and Evaluation sections as MLE-bench's competitions write them (its `config.yaml` and
    `description.md`), each to our metric or to none we compute the same way."""
    assert {name: metric_from_name(name) for name in (
        "auc-roc", "accuracy", "multi-class-log-loss", "micro-f1-score", "macro-f1-score", "root_mean_squared_error",
        "quadratic-weighted-kappa", "column-wise ROC AUC", "mean-column-wise-roc-auc", "MAP@12", "map-at-5",
        "matthews-correlation-coefficient", "weighted-auroc", "log-mean-absolute-error", "probabilistic-f1-score",
        "weighted-multi-label-log-loss", "dice-coefficient", "kendall-tau", "f0.5-score",
    )} == {
        "auc-roc": "auc", "accuracy": "accuracy", "multi-class-log-loss": "logloss", "micro-f1-score": "f1_micro",
        "macro-f1-score": "f1_macro", "root_mean_squared_error": "rmse", "quadratic-weighted-kappa": "qwk",
        "column-wise ROC AUC": "mean_auc", "mean-column-wise-roc-auc": "mean_auc", "MAP@12": "map_at_k",
        "map-at-5": "map_at_k", "matthews-correlation-coefficient": "mcc", "weighted-auroc": None,
        "log-mean-absolute-error": None, "probabilistic-f1-score": None, "weighted-multi-label-log-loss": None,
        "dice-coefficient": None, "kendall-tau": None, "f0.5-score": None,
    }  # fmt: skip
    assert top_k_from_name("map-at-5") == 5 and top_k_from_name("MAP@12") == 12
    herbarium = (
        "## Evaluation\n\nSubmissions are evaluated using the [macro F1 score](https://example.org).\n\n"
        "The F1 score is given by $F_1 = 2 \\frac{p r}{p + r}$.\n\n## Submission Format\n\nId,Predicted\n"
    )
    champs = ("## Evaluation\n\nSubmissions are evaluated on the Log of the Mean Absolute Error, calculated for "
              "each scalar coupling type, and then averaged across types.\n")  # fmt: skip
    two = "# Title\n\n## Evaluation\n\nWe report accuracy, but rank by the area under the ROC curve.\n## Prizes\nAUC\n"
    assert metrics_in_description(mlebench_description()) == ["accuracy"]
    assert metrics_in_description(herbarium) == ["f1_macro"], "the F1 beside macro F1 is the same one"
    assert metrics_in_description(champs) == [], "the log of an MAE is not an MAE"
    assert metrics_in_description(two) == ["accuracy", "auc"], "only the Evaluation section is read"
    detection = ("## Evaluation\n\nThe challenge uses the standard PASCAL VOC 2010 mean Average Precision (mAP) at "
                 "IoU > 0.5.\n")  # fmt: skip
    assert metric_from_name("mean-average-precision") == "map_at_k" and other_family(detection) == "iou"
    assert other_family(mlebench_description()) is None


def mlebench_description() -> str:
    from tests.support.mlebench_prepared import DESCRIPTION

    return DESCRIPTION


def test_a_folder_whose_metric_is_unclear_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "spaceship"
    mlebench.spaceship_titanic(folder, np.random.default_rng(0))
    home = {"AGENT_K_HOME": str(tmp_path / "home")}
    refusals = {
        "no description": ("run", "--data", str(folder), "--out", str(tmp_path / "a.csv")),
        "both": ("run", "--data", str(folder), "--competition", "penguins"),
        "missing": ("run", "--data", str(tmp_path / "nowhere")),
    }
    said = {case: run_cli(*args, env=home) for case, args in refusals.items()}
    (folder / "description.md").write_text("## Evaluation\n\nScored by log loss; we also show accuracy.\n")
    said["two metrics"] = run_cli("run", "--data", str(folder), env=home)
    # the budget bounds the whole run: entering the folder spends some of the 1 s (the least a budget may be)
    said["no time left"] = run_cli("run", "--data", str(folder), "--metric", "accuracy", "--time-budget", "1", env=home)
    for case, result in said.items():
        assert result.returncode == 2, (case, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, (case, result.stderr)
    assert "name it with --metric" in said["no description"].stderr
    assert "names logloss, accuracy" in said["two metrics"].stderr
    assert (
        "entering the folder took" in said["no time left"].stderr and "of the 1 s budget" in said["no time left"].stderr
    )
    assert not (tmp_path / "a.csv").exists()


def test_a_sample_without_an_id_gets_its_key_columns_back(tmp_path: Path) -> None:
    """detecting-insults-in-social-commentary's sample is `Insult,Date,Comment` (its rows the test's): the written
    file repeats Date and Comment exactly as the sample spells them, in its order, with our predictions."""
    folder = tmp_path / "insults"
    mlebench.detecting_insults_in_social_commentary(folder, np.random.default_rng(1))
    arranged = arrange_folder(folder, "insults")
    form = arranged.submission_format()
    assert form is not None and form.row_keys == ("Date", "Comment")
    predictions = np.linspace(0, 1, len(arranged.test))
    ours = pd.DataFrame({arranged.id_column: arranged.test[arranged.id_column], "Insult": predictions})
    written = form.written_back(ours.sample(frac=1.0, random_state=0))  # any row order
    sample = pd.read_csv(folder / "sample_submission_null.csv", dtype=str, keep_default_na=False)
    assert list(written.columns) == ["Insult", "Date", "Comment"]
    assert written[["Date", "Comment"]].equals(sample[["Date", "Comment"]])
    by_key = dict(zip(arranged.sample[arranged.id_column], range(len(sample)), strict=True))
    expected = [predictions[arranged.test[arranged.id_column].tolist().index(i)] for i in by_key]
    assert np.allclose(written["Insult"].astype(float), expected)
    with pytest.raises(ValueError, match="lacks 1 of the sample's rows"):
        form.written_back(ours.iloc[1:])


def test_a_label_goes_back_as_the_samples_class_columns(tmp_path: Path) -> None:
    """leaf-classification's sample wants one column per species: a mission that predicts one label column (an
    accuracy-scored run) gets a 1 in its species' column and 0 elsewhere."""
    folder = tmp_path / "leaf"
    mlebench.leaf_classification(folder, np.random.default_rng(2))
    arranged = arrange_folder(folder, "leaf")
    form = arranged.submission_format()
    assert form is not None and form.classes and form.target == "species"
    labels = [form.classes[i % len(form.classes)] for i in range(len(arranged.test))]
    ours = pd.DataFrame({arranged.id_column: arranged.test[arranged.id_column], "species": labels})
    written = form.written_back(ours)
    sample = pd.read_csv(folder / "sample_submission.csv")
    assert list(written.columns) == list(sample.columns)
    chosen = written[list(form.classes)].astype(int)
    assert (chosen.sum(axis=1) == 1).all()
    by_id = dict(zip(ours[arranged.id_column].astype(str), labels, strict=True))
    assert chosen.idxmax(axis=1).tolist() == [by_id[str(i)] for i in written["id"]]


def test_a_board_that_ranks_against_the_metric_is_refused(tmp_path: Path) -> None:
    """MLE-bench reads the direction off the board; an accuracy board listed lowest first would rank every
    submission upside down, so the competition is refused saying so."""
    prepared = spaceship(tmp_path / "mle", teams=40)
    board = pd.read_csv(prepared.leaderboard)
    board.iloc[::-1].to_csv(prepared.leaderboard, index=False)
    platform = MlebenchPlatform(prepared.data, prepared.repo, tmp_path / "home")
    with pytest.raises(PlatformError, match="ranks lower scores first, but accuracy is better higher"):
        platform.ensure(SPACESHIP)


def test_auc_over_several_label_columns_is_their_mean_column_wise_auc(tmp_path: Path) -> None:
    """ranzcr-clip and jigsaw-toxic are graded by "auc-roc" over several 0/1 columns, which is Kaggle's mean
    column-wise AUC: entered with `auc`, they are scored by `mean_auc`."""
    from agent_k.platforms.local import LocalPlatform
    from agent_k.platforms.local.user_files import from_folder

    platform = LocalPlatform(tmp_path / "competitions")
    for slug in ("ranzcr-clip-catheter-line-classification", "jigsaw-toxic-comment-classification-challenge"):
        shape = mlebench.MAKERS[slug](tmp_path / slug, np.random.default_rng(4))
        spec = platform.add(slug, from_folder(tmp_path / slug, slug, [], solution=None), metric="auc", references=False)
        assert spec.metric == "mean_auc" and spec.target_columns == list(shape.targets)


def test_listing_reads_each_config_and_enters_nothing(tmp_path: Path) -> None:
    """`competitions list --platform mlebench` names what can be entered from the configs alone; a competition is
    entered (its files arranged) only when a mission asks for it."""
    prepared = spaceship(tmp_path / "mle", teams=40)
    platform = MlebenchPlatform(prepared.data, prepared.repo, tmp_path / "home")
    listed = asyncio.run(platform.list_competitions())
    assert [(c.id, c.metric, c.title) for c in listed] == [(SPACESHIP, "accuracy", "Spaceship Titanic")]
    assert not (tmp_path / "home" / "competitions" / SPACESHIP).exists()
    entered = platform.ensure(SPACESHIP)
    assert asyncio.run(platform.list_competitions()) == [entered]


def test_a_set_of_labels_goes_back_as_the_set_its_scores_choose(tmp_path: Path) -> None:
    """plant-pathology-2021's `image,labels` (`scab frog_eye_leaf_spot`): learnt as a 0/1 column per disease (the
    answers too), submitted as the space-separated set its metric scores (a label at 0.5 or more, else the best)."""
    from agent_k.platforms.local.user_files import from_folder
    from tests.support import mlebench_media

    folder = tmp_path / "plants"
    shape = mlebench_media.plant_pathology_2021_fgvc8(folder, np.random.default_rng(5))
    sample = pd.read_csv(folder / "sample_submission.csv")
    answers = sample.assign(labels=["scab rust" if i % 2 else "healthy" for i in range(len(sample))])
    answers.to_csv(tmp_path / "answers.csv", index=False)
    tables = from_folder(folder, "plants", [], solution=tmp_path / "answers.csv", scratch=tmp_path / "scratch")
    assert tables.targets == list(shape.targets) and tables.solution is not None
    assert tables.solution[["scab", "rust", "healthy"]].sum().tolist() == [len(sample) // 2] * 2 + [
        len(sample) - len(sample) // 2
    ]
    form = tables.submission_format
    assert form is not None and form.sets == ("labels", " ")
    scores = np.random.default_rng(6).random((len(sample), len(shape.targets))) * 0.8
    ours = pd.DataFrame(scores, columns=list(shape.targets)).assign(image=tables.test["image"].to_numpy())
    written = form.written_back(ours)
    assert list(written.columns) == ["image", "labels"] and written["image"].tolist() == sample["image"].tolist()
    by_image = dict(zip(ours["image"], scores, strict=True))
    for image, labels in zip(written["image"], written["labels"], strict=True):
        row = by_image[image]
        expected = [t for t, s in zip(shape.targets, row, strict=True) if s >= 0.5] or [shape.targets[row.argmax()]]
        assert labels.split(" ") == expected


def test_a_submission_is_graded_by_the_competitions_own_grade_py_where_the_checkout_runs_it(tmp_path: Path) -> None:
    """Without an importable checkout AGENT-K's accuracy grades, and the board says so; once the checkout's grader
    imports, spaceship-titanic's own `grade.py` grades (its score is accuracy on the answers, to 5 decimals), and
    what it refuses has no score, with its reason."""
    prepared = spaceship(tmp_path / "mle", teams=300)
    platform = MlebenchPlatform(prepared.data, prepared.repo, tmp_path / "home")
    answers = pd.read_csv(prepared.answers)
    grade_fn = "mlebench.competitions.spaceship-titanic.grade:grade"

    def submitted(name: str, flipped: float) -> tuple[Path, float]:
        flip = np.random.default_rng(len(name)).random(len(answers)) < flipped
        guess = answers[["PassengerId"]].assign(Transported=answers["Transported"] ^ flip)
        path = tmp_path / f"{name}.csv"
        guess.to_csv(path, index=False)
        return path, round(accuracy_score(answers["Transported"], guess["Transported"]), 5)

    ours, expected = submitted("ours", 0.3)
    assert grade_with_checkout(grade_fn, ours, prepared.answers, prepared.repo) is None, "no mlebench to import"
    first = asyncio.run(platform.submit(SPACESHIP, ours, "", "ours"))
    assert first.private_score == expected
    board = asyncio.run(platform.leaderboard(SPACESHIP))
    assert [e.note for e in board if not e.reference] == ["the team's best graded submission of 1, graded by "
                                                          "AGENT-K's accuracy"]  # fmt: skip

    install_grader(prepared.repo)
    theirs, expected = submitted("theirs-graded", 0.1)
    second = asyncio.run(platform.submit(SPACESHIP, theirs, "", "theirs"))
    assert second.private_score == expected and second.error is None
    board = asyncio.run(platform.leaderboard(SPACESHIP))
    mine = [e for e in board if not e.reference]
    assert mine[0].private_score == expected and mine[0].note is not None and "graded by its grade.py" in mine[0].note
    assert asyncio.run(platform.get_submission(SPACESHIP, first.id)).private_score == first.private_score

    shuffled = tmp_path / "other-ids.csv"
    pd.read_csv(theirs).assign(PassengerId=lambda f: f["PassengerId"] + "x").to_csv(shuffled, index=False)
    refused = grade_with_checkout(grade_fn, shuffled, prepared.answers, prepared.repo)
    assert refused is not None and refused.score is None
    assert refused.reason == "Submission and Answers `PassengerId`'s do not match"
