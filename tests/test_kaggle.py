"""The Kaggle adapter against a fake Kaggle server on 127.0.0.1: data, submissions, retries, errors, zips."""

from __future__ import annotations

import asyncio
import io
import itertools
import logging
import shutil
import stat
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import numpy as np
import pytest

from agent_k.competition import TaskType, metric_named
from agent_k.platforms.archive import UnsafeArchive, safe_extract
from agent_k.platforms.base import CompetitionNotFound, Submission, SubmissionStatus
from agent_k.platforms.kaggle import (
    CredentialsMissing,
    KaggleAdapter,
    KaggleAuthError,
    KaggleClient,
    RetryPolicy,
    RulesNotAccepted,
    load_credentials,
)
from agent_k.platforms.kaggle.client import OutcomeUnknown
from agent_k.platforms.kaggle.layout import UnsupportedCompetition, arrange
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.ranking import submission_standing
from agent_k.platforms.submissions import QuotaExhausted, check_quota, daily_limit, wait_for_score
from tests.conftest import need_tool
from tests.support.fake_kaggle import FakeKaggle
from tests.support.local_server import serving

MiB = 2**20


def _zip(entries: dict[str, bytes], *, symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        if symlink is not None:
            link = zipfile.ZipInfo(symlink)
            link.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(link, "/etc/passwd")
    return buffer.getvalue()


TRAVERSAL = _zip({"train.csv": b"a,b\n1,2\n", "../escape.txt": b"owned"})
BOMB = _zip({"train.csv": bytes(64 * MiB)})


@pytest.fixture
def fake(competition_cache: Path, tmp_path: Path) -> FakeKaggle:
    root = tmp_path / "kaggle-side"
    for name in ("penguins", "titanic"):
        shutil.copytree(competition_cache / name, root / name)
    return FakeKaggle(
        LocalPlatform(root),
        ("penguins", "titanic", "traversal", "zip-bomb"),
        unaccepted_rules={"titanic"},
        archives={"traversal": TRAVERSAL, "zip-bomb": BOMB},
    )


@pytest.fixture
def kaggle_url(fake: FakeKaggle) -> Iterator[str]:
    with serving(fake.app()) as port:
        yield f"http://127.0.0.1:{port}"


def _adapter(
    fake: FakeKaggle, url: str, http: httpx.AsyncClient, cache: Path, *, key: str = "", max_data_bytes: int = 50 * MiB
) -> KaggleAdapter:
    env = {"KAGGLE_USERNAME": fake.username, "KAGGLE_KEY": key or fake.key}
    client = KaggleClient(http, load_credentials(env), url, RetryPolicy(initial_s=0.05, max_backoff_s=0.2))
    return KaggleAdapter(client, cache, max_data_bytes=max_data_bytes)


# -- archives and credentials (no server) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("archive", "reason"),
    [
        (TRAVERSAL, "outside the extraction folder"),
        (_zip({"/etc/cron.d/job": b"x"}), "absolute path"),
        (_zip({"train.csv": b"a\n"}, symlink="data/link"), "symbolic link"),
        (BOMB, "over the 16,777,216-byte cap"),
    ],
    ids=["traversal", "absolute", "symlink", "bomb"],
)
def test_unsafe_archives_are_refused_and_leave_nothing(tmp_path: Path, archive: bytes, reason: str) -> None:
    path = tmp_path / "data.zip"
    path.write_bytes(archive)
    dest = tmp_path / "sandbox" / "raw"
    with pytest.raises(UnsafeArchive, match=reason):
        safe_extract(path, dest, max_bytes=16 * MiB)
    sandbox = tmp_path / "sandbox"
    assert (list(sandbox.rglob("*")) if sandbox.exists() else []) == []
    assert not list(tmp_path.rglob("escape.txt"))


def test_a_safe_archive_is_extracted_whole(tmp_path: Path) -> None:
    path = tmp_path / "data.zip"
    path.write_bytes(_zip({"train.csv": b"a,b\n1,2\n", "extra/notes.txt": b"hi"}))
    files = safe_extract(path, tmp_path / "raw", max_bytes=MiB)
    assert sorted(p.relative_to(tmp_path / "raw").as_posix() for p in files) == ["extra/notes.txt", "train.csv"]


def test_credentials_come_from_the_environment_then_kaggle_json(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from_env = load_credentials({"KAGGLE_USERNAME": "ada", "KAGGLE_KEY": "k1", "KAGGLE_CONFIG_DIR": str(tmp_path)})
    assert (from_env.username, from_env.source) == ("ada", "environment")
    assert "k1" not in repr(from_env)

    with pytest.raises(CredentialsMissing, match="set KAGGLE_KEY \\(KAGGLE_USERNAME is set\\), or create"):
        load_credentials({"KAGGLE_USERNAME": "ada", "KAGGLE_CONFIG_DIR": str(tmp_path)})
    with pytest.raises(CredentialsMissing, match=r"set KAGGLE_API_TOKEN .* or .*kaggle\.json works too"):
        load_credentials({"KAGGLE_CONFIG_DIR": str(tmp_path)})

    file = tmp_path / "kaggle.json"
    file.write_text('{"username": "bob", "key": "k2"}')
    file.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="agent_k.kaggle"):
        from_file = load_credentials({"KAGGLE_CONFIG_DIR": str(tmp_path)})
        load_credentials({"KAGGLE_CONFIG_DIR": str(tmp_path)})  # a CLI run reads them more than once
    assert (from_file.username, from_file.secret.get_secret_value()) == ("bob", "k2")
    assert caplog.text.count("readable by other users") == 1 and "k2" not in caplog.text

    caplog.clear()
    file.chmod(0o600)
    with caplog.at_level(logging.WARNING, logger="agent_k.kaggle"):
        load_credentials({"KAGGLE_CONFIG_DIR": str(tmp_path)})
    assert caplog.text == ""


def test_the_daily_quota_counts_todays_accepted_submissions() -> None:
    now = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)

    def sub(hours_ago: float, status: SubmissionStatus = SubmissionStatus.complete) -> Submission:
        return Submission(id="s", competition_id="c", created_at=now - timedelta(hours=hours_ago), status=status)

    assert daily_limit("kaggle", None, None) == 5 and daily_limit("kaggle", None, 3) == 3
    assert daily_limit("kaggle", 2, 3) == 2 and daily_limit("local", None, None) is None
    today = [sub(1), sub(2), sub(3, SubmissionStatus.error), sub(20)]  # one errored, one yesterday
    check_quota(today, 3, now)
    resets = r"used up \(2 of 2 today\); it resets at 2026-11-23 00:00 UTC \(in 9h00m\)"
    with pytest.raises(QuotaExhausted, match=resets):
        check_quota(today, 2, now)


# -- the adapter against the fake server -----------------------------------------------------------


def test_data_submission_scoring_and_rank_through_the_api(
    fake: FakeKaggle, kaggle_url: str, tmp_path: Path, competition_cache: Path
) -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient() as http:
            kaggle = _adapter(fake, kaggle_url, http, tmp_path / "cache")
            listed = {c.id: c for c in await kaggle.list_competitions()}
            assert listed["penguins"].metric == "accuracy" and listed["penguins"].max_daily_submissions == 5

            spec = await kaggle.get_competition("penguins")
            local = LocalPlatform(competition_cache).ensure("penguins")
            assert (spec.task, spec.target, spec.id_column, spec.classes) == (
                local.task,
                local.target,
                local.id_column,
                local.classes,
            )
            paths = await kaggle.download_data("penguins", tmp_path / "data")
            assert sorted(p.name for p in paths) == [
                "competition.json",
                "description.md",
                "sample_submission.csv",
                "test.csv",
                "train.csv",
            ]
            assert fake.storage_authorization == [None], "credentials must not follow the redirect to storage"

            file = tmp_path / "data" / "sample_submission.csv"
            submitted = await kaggle.submit("penguins", file, "AGENT-K test [key:abc]", "abc")
            assert submitted.status is SubmissionStatus.pending
            scored = await wait_for_score(kaggle, submitted, timeout_s=30, max_delay_s=0.1)
            assert scored.status is SubmissionStatus.complete and scored.team == fake.team
            assert scored.public_score == pytest.approx(float(fake.submissions[0]["publicScore"]))

            board = await kaggle.leaderboard("penguins")
            ours = next(e.public_score for e in board if e.team == fake.team)
            assert ours == pytest.approx(scored.public_score) and all(e.private_score is None for e in board)
            place = submission_standing(board, fake.team, scored, metric_named("auc"))
            better = [e for e in board if e.public_score is not None and ours is not None and e.public_score > ours]
            assert place is not None and (place.rank, place.teams) == (1 + len(better), len(board))
            # Our team is known by its name, not the user's: by that, our own entry would rank against us.
            misnamed = submission_standing(board, fake.username, scored, metric_named("auc"))
            assert misnamed is not None and misnamed.teams == len(board) + 1

    asyncio.run(scenario())


def test_429_is_retried_after_the_time_retry_after_asks(fake: FakeKaggle, kaggle_url: str, tmp_path: Path) -> None:
    fake.fail("ListCompetitions", 429, times=2, retry_after="1")
    fake.fail("GetCompetition", 503)

    async def scenario() -> None:
        async with httpx.AsyncClient() as http:
            kaggle = _adapter(fake, kaggle_url, http, tmp_path)
            assert [c.id for c in await kaggle.list_competitions()][:2] == ["penguins", "titanic"]
            assert (await kaggle.metadata("penguins"))["title"]

    asyncio.run(scenario())
    listing = [t for t, method in fake.calls if method == "ListCompetitions"]
    assert len(listing) == 3
    assert all(later - earlier >= 1.0 for earlier, later in itertools.pairwise(listing))
    assert [m for _, m in fake.calls].count("GetCompetition") == 2


def test_a_failed_submit_is_never_repeated_blindly(fake: FakeKaggle, kaggle_url: str, tmp_path: Path) -> None:
    fake.fail("CreateSubmission", 500)
    file = tmp_path / "submission.csv"
    shutil.copyfile(fake.local.root / "penguins" / "public" / "sample_submission.csv", file)

    async def scenario() -> None:
        async with httpx.AsyncClient() as http:
            kaggle = _adapter(fake, kaggle_url, http, tmp_path)
            with pytest.raises(OutcomeUnknown, match="may or may not have been done"):
                await kaggle.submit("penguins", file, "AGENT-K [key:k1]", "k1")
            again = await kaggle.submit("penguins", file, "AGENT-K [key:k1]", "k1")
            assert again.id == str(fake.submissions[0]["ref"])

    asyncio.run(scenario())
    assert [m for _, m in fake.calls].count("CreateSubmission") == 2  # the failed one was not retried
    assert len(fake.submissions) == 1


def test_platform_refusals_read_as_what_to_do(fake: FakeKaggle, kaggle_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient() as http:
            kaggle = _adapter(fake, kaggle_url, http, tmp_path / "cache")
            with pytest.raises(RulesNotAccepted) as refused:
                await kaggle.get_competition("titanic")
            assert str(refused.value).endswith(
                "accept the competition rules at https://www.kaggle.com/competitions/titanic/rules"
            )
            with pytest.raises(CompetitionNotFound, match=r"unknown competition '\.\./penguins'"):
                await kaggle.download_data("../penguins", tmp_path / "data")
            wrong = _adapter(fake, kaggle_url, http, tmp_path / "cache", key="not-the-key")
            with pytest.raises(KaggleAuthError, match="rejected the credentials from environment") as denied:
                await wrong.list_competitions()
            assert "not-the-key" not in str(denied.value)

            for name, reason in (("traversal", "outside the extraction folder"), ("zip-bomb", "byte cap")):
                small = _adapter(fake, kaggle_url, http, tmp_path / "cache", max_data_bytes=16 * MiB)
                with pytest.raises(UnsafeArchive, match=reason):
                    await small.download_data(name, tmp_path / "data")
            assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == []
            assert not list(tmp_path.rglob("escape.txt")) and not (tmp_path / "data").exists()

    asyncio.run(scenario())


def test_the_target_and_id_are_read_off_kaggle_files(tmp_path: Path) -> None:
    raw = tmp_path / "raw" / "data"
    raw.mkdir(parents=True)
    (raw / "train.csv").write_text("PassengerId,Age,Survived\n1,22,0\n2,38,1\n3,26,1\n")
    (raw / "test.csv").write_text("PassengerId,Age\n4,35\n5,54\n")
    (raw / "gender_submission.csv").write_text("PassengerId,Survived\n4,0\n5,1\n")
    auc = {"title": "Titanic", "evaluationMetric": "Area Under Receiver Operating Characteristic Curve"}
    spec = arrange(auc, "titanic", tmp_path / "raw", tmp_path / "public")
    expected = (TaskType.binary, "Survived", "PassengerId", ["0", "1"])
    assert (spec.task, spec.target, spec.id_column, spec.classes) == expected
    assert sorted(p.name for p in (tmp_path / "public").iterdir()) == [
        "competition.json",
        "description.md",
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]

    probs = tmp_path / "probs"
    probs.mkdir()
    (probs / "train.csv").write_text("id,x,label\n1,0.1,cat\n2,0.5,dog\n3,0.9,bird\n")
    (probs / "test.csv").write_text("id,x\n4,0.2\n")
    (probs / "sample_submission.csv").write_text("id,bird,cat,dog\n4,0.3,0.3,0.4\n")
    spec = arrange({"evaluationMetric": "Multi-class Log Loss"}, "animals", probs, tmp_path / "animals")
    assert (spec.task, spec.target, spec.classes) == (TaskType.multiclass, "label", ["bird", "cat", "dog"])

    for metric in ("Dice Coefficient", "Mean Average Precision at IoU thresholds", "Weighted Mean Absolute Error"):
        with pytest.raises(UnsupportedCompetition, match=f"scored by '{metric}', which AGENT-K cannot compute"):
            arrange({"evaluationMetric": metric}, "x", probs, tmp_path / "x")
        assert not (tmp_path / "x").exists()


def _table(header: str, rows: Iterator[str]) -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


def _house_prices() -> bytes:
    """Kaggle's house-prices layout: `Id`, features, `SalePrice`; scored by RMSLE."""
    rng = np.random.default_rng(0)
    area = rng.integers(2000, 20000, 160)
    hood = rng.choice(["NAmes", "CollgCr", "OldTown"], 160)
    price = (area * 9 + rng.normal(0, 5000, 160)).round()
    train = _table("Id,LotArea,Neighborhood,SalePrice", (f"{i},{area[i]},{hood[i]},{price[i]}" for i in range(120)))
    test = _table("Id,LotArea,Neighborhood", (f"{i},{area[i]},{hood[i]}" for i in range(120, 160)))
    sample = _table("Id,SalePrice", (f"{i},180000" for i in range(120, 160)))
    return _zip({"train.csv": train, "test.csv": test, "sample_submission.csv": sample, "data_description.txt": b"."})


def _essays() -> bytes:
    """An essay-scoring layout: free text, a 1-6 score scored by quadratic weighted kappa, ids as strings."""
    words = ["good", "essay", "argument", "weak", "clear", "thesis", "evidence", "style"]
    rng = np.random.default_rng(1)
    texts = [" ".join(rng.choice(words, 12)) for _ in range(150)]
    scores = rng.integers(1, 7, 150)
    train = _table("essay_id,full_text,score", (f"e{i:03d},{texts[i]},{scores[i]}" for i in range(100)))
    test = _table("essay_id,full_text", (f"e{i:03d},{texts[i]}" for i in range(100, 150)))
    sample = _table("essay_id,score", (f"e{i:03d},3" for i in range(100, 150)))
    return _zip({"train.csv": train, "test.csv": test, "sample_submission.csv": sample})


def _leaf_images(*, test_images: bool) -> bytes:
    """Rows that are images: a label table beside folders of JPEGs (of the test rows too, or not)."""
    images = {f"train_images/{i}.jpg": b"\xff\xd8\xff\xe0 not really" for i in range(30)}
    if test_images:
        images |= {f"test_images/{i}.jpg": b"\xff\xd8\xff\xe0 not really" for i in range(30, 40)}
    labels = _table("image_id,species", (f"{i},{('oak', 'elm')[i % 2]}" for i in range(30)))
    sample = _table("image_id,species", (f"{i},oak" for i in range(30, 40)))
    return _zip({"train.csv": labels, "sample_submission.csv": sample, **images})


def test_kaggle_competitions_scored_by_rmsle_and_kappa_and_of_images_are_entered(tmp_path: Path) -> None:
    from agent_k.media import missing_extra

    need_tool(missing_extra("image"))
    fake = FakeKaggle(
        LocalPlatform(tmp_path / "kaggle-side"),
        ("house-prices", "essay-scoring", "leaf-images", "leaves-untested"),
        archives={"house-prices": _house_prices(), "essay-scoring": _essays(),
                  "leaf-images": _leaf_images(test_images=True), "leaves-untested": _leaf_images(test_images=False)},
        metrics={
            "house-prices": "Root Mean Squared Logarithmic Error",
            "essay-scoring": "Quadratic Weighted Kappa",
            "leaf-images": "Categorization Accuracy",
            "leaves-untested": "Categorization Accuracy",
        },
    )  # fmt: skip

    async def scenario(url: str) -> None:
        async with httpx.AsyncClient() as http:
            kaggle = _adapter(fake, url, http, tmp_path / "cache")
            listed = {c.id: c.metric for c in await kaggle.list_competitions()}
            assert listed == {"house-prices": "rmsle", "essay-scoring": "qwk", "leaf-images": "accuracy",
                              "leaves-untested": "accuracy"}  # fmt: skip

            houses = await kaggle.get_competition("house-prices")
            assert (houses.metric, houses.task, houses.target, houses.id_column) == (
                "rmsle", TaskType.regression, "SalePrice", "Id"
            )  # fmt: skip
            essays = await kaggle.get_competition("essay-scoring")
            assert (essays.metric, essays.task, essays.target, essays.classes) == (
                "qwk", TaskType.multiclass, "score", ["1", "2", "3", "4", "5", "6"]
            )  # fmt: skip
            paths = await kaggle.download_data("essay-scoring", tmp_path / "essays")
            assert {p.name for p in paths} >= {"train.csv", "test.csv", "sample_submission.csv"}

            leaves = await kaggle.get_competition("leaf-images")
            assert leaves.media is not None and leaves.media.kind == "image" and leaves.classes == ["elm", "oak"]
            paths = await kaggle.download_data("leaf-images", tmp_path / "leaves")
            assert len(list((tmp_path / "leaves" / "media").rglob("*.jpg"))) == 40 and len(paths) == 6

            with pytest.raises(UnsupportedCompetition) as refused:  # no test images: nothing to predict from
                await kaggle.get_competition("leaves-untested")
            message = str(refused.value)
            assert "\n" not in message and "30 image files (.jpg)" in message and "test image files" in message
            assert not (tmp_path / "cache" / "leaves-untested").exists()

    with serving(fake.app()) as port:
        asyncio.run(scenario(f"http://127.0.0.1:{port}"))
