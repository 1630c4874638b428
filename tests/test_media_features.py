"""A media competition's features: computed once in the sandbox (unreadable files reported and skipped, copies of
training files found), kept through a kill, handed to a model-written script on every fold, and a mission that
enters an image competition end to end."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from agent_k.media.images import read_image
from agent_k.ml.featurise import FeaturePlan, featurise
from agent_k.ml.render import MEDIA_FEATURES, MEDIA_PIXELS
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import from_folder
from agent_k.sandbox import Limits
from tests.conftest import AGENT_K, run_cli
from tests.support.browser import Watched
from tests.support.mlebench_media import MAKERS, aerial_cactus_identification, dicom, dog_breed_identification

pytestmark = pytest.mark.usefixtures("media_home")


def test_unreadable_files_are_reported_and_skipped_and_copies_found(home: Path, tmp_path: Path) -> None:
    dog_breed_identification(tmp_path / "dogs", np.random.default_rng(1))
    platform = LocalPlatform(home / "competitions")
    spec = platform.add("dogs", from_folder(tmp_path / "dogs", "dogs", [], solution=None), metric="logloss")
    data = tmp_path / "data"
    shutil.copytree(home / "competitions" / "dogs" / "public", data)
    reported: list[tuple[int, int]] = []

    async def progress(done: int, total: int) -> None:
        reported.append((done, total))

    profile = asyncio.run(featurise(
        spec, data, tmp_path / "work", FeaturePlan(64, flip=True, fine_tune=True), Limits(timeout_s=120),
        models=home / "models",
        progress=progress,
    ))  # fmt: skip
    assert profile.files == 40 and profile.unreadable == 2 and reported[-1] == (40, 40)
    assert any("empty" in e for e in profile.unreadable_examples), profile.unreadable_examples
    assert profile.duplicates == 1, "the test file that is a training file's copy"
    assert {"PNG", "JPEG", "BMP", "TIFF"} <= set(profile.formats) and {"I;16", "RGBA", "L"} <= set(profile.channels)
    features = pd.concat([pd.read_parquet(data / name) for name in MEDIA_FEATURES.values()])
    assert len(features) == 40 and features.filter(like="emb").shape[1] == 1280
    unread = features.filter(like="emb").isna().all(axis=1)
    assert unread.sum() == 2 and not features.loc[~unread].filter(like="emb").isna().any().any()
    # Kept to fine-tune the pretrained network on, in the features' row order: an unread file's pixels are blank.
    assert profile.pixels == 128 and profile.fine_tune
    pixels = np.concatenate([np.load(data / name) for name in MEDIA_PIXELS.values()])
    assert pixels.shape == (40, 3, 128, 128)
    assert (pixels.reshape(40, -1).max(axis=1) == 0).tolist() == unread.tolist()


def test_dicom_images_are_decoded_in_the_sandbox_and_windowed_to_8_bits(home: Path, tmp_path: Path) -> None:
    """A folder of DICOM files only (12-bit X-ray-like images named by UID, a third of them MONOCHROME1): the
    featurisation job decodes every one in the sandbox, and an inverted file reads as its upright twin does."""
    folder, rng = tmp_path / "xrays", np.random.default_rng(2)
    names, labels, is_test = [f"1.2.826.0.1.{i}" for i in range(40)], np.arange(40) % 2, np.arange(40) % 4 == 3
    for i, (name, label) in enumerate(zip(names, labels, strict=True)):
        dicom(folder / ("test" if is_test[i] else "train") / f"{name}.dcm", int(label), rng, inverted=i % 3 == 0)
    frame = pd.DataFrame({"image_name": names, "target": labels})
    frame[~is_test].to_csv(folder / "train.csv", index=False)
    frame[is_test][["image_name"]].assign(target=0).to_csv(folder / "sample_submission.csv", index=False)
    spec = LocalPlatform(home / "competitions").add("xrays", from_folder(folder, "xrays", [], solution=None),
                                                    metric="auc")  # fmt: skip
    data = tmp_path / "data"
    shutil.copytree(home / "competitions" / "xrays" / "public", data)

    async def progress(done: int, total: int) -> None:
        pass

    profile = asyncio.run(featurise(
        spec, data, tmp_path / "work", FeaturePlan(64, flip=False), Limits(timeout_s=120), models=home / "models",
        progress=progress,
    ))  # fmt: skip
    assert (profile.files, profile.unreadable, profile.formats) == (40, 0, {"DICOM": 40}), profile
    assert set(profile.channels) == {"MONOCHROME1 12-bit", "MONOCHROME2 12-bit"}
    upright, inverted = tmp_path / "upright.dcm", tmp_path / "inverted.dcm"
    dicom(upright, 1, np.random.default_rng(7))
    dicom(inverted, 1, np.random.default_rng(7), inverted=True)
    assert read_image(upright)[0].tobytes() == read_image(inverted)[0].tobytes(), "MONOCHROME1 is turned upright"


@pytest.mark.slow
def test_a_kill_during_featurisation_resumes_without_redoing_finished_chunks(home: Path, tmp_path: Path) -> None:
    """600 images are two chunks (450 training, 150 test rows): killed (-9) once one is done, the resumed mission
    keeps it and featurises the other. 40 s: at 20, on a loaded machine, the first chunk alone took 18 s and the
    resumed mission had no time left to featurise the second."""
    aerial_cactus_identification(tmp_path / "cactus", np.random.default_rng(9), files=600)
    LocalPlatform(home / "competitions").add("cactus", from_folder(tmp_path / "cactus", "cactus", [], solution=None),
                                             metric="auc")  # fmt: skip
    features = home / "missions" / "cactus-killed" / "features"
    process = subprocess.Popen(
        [AGENT_K, "run", "--competition", "cactus", "--time-budget", "40", "--mission-id", "cactus-killed",
         "--stop-early"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy(),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not list(features.glob("*.parquet")) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        finished = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in features.glob("*.parquet")}
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
    assert len(finished) == 1, finished
    resumed = run_cli("resume", "cactus-killed", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.strip().splitlines()[-1])["status"] == "succeeded"
    for name, stamp in finished.items():
        path = features / name
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == stamp, f"{name} was featurised again"
    assert len(list(features.glob("*.parquet"))) == 2


MEDIA_SCRIPT = """
import argparse
from pathlib import Path

import pandas as pd
from sklearn.linear_model import LogisticRegression

parser = argparse.ArgumentParser()
parser.add_argument("--data", type=Path)
parser.add_argument("--out", type=Path)
args = parser.parse_args()
tables = {}
for name in ("train", "test"):
    rows = pd.read_csv(args.data / f"{name}.csv")
    assert all((args.data / "media" / p).is_file() for p in rows["path"]), "every row's file is there"
    tables[name] = rows.merge(pd.read_parquet(args.data / f"media_features_{name}.parquet"), on="id")
columns = [c for c in tables["train"].columns if c.startswith("emb")]
model = LogisticRegression(max_iter=2000).fit(tables["train"][columns], tables["train"]["has_cactus"])
pd.DataFrame({"id": tables["test"]["id"], "has_cactus": model.predict_proba(tables["test"][columns])[:, 1]}).to_csv(
    args.out, index=False
)
"""


def test_a_model_written_script_sees_the_files_and_their_features_on_every_fold(home: Path, tmp_path: Path) -> None:
    from agent_k.competition.research import CVScheme
    from agent_k.ml.evaluate import CompetitionData
    from agent_k.ml.harness import evaluate_script
    from agent_k.ml.recipes import Script

    MAKERS["aerial-cactus-identification"](tmp_path / "cactus", np.random.default_rng(6))
    spec = LocalPlatform(home / "competitions").add("cactus", from_folder(tmp_path / "cactus", "cactus", [],
                                                                          solution=None), metric="auc")  # fmt: skip
    data = tmp_path / "data"
    shutil.copytree(home / "competitions" / "cactus" / "public", data)

    async def progress(done: int, total: int) -> None:
        return None

    limits = Limits(timeout_s=120, allow_unsandboxed_code=True)
    asyncio.run(featurise(spec, data, tmp_path / "work", FeaturePlan(64, flip=False), limits, models=home / "models",
                          progress=progress))  # fmt: skip
    cv = CVScheme(kind="stratified_kfold", n_folds=3)
    evaluation = asyncio.run(evaluate_script(Script(source=MEDIA_SCRIPT), CompetitionData.load(spec, data, cv), cv,
                                             tmp_path / "candidate", limits))  # fmt: skip
    assert evaluation.status == "succeeded", evaluation.error
    assert len(evaluation.fold_scores) == 3 and evaluation.submission_path is not None


@pytest.mark.slow
def test_a_mission_enters_an_image_competition_and_its_page_shows_the_files(
    home: Path, tmp_path: Path, browser: Any
) -> None:
    shape = aerial_cactus_identification(tmp_path / "cactus", np.random.default_rng(0), files=160)
    assert shape.solution is not None
    shape.solution.to_csv(tmp_path / "solution.csv", index=False)
    added = run_cli("competitions", "add", "cactus", "--data", str(tmp_path / "cactus"), "--metric", "auc",
                    "--solution", str(tmp_path / "solution.csv"))  # fmt: skip
    assert added.returncode == 0, added.stderr
    # 45 s: at 30, on a slow machine beside the other test process, featurisation took 23 s and left no model time.
    done = run_cli(
        "run", "--competition", "cactus", "--time-budget", "45", "--json", "--stop-early", env={"AGENT_K_WORKERS": "2"}
    )  # featurisation in two processes, as it was timed
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "succeeded" and result["private_score"] > 0.5, result
    solution = Path(result["solution_path"]).read_text()
    assert MEDIA_FEATURES["train"] in solution and "agent_k" not in solution

    # The report, from disk: the training files, drawn from the events. Last in this module: the browser's event
    # loop outlives the test.
    watched = Watched(browser, offline=True)
    try:
        watched.page.goto((home / "missions" / result["mission_id"] / "report.html").as_uri())
        watched.wait(
            "window.AgentK && window.AgentK.rendered > 0 && document.querySelectorAll('#galleries img').length"
        )
        shown = watched.page.evaluate(
            "[...document.querySelectorAll('[data-kind=examples] img')].map(i => i.complete && i.naturalWidth)"
        )
        captions = watched.page.evaluate("[...document.querySelectorAll('[data-kind=examples] figcaption')]"
                                         ".map(c => c.textContent)")  # fmt: skip
        assert len(shown) == 6 and all(width and width > 0 for width in shown), shown
        assert set(captions) == {"0", "1"}, "three of each class"
        assert watched.errors == []
    finally:
        watched.close()
