"""Error strategies per phase (docs/architecture.md, "Modes and phase contracts"), on real missions: `retry`
(Submission's default) outlasts a platform that fails once, `ignore` (Evolution's default) ends the search with what it
has when a generation's executor is lost, and `raise` (set in the settings) fails the mission there instead. Every
failure is in `phase_history`. (`repair` is tests/test_amphiflow.py.)"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.runner import MissionRunner
from agent_k.mission.state import MissionResult
from agent_k.ml.evaluate import Evaluation, EvaluationRequest
from agent_k.ml.executors import Evaluator, LocalEvaluator
from agent_k.platforms.base import PlatformError, Submission
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store


class FlakyPlatform(LocalPlatform):
    """The local platform behind a link that drops the first upload, as a remote platform's can."""

    failures_left = 1

    async def submit(self, competition_id: str, file: Path, message: str, idempotency_key: str) -> Submission:
        if self.failures_left:
            self.failures_left -= 1
            raise PlatformError("upload interrupted: connection reset by peer")
        return await super().submit(competition_id, file, message, idempotency_key)


@dataclass
class LostExecutor(LocalEvaluator):
    """Evaluates like the local executor until its cluster is lost, after `healthy` candidates."""

    healthy: int = 0

    async def evaluate(self, request: EvaluationRequest) -> Evaluation:
        if self.healthy <= 0:
            raise ConnectionError("the executor's scheduler is gone")
        self.healthy -= 1
        return await super().evaluate(request)


@pytest.fixture
def sqlite(home: Path, tmp_path: Path) -> tuple[Path, str, Store]:
    url = f"sqlite:///{tmp_path / 'strategies.db'}"
    return home, url, Store.open(url)


def _mission(
    settings: Settings,
    store: Store,
    mission_id: str,
    platform: LocalPlatform,
    evaluator: Evaluator | None = None,
    *,
    time_budget: int = 40,
) -> MissionResult:
    """A penguins mission. Its default budget leaves Evolution time to start a generation on a loaded machine, where
    the executor's loss must show."""
    runner = MissionRunner(settings, store, platform, evaluator=evaluator)
    spec = MissionSpec(
        mission_id=mission_id, criteria=Criteria(competition="penguins"), time_budget=time_budget, stop_early=True
    )
    runner.create(spec)
    try:
        return asyncio.run(runner.run(mission_id))
    finally:
        runner.evaluator.close()


def _history(store: Store, mission_id: str, phase: str) -> dict[str, Any]:
    state = json.loads(store.get_mission(mission_id).result or "{}")["state"]  # type: ignore[union-attr]
    return next(r for r in state["phase_history"] if r["phase"] == phase)


def _failures(store: Store, mission_id: str) -> list[dict[str, Any]]:
    return [json.loads(e.payload) for e in store.events_after(mission_id) if e.type == "step.failed"]


def test_retry_outlasts_a_platform_that_fails_once(sqlite: tuple[Path, str, Store]) -> None:
    home, url, store = sqlite
    settings = Settings(home=home, database_url=url, workers=2)
    platform = FlakyPlatform(settings.competitions_dir)
    result = _mission(settings, store, "retried", platform, time_budget=20)
    assert result.success and result.private_score is not None, result.detail
    [failure] = _failures(store, "retried")
    assert failure["step"] == "upload" and failure["strategy"] == "retry" and failure["attempt"] == 1
    assert "connection reset" in failure["error"]
    submission = _history(store, "retried", "submission")
    assert submission["strategy"] == "retry" and len(submission["step_failures"]) == 1
    assert len(asyncio.run(platform.list_submissions("penguins"))) == 1, "submitted exactly once"


def test_ignore_ends_the_search_with_what_it_has(sqlite: tuple[Path, str, Store]) -> None:
    home, url, store = sqlite
    settings = Settings(home=home, database_url=url, workers=2)
    platform = LocalPlatform(settings.competitions_dir)
    lost = LostExecutor(parallelism=2, healthy=2)  # the baseline's two candidates, then the cluster is gone
    result = _mission(settings, store, "ignored", platform, lost)
    assert result.success and result.private_score is not None, result.detail
    [failure] = _failures(store, "ignored")
    assert failure["step"] == "generation" and failure["strategy"] == "ignore"
    assert "ConnectionError: the executor's scheduler is gone" in failure["error"]
    state = json.loads(store.get_mission("ignored").result or "{}")["state"]  # type: ignore[union-attr]
    assert state["evolution_state"]["stop_reason"] == "generation_failed"
    assert _history(store, "ignored", "evolution")["strategy"] == "ignore"


def test_raise_fails_the_mission_with_the_steps_reason(sqlite: tuple[Path, str, Store]) -> None:
    home, url, store = sqlite
    settings = Settings(home=home, database_url=url, workers=2, error_strategies={"evolution": "raise"})
    platform = LocalPlatform(settings.competitions_dir)
    result = _mission(settings, store, "raised", platform, LostExecutor(parallelism=2, healthy=2))
    assert not result.success and result.error == "generation_failed"
    assert "the executor's scheduler is gone" in (result.detail or "")
    evolution = _history(store, "raised", "evolution")
    assert evolution["strategy"] == "raise" and evolution["outcome"] == "failed"
    assert asyncio.run(platform.list_submissions("penguins")) == []
