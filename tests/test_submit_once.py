"""Exactly once per mission (docs/architecture.md, "Durable runner"): two missions that write the same file each submit
their own, on the local platform and on Kaggle (the fake server), on SQLite and on PostgreSQL; when Kaggle's own daily
quota refuses one, the mission says so and keeps its file. (Re-runs adopting their own submission after a `kill -9`:
`test_cli_e2e.py` and `test_kaggle_mission.py`.)"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.candidates import candidate_dir
from agent_k.mission.launch import MissionSpec
from agent_k.mission.nodes import PhaseNode, SubmissionNode
from agent_k.mission.nodes.base import PhaseContext
from agent_k.mission.phases import Mode, Phase
from agent_k.mission.runner import MissionRunner
from agent_k.mission.state import MissionResult
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from tests.conftest import contract_for
from tests.support.fake_kaggle import FakeKaggle
from tests.support.local_server import serving

KAGGLE_DAILY_LIMIT = 2


@dataclass
class SameFile(PhaseNode):
    """Discovery to Evolution in one step: fetch penguins and archive one candidate whose submission is the
    same file in every mission (every penguin an Adelie)."""

    phase = Phase.discovery

    async def run(self, ctx: PhaseContext) -> SubmissionNode:
        state, deps = ctx.state, ctx.deps
        state.selected_competition = await deps.platform.get_competition("penguins")
        data = deps.mission_dir / "data"
        await deps.platform.download_data("penguins", data)
        state.data_dir = str(data)
        folder = candidate_dir(deps.mission_dir, "same")
        folder.mkdir(parents=True, exist_ok=True)
        test = pd.read_csv(data / "test.csv")
        pd.DataFrame({"id": test["id"], "species": "Adelie"}).to_csv(folder / "submission.csv", index=False)
        (folder / "solution.py").write_text("# every penguin is an Adelie\n")
        state.evolution_state.best_candidate_key, state.evolution_state.best_score = "same", 0.44
        return SubmissionNode()


@pytest.fixture(params=["local", "kaggle"])
def platform(
    request: pytest.FixtureRequest, competition_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeKaggle | None]:
    """The platform the missions submit to: the local one (None), or a fake Kaggle with a daily limit of 2."""
    if request.param == "local":
        yield None
        return
    root = tmp_path / "kaggle-side"
    shutil.copytree(competition_cache / "penguins", root / "penguins")
    fake = FakeKaggle(LocalPlatform(root), ("penguins",), pending_polls=0, daily_limit=KAGGLE_DAILY_LIMIT)
    with serving(fake.app()) as port:
        monkeypatch.setenv("KAGGLE_USERNAME", fake.username)
        monkeypatch.setenv("KAGGLE_KEY", fake.key)
        monkeypatch.setenv("AGENT_K_KAGGLE_API_URL", f"http://127.0.0.1:{port}")
        yield fake


def _mission(settings: Settings, store: Store, mission_id: str, platform: str) -> MissionResult:
    runner = MissionRunner(
        Settings(home=settings.home, database_url=settings.database_url),
        store,
        phases=(SameFile, SubmissionNode),
        contract=contract_for(SameFile, SubmissionNode),
    )
    spec = MissionSpec(
        mission_id=mission_id, criteria=Criteria(competition="penguins"), mode=Mode.workflow, platform=platform
    )
    runner.create(spec)
    return asyncio.run(runner.run(mission_id))


def test_two_missions_with_the_same_file_each_submit_their_own(
    settings: Settings, store: Store, platform: FakeKaggle | None
) -> None:
    name = "local" if platform is None else "kaggle"
    results = {m: _mission(settings, store, m, name) for m in ("first", "second")}
    for mission_id, result in results.items():
        assert result.success, (mission_id, result.error, result.detail)
    files = {m: (settings.missions_dir / m / "submission.csv").read_bytes() for m in results}
    assert files["first"] == files["second"], "the test's premise: both missions submit the very same file"

    created = {
        m: [json.loads(e.payload) for e in store.events_after(m) if e.type == "submission.created"] for m in results
    }
    assert [c["adopted"] for m in results for c in created[m]] == [False, False]
    ids = {m: created[m][0]["submission_id"] for m in results}
    assert ids["first"] != ids["second"]
    assert all(created[m][0]["idempotency_key"].startswith(f"{m}:") for m in results)

    if platform is None:
        on_platform = asyncio.run(LocalPlatform(settings.competitions_dir).list_submissions("penguins"))
        described = {s.id: s.description for s in on_platform}
    else:
        described = {str(s["ref"]): str(s["description"]) for s in platform.submissions}
    assert set(ids.values()) <= set(described)
    for mission_id, submission_id in ids.items():
        assert f"AGENT-K mission {mission_id} [key:{mission_id}:" in described[submission_id]
    assert results["first"].public_score == results["second"].public_score is not None

    third = _mission(settings, store, "third", name)
    if platform is None:
        assert third.success, third.detail  # the local platform has no daily quota
        return
    assert third.error == "submission_quota_exhausted", third.detail
    assert third.detail is not None and third.detail.startswith(
        "Kaggle refused the submission for its daily quota: Your team has used its daily Submission allowance (2)"
    )
    assert f"the file is ready at {settings.missions_dir / 'third' / 'submission.csv'}" in third.detail
    assert len([s for s in platform.submissions if "AGENT-K mission" in str(s["description"])]) == 2
