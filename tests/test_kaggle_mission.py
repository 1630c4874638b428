"""Missions on the Kaggle platform through the real CLI, against the fake Kaggle server: exactly one submission
across `kill -9` before and after the submit call, the daily quota, and no credentials anywhere they should not be."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_k.config import Settings
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from tests.conftest import run_cli
from tests.support.fake_kaggle import FakeKaggle
from tests.support.local_server import serving

SIGKILL_EXIT = -9


@pytest.fixture
def fake(competition_cache: Path, tmp_path: Path) -> FakeKaggle:
    root = tmp_path / "kaggle-side"
    shutil.copytree(competition_cache / "penguins", root / "penguins")
    return FakeKaggle(LocalPlatform(root), ("penguins",), pending_polls=1)


@pytest.fixture
def kaggle(fake: FakeKaggle, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKaggle]:
    with serving(fake.app()) as port:
        monkeypatch.setenv("KAGGLE_USERNAME", fake.username)
        monkeypatch.setenv("KAGGLE_KEY", fake.key)
        monkeypatch.setenv("AGENT_K_KAGGLE_API_URL", f"http://127.0.0.1:{port}")
        yield fake


def test_without_credentials_nothing_is_written(home: Path, no_kaggle_credentials: Path) -> None:
    result = run_cli("run", "--platform", "kaggle", "--competition", "titanic", "--mission-id", "no-creds")
    assert result.returncode == 2
    assert "Kaggle credentials missing: set KAGGLE_API_TOKEN" in result.stderr
    assert str(no_kaggle_credentials / "kaggle.json") in result.stderr.replace("\n", "")
    assert not (home / "agent_k.db").exists() and not (home / "missions").exists()


def test_the_api_refuses_a_kaggle_mission_without_credentials(home: Path, no_kaggle_credentials: Path) -> None:
    import httpx

    from agent_k.api.app import create_app

    settings = Settings(home=home)
    with serving(create_app(settings)) as port:
        response = httpx.post(
            f"http://127.0.0.1:{port}/missions", json={"competition": "titanic", "platform": "kaggle"}
        )
    assert response.status_code == 422
    assert "Kaggle credentials missing" in response.json()["detail"]
    store = Store.open(settings.resolved_database_url)
    assert store.list_missions(limit=10) == []
    store.close()


def test_competitions_can_be_searched_on_kaggle(home: Path, kaggle: FakeKaggle) -> None:
    listed = run_cli("competitions", "list", "--platform", "kaggle", "--search", "pengu")
    assert listed.returncode == 0, listed.stderr
    assert "penguins" in listed.stdout and "accuracy" in listed.stdout

    kaggle.fail("ListCompetitions", 401)
    refused = run_cli("competitions", "list", "--platform", "kaggle")
    assert refused.returncode == 1
    assert "Kaggle rejected the credentials from environment (HTTP 401)" in refused.stderr
    assert kaggle.key not in refused.stderr + refused.stdout


def _ours(fake: FakeKaggle) -> list[dict[str, object]]:
    return [s for s in fake.submissions if "AGENT-K mission" in str(s["description"])]


@pytest.mark.slow
def test_a_kaggle_mission_submits_exactly_once_through_crashes_and_the_quota(home: Path, kaggle: FakeKaggle) -> None:
    for n in range(4):  # earlier submissions today: one of Kaggle's five daily slots is left
        kaggle.seed_submission("penguins", f"manual try {n}")
    base = ["--platform", "kaggle", "--competition", "penguins", "--time-budget", "15", "--mission-id", "kg"]
    base.append("--stop-early")

    crashed = run_cli("run", *base, env={"AGENT_K_FAILPOINTS": "submission.before_submit"})
    assert crashed.returncode == SIGKILL_EXIT, crashed.stderr[-2000:]
    assert _ours(kaggle) == []

    kaggle.seed_submission("penguins", "someone used the last slot")
    blocked = run_cli("resume", "kg", "--json")
    assert blocked.returncode == 1
    report = json.loads(blocked.stdout.strip().splitlines()[-1])
    assert report["error"] == "submission_quota_exhausted" and _ours(kaggle) == []
    shown = json.loads(run_cli("missions", "show", "kg", "--json").stdout)
    assert "used up (5 of 5 today); it resets at" in shown["result"]["detail"]

    for seeded in kaggle.submissions:  # a day passes
        seeded["date"] = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    crashed = run_cli("resume", "kg", env={"AGENT_K_FAILPOINTS": "submission.after_submit"})
    assert crashed.returncode == SIGKILL_EXIT
    assert len(_ours(kaggle)) == 1

    finished = run_cli("resume", "kg", "--json")
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads(finished.stdout.strip().splitlines()[-1])
    (submitted,) = _ours(kaggle)
    assert report["status"] == "succeeded"
    assert report["public_score"] == pytest.approx(float(str(submitted["publicScore"])))
    assert report["private_score"] is None  # a live competition shows public scores only
    assert isinstance(report["rank"], int) and report["teams"] >= report["rank"]

    store = Store.open(f"sqlite:///{home / 'agent_k.db'}")
    created = [json.loads(e.payload) for e in store.events_after("kg") if e.type == "submission.created"]
    store.close()
    assert [(c["submission_id"], c["adopted"]) for c in created] == [(str(submitted["ref"]), True)]
    assert kaggle.storage_authorization and set(kaggle.storage_authorization) == {None}

    outputs = crashed.stdout + crashed.stderr + finished.stdout + finished.stderr + blocked.stdout + blocked.stderr
    assert kaggle.key not in outputs
    leaks = [p for p in home.rglob("*") if p.is_file() and kaggle.key.encode() in p.read_bytes()]
    assert leaks == []


def test_a_worker_without_credentials_leaves_a_kaggle_mission_queued(settings: Settings, store: Store) -> None:
    from agent_k.competition import Criteria
    from agent_k.mission.launch import MissionSpec
    from agent_k.mission.runner import MissionRunner
    from agent_k.worker import Worker

    MissionRunner(settings, store).create(
        MissionSpec(mission_id="queued-kaggle", criteria=Criteria(competition="titanic"), platform="kaggle"), queue=True
    )
    worker = Worker(settings, store)
    assert asyncio.run(worker.run_one()) == "queued-kaggle"
    row = store.get_mission("queued-kaggle")
    assert row is not None and (row.status, row.lease_owner) == ("queued", None)  # for a worker that has them
    assert store.last_snapshot("queued-kaggle") is None
    assert asyncio.run(worker.run_one()) is None  # not claimed again by this one


@pytest.mark.slow
def test_a_kaggle_mission_with_an_api_token(
    home: Path, fake: FakeKaggle, no_kaggle_credentials: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token in `access_token`, as Kaggle's settings page tells users to save it; our submissions carry no
    team name, so the rank needs the account's name from `IntrospectToken`; the upload is cut off once."""
    token_file = no_kaggle_credentials / "access_token"
    token_file.write_text(fake.token + "\n")
    token_file.chmod(0o600)
    fake.report_team, fake.interrupt_uploads = False, 1
    with serving(fake.app()) as port:
        monkeypatch.setenv("AGENT_K_KAGGLE_API_URL", f"http://127.0.0.1:{port}")
        result = run_cli(
            "run", "--platform", "kaggle", "--competition", "penguins", "--time-budget", "15", "--json", "--stop-early"
        )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    (submitted,) = _ours(fake)
    assert report["status"] == "succeeded" and "teamName" not in submitted
    assert report["public_score"] == pytest.approx(float(str(submitted["publicScore"])))
    assert isinstance(report["rank"], int) and report["teams"] >= report["rank"]
    assert fake.auth_kinds == {"bearer"} and 308 in fake.upload_statuses
    assert set(fake.storage_authorization) == {None}
    assert fake.token not in result.stdout + result.stderr
    leaks = [p for p in home.rglob("*") if p.is_file() and fake.token.encode() in p.read_bytes()]
    assert leaks == []
