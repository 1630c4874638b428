"""One row per member (docs/architecture.md, "Metrics" and "Platforms"): a metric and a platform each come from
one declaration, and a new one — declared in a single file, as a plug-in would — runs a whole mission."""

from __future__ import annotations

import ast
import asyncio
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes
from sklearn.metrics import roc_auc_score

from agent_k.competition import Criteria
from agent_k.competition.metric_table import BUILTIN_METRICS
from agent_k.config import Settings
from agent_k.media.kinds import BUILTIN_KINDS
from agent_k.media.kinds import declare as declare_kind
from agent_k.mission.launch import LaunchError, MissionSpec, check_competition
from agent_k.mission.runner import MissionRunner
from agent_k.ml.render import MEDIA_FEATURES
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import UserTables, from_folder
from agent_k.platforms.registry import platform_names
from agent_k.platforms.submissions import daily_limit
from agent_k.store.repository import Store
from tests.support.toy_media import toy_kind
from tests.support.toy_metric import WITHIN_TENTH
from tests.support.toy_platform import SHELF

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agent_k"
METRIC_HOMES = {"competition/metric_table.py", "competition/metric_kernels.py"}
"""A metric's name may appear in its declaration and its kernel; nowhere else does code act on a name."""
DATA_NAMING_METRICS = {"platforms/local/catalog.py", "ml/portfolio/build.py"}
"""Data, not behaviour: which metric each built-in competition (and each portfolio task) is scored by."""
SCIKIT_LEARN_SCORERS = {"ml/profiling.py"}
"""scikit-learn's own scorer names ("r2", "balanced_accuracy"), passed to `cross_val_score`."""


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_no_code_outside_a_declaration_names_a_metric() -> None:
    names = {m.name for m in BUILTIN_METRICS}
    allowed = METRIC_HOMES | DATA_NAMING_METRICS | SCIKIT_LEARN_SCORERS
    found = [
        f"{path.relative_to(PACKAGE)}:{line} {value!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if str(path.relative_to(PACKAGE)) not in allowed
        for line, value in _strings(path)
        if value in names
    ]
    assert found == []


def test_no_template_or_script_of_the_page_names_a_metric() -> None:
    """The rendered scripts and the page act on the declaration's facts (`NON_NEGATIVE`, `BOOSTING_EVAL`), never
    on a name: a plug-in metric declared non-negative gets its predictions clipped as rmsle's are."""
    names = {m.name for m in BUILTIN_METRICS}
    sources = [p for p in sorted(PACKAGE.rglob("*")) if p.suffix in (".tmpl", ".js", ".html")]
    assert any(p.suffix == ".tmpl" for p in sources) and any(p.suffix == ".js" for p in sources)
    found = [
        f"{path.relative_to(PACKAGE)}:{number} {quoted}"
        for path in sources
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for quoted in re.findall(r"[\"']([a-z0-9_]+)[\"']", line)
        if quoted in names
    ]
    assert found == []


def test_no_code_outside_the_media_kinds_names_a_kind() -> None:
    """A kind is acted on through its declaration's facts; its name is written in its row alone (the built-in
    competitions name theirs through the rows' constants)."""
    names = {kind.name for kind in BUILTIN_KINDS if kind.reader}
    sources = [p for p in sorted(PACKAGE.rglob("*")) if p.suffix in (".py", ".tmpl", ".js", ".html")]
    found = [
        f"{path.relative_to(PACKAGE)}:{number} {quoted}"
        for path in sources
        if path != PACKAGE / "media" / "kinds.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for quoted in re.findall(r"[\"']([a-z]+)[\"']", line)
        if quoted in names
    ]
    assert found == []


def test_no_code_outside_a_platform_declaration_asks_for_a_platform_by_name() -> None:
    names = set(platform_names())
    assert {"kaggle", "local", "mlebench"} <= names
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "declaration.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Compare) and any(
                isinstance(c, ast.Constant) and c.value in names for c in [node.left, *node.comparators]
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == []


def test_the_design_the_code_cites_is_in_the_repository() -> None:
    """Comments cite docs/architecture.md by section; no file outside docs/ cites a design kept elsewhere."""
    sources = [*PACKAGE.rglob("*"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]
    citing = [
        str(p.relative_to(ROOT)) for p in sources if p.is_file() and p != Path(__file__) and b"DESIGN" in p.read_bytes()
    ]
    assert citing == []
    sections = {
        line[3:].strip() for line in (ROOT / "docs/architecture.md").read_text().splitlines() if line[:3] == "## "
    }
    cited = set()
    for path in [p for p in sources if p.suffix == ".py"]:
        for quoted in re.findall(r'docs/architecture\.md, "([^"]+)"', path.read_text()):
            cited.add((quoted, str(path.relative_to(ROOT))))
    assert cited, "the code cites the architecture by section"
    assert [c for c in cited if c[0] not in sections] == []


def _shelf_competition(settings: Settings) -> str:
    frame = load_diabetes(as_frame=True).frame.rename(columns={"target": "progression"})
    shelf = SHELF.open(settings, None)  # type: ignore[arg-type]
    spec = shelf.add("diabetes-shelf", UserTables(train=frame, targets=["progression"]), metric=WITHIN_TENTH.name)
    assert (spec.metric, spec.task.value, spec.maximize) == ("within_tenth", "regression", True)
    return spec.id


@pytest.mark.slow
def test_a_toy_metric_and_a_toy_platform_run_a_mission(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'toy.db'}"
    settings = Settings(home=home, database_url=url, workers=2)
    with pytest.raises(LaunchError, match="SHELF_TOKEN"):  # the declaration's credentials check
        asyncio.run(check_competition("shelf", None, settings))
    monkeypatch.setenv("SHELF_TOKEN", "t0ken")
    competition = _shelf_competition(settings)
    asyncio.run(check_competition("shelf", competition, settings))
    with pytest.raises(LaunchError, match="unknown competition 'diabetes-shelf'"):
        asyncio.run(check_competition("local", competition, settings))  # it is on the shelf only
    assert daily_limit("shelf", None, None) == 2

    store = Store.open(url)
    runner = MissionRunner(settings, store)  # the platform comes from its declaration, by the mission's name
    spec = MissionSpec(
        mission_id="toy", criteria=Criteria(competition=competition), time_budget=30, platform="shelf", stop_early=True
    )
    runner.create(spec)
    result = asyncio.run(runner.run("toy"))
    assert result.success, result.detail

    events = [json.loads(e.payload) for e in store.events_after("toy")]
    selected = next(e for e in events if e["type"] == "competition.selected")
    assert (selected["metric"], selected["maximize"]) == ("within_tenth", True)
    scores = [e["cv_score"] for e in events if e["type"] == "candidate.evaluated" and e.get("cv_score") is not None]
    assert len(scores) >= 3 and all(0.0 <= s <= 1.0 for s in scores)

    # The shelf scored the submission with the toy kernel: recompute it from the files by hand.
    folder = home / "shelf" / competition
    id_column = json.loads((folder / "public" / "competition.json").read_text())["id_column"]
    solution = pd.read_csv(folder / "private" / "solution.csv")
    merged = solution.merge(pd.read_csv(str(result.submission_path)), on=id_column, suffixes=("", "_p"))
    within = np.abs(merged["progression_p"] - merged["progression"]) <= 0.1 * merged["progression"].abs()
    private = (merged["Usage"] == "Private").to_numpy()
    assert result.private_score == pytest.approx(float(within[private].mean()), abs=1e-9)
    # Ranked in the declared direction (higher is better): one more than the reference teams that scored above us.
    board = json.loads((folder / "private" / "leaderboard.json").read_text())["teams"]
    above = [e for e in board if e.get("private_score") is not None and e["private_score"] > result.private_score]
    assert result.rank == 1 + len(above)
    store.close()


def _tallies(folder: Path, rng: np.random.Generator, rows: int = 240) -> pd.DataFrame:
    """A competition of toy `.tally` files laid out as a download is: `train.csv` (id, file, label), `test.csv`,
    `sample_submission.csv`, the files in `tallies/`. A tally's label is whether its numbers lean positive
    (noisily). Returns the test rows' answers."""
    (folder / "tallies").mkdir(parents=True)
    shift = rng.normal(0, 1, rows)
    label = (shift + rng.normal(0, 0.5, rows) > 0).astype(int)
    for i in range(rows):
        numbers = rng.normal(shift[i], 1, int(rng.integers(5, 40)))
        (folder / "tallies" / f"t{i:04d}.tally").write_text(" ".join(f"{v:.4f}" for v in numbers))
    table = pd.DataFrame({"id": range(rows), "file": [f"t{i:04d}.tally" for i in range(rows)], "label": label})
    train, test = table.iloc[: rows * 3 // 4], table.iloc[rows * 3 // 4 :]
    train.to_csv(folder / "train.csv", index=False)
    test[["id", "file"]].to_csv(folder / "test.csv", index=False)
    test.assign(label=0.5)[["id", "label"]].to_csv(folder / "sample_submission.csv", index=False)
    return test[["id", "label"]]


@pytest.mark.slow
def test_a_toy_media_kind_declared_in_one_file_is_entered_by_a_mission(home: Path, tmp_path: Path) -> None:
    """Its files are found by their suffix, read in the sandboxed featurisation job by its own reader, profiled by
    its measures, and ranked against the reference entries it declares; nothing else knows the kind."""
    declare_kind(toy_kind())
    answers = _tallies(tmp_path / "tallies", np.random.default_rng(5))
    answers.to_csv(tmp_path / "solution.csv", index=False)
    tables = from_folder(tmp_path / "tallies", "tallies", [], solution=tmp_path / "solution.csv")
    competition = LocalPlatform(home / "competitions").add("tallies", tables, metric="auc")
    assert competition.media is not None and competition.media.kind == "tally"
    board = json.loads((home / "competitions" / "tallies" / "private" / "leaderboard.json").read_text())["teams"]
    assert {e["team"] for e in board} == {
        "reference/tally-statistics-logistic", "reference/tally-sum-lightgbm", "reference/constant-prior"
    }  # fmt: skip

    url = f"sqlite:///{tmp_path / 'toy.db'}"
    settings, store = Settings(home=home, database_url=url, workers=2), Store.open(url)
    runner = MissionRunner(settings, store)
    runner.create(MissionSpec(mission_id="tally", criteria=Criteria(competition="tallies"), time_budget=40,
                              stop_early=True))  # fmt: skip
    result = asyncio.run(runner.run("tally"))
    assert result.success, result.detail

    state = json.loads(store.snapshots("tally")[-1].state_json)
    profile = state["research_findings"]["media"]
    assert (profile["kind"], profile["files"], profile["unreadable"]) == ("tally", 240, 0)
    assert profile["formats"] == {"TALLY": 240} and set(profile["quantiles"]) == {"count"}
    features = pd.read_parquet(Path(state["data_dir"]) / MEDIA_FEATURES["train"])
    assert {"tally_mean", "tally_std", "tally_sum"} <= set(features.columns) and len(features) == 180
    assert result.cv_score is not None and result.cv_score > 0.75, "the tallies' statistics carry the label"
    # The platform scored the submission: recompute it from the files.
    submission = pd.read_csv(str(result.submission_path)).merge(answers, on="id", suffixes=("", "_true"))
    solution = pd.read_csv(home / "competitions" / "tallies" / "private" / "solution.csv")
    private = submission["id"].isin(solution.loc[solution["Usage"] == "Private", "id"])
    expected = roc_auc_score(submission.loc[private, "label_true"], submission.loc[private, "label"])
    assert result.private_score == pytest.approx(expected, abs=1e-9)
    store.close()
