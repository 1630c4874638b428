"""End to end through the real `agent-k` executable: the JSON contract, input errors, and crash recovery
with a real `kill -9` of the mission process (on SQLite and on PostgreSQL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_k.mission.phases import Phase
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from tests.conftest import AGENT_K, run_cli

ALL_PHASES = [phase.value for phase in Phase]
CONTRACT_KEYS = {
    "mission_id",
    "status",
    "competition",
    "cv_score",
    "public_score",
    "private_score",
    "rank",
    "percentile",
    "medal",
    "submission_path",
    "solution_path",
    "leakage_suspects",
    "elapsed_s",
}


def _last_json_line(stdout: str) -> dict[str, object]:
    return json.loads(stdout.strip().splitlines()[-1])


def _platform_submissions(home: Path, competition: str) -> list[object]:
    import asyncio

    return list(asyncio.run(LocalPlatform(home / "competitions").list_submissions(competition)))


def test_the_cli_and_the_vocabulary_import_nothing_heavy() -> None:
    heavy = ("sklearn", "pandas", "numpy", "lightgbm", "pydantic", "pydantic_ai", "sqlalchemy", "httpx")
    for module in ("agent_k.cli", "agent_k.competition"):
        code = f"import sys, {module}; print([m for m in {heavy!r} if m in sys.modules])"
        completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert completed.stdout.strip() == "[]", module


def test_an_unknown_competition_exits_2_with_one_line_and_writes_nothing(home: Path) -> None:
    result = run_cli("run", "--competition", "pengiuns", "--time-budget", "20")
    assert result.returncode == 2
    assert result.stderr.strip() == "error: unknown competition 'pengiuns'; did you mean: penguins?"
    assert not (home / "agent_k.db").exists() and not (home / "missions").exists()


def test_a_bad_option_is_a_usage_error(home: Path) -> None:
    assert run_cli("run", "--competition", "penguins", "--time-budget", "-5").returncode == 2
    assert run_cli("run", "--competition", "penguins", "--mission-id", "bad id!").returncode == 2
    assert run_cli("resume", "no-such-mission").returncode == 2


@pytest.mark.slow
def test_run_prints_the_json_contract_and_missions_show_it(home: Path) -> None:
    """On the default store (SQLite under AGENT_K_HOME); the crash tests below run the CLI on both backends."""
    result = run_cli(
        "run", "--competition", "penguins", "--time-budget", "15", "--json", "--mission-id", "e2e-1", "--stop-early"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = _last_json_line(result.stdout)
    assert report.keys() >= CONTRACT_KEYS
    assert report["status"] == "succeeded" and report["competition"] == "penguins"
    for key in ("cv_score", "public_score", "private_score", "percentile"):
        assert isinstance(report[key], float), key
    assert isinstance(report["rank"], int) and report["leakage_suspects"] == []
    assert Path(str(report["submission_path"])).exists() and Path(str(report["solution_path"])).exists()
    assert float(str(report["elapsed_s"])) <= 15 * 1.1

    shown = run_cli("missions", "show", "e2e-1", "--json")
    document = json.loads(shown.stdout)
    assert document["status"] == "succeeded"
    assert [r["phase"] for r in document["phase_history"]] == ALL_PHASES
    assert document["state"]["final_submission_id"] == document["result"]["submission_id"]
    assert "e2e-1" in run_cli("missions", "list").stdout
    page = home / "missions" / "e2e-1" / "report.html"
    assert f"report: {page}" in result.stderr.replace("\n", "") and page.is_file()
    assert '"candidate.evaluated"' in page.read_text() and "<script src=" not in page.read_text()
    assert f"report: {page}" in run_cli("missions", "show", "e2e-1").stdout.replace("\n", "")
    missing = run_cli("report", "no-such-mission")
    assert missing.returncode == 2 and "no mission 'no-such-mission'" in missing.stderr

    # The solution runs as it is, outside AGENT-K.
    data = home / "missions" / "e2e-1" / "data"
    standalone = subprocess.run(
        [sys.executable, str(report["solution_path"]), "--data", str(data), "--out", str(home / "again.csv")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert standalone.returncode == 0, standalone.stderr


def _wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_kill_9_during_evolution_then_resume(home: Path, database_url: str) -> None:
    store = Store.open(database_url)
    process = subprocess.Popen(
        [AGENT_K, "run", "--competition", "penguins", "--time-budget", "30", "--mission-id", "killed", "--stop-early"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    try:

        def one_generation_done() -> bool:
            steps = store.snapshots("killed")
            return any(s.node_kind == "EvolutionNode" and s.status == "succeeded" for s in steps)

        _wait_for(one_generation_done, 90, "a finished evolution generation")
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()

    row = store.get_mission("killed")
    assert row is not None and row.status == "running"
    before = store.snapshots("killed")
    generations_done = sum(1 for s in before if s.node_kind == "EvolutionNode" and s.status == "succeeded")
    candidates_before = {c.key: c.cv_mean for c in store.candidates("killed")}
    assert before[-1].status == "running"

    resumed = run_cli("resume", "killed", "--json")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert _last_json_line(resumed.stdout)["status"] == "succeeded"

    after = store.snapshots("killed")
    succeeded = Counter(s.node_kind for s in after if s.status == "succeeded")
    assert succeeded["DiscoveryNode"] == succeeded["ResearchNode"] == succeeded["PrototypeNode"] == 1
    assert Counter(s.node_kind for s in after)["DiscoveryNode"] == 1
    assert [s.status for s in after if s.seq == before[-1].seq] == ["interrupted"]
    first_resumed = next(s for s in after if s.seq > before[-1].seq)
    assert json.loads(first_resumed.state_json)["evolution_state"]["generation"] == generations_done

    candidates_after = {c.key: c.cv_mean for c in store.candidates("killed")}
    assert candidates_before.items() <= candidates_after.items()
    evaluated = Counter(
        json.loads(e.payload)["candidate_key"] for e in store.events_after("killed") if e.type == "candidate.evaluated"
    )
    assert max(evaluated.values()) == 1, "no candidate was evaluated twice"
    singles = [c for c in store.candidates("killed") if c.status == "succeeded" and '"members"' not in c.recipe]
    assert all(c.log_loss is not None and c.log_loss > 0 for c in singles if c.fidelity == 1.0)
    best_key = json.loads(after[-1].state_json)["evolution_state"]["best_candidate_key"]
    if best_key in {c.key for c in singles}:  # else a blend improved on them
        best = max(singles, key=lambda c: (c.cv_mean or 0.0, -(c.log_loss or 0.0)))
        assert best_key == best.key, "the best CV, and between equal ones the lowest log loss"

    document = json.loads(run_cli("missions", "show", "killed", "--json").stdout)
    assert [r["phase"] for r in document["phase_history"]] == ALL_PHASES
    store.close()


@pytest.mark.slow
def test_a_crash_inside_submission_submits_exactly_once(home: Path, database_url: str) -> None:
    """Killed just before the submit call, then just after it: one submission, adopted by the last resume."""
    crashed = run_cli(
        "run",
        "--competition",
        "penguins",
        "--time-budget",
        "15",
        "--stop-early",
        "--mission-id",
        "sub-crash",
        env={"AGENT_K_FAILPOINTS": "submission.before_submit"},
    )
    assert crashed.returncode == -signal.SIGKILL
    assert _platform_submissions(home, "penguins") == []

    crashed = run_cli("resume", "sub-crash", env={"AGENT_K_FAILPOINTS": "submission.after_submit"})
    assert crashed.returncode == -signal.SIGKILL
    assert len(_platform_submissions(home, "penguins")) == 1

    resumed = run_cli("resume", "sub-crash", "--json")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = _last_json_line(resumed.stdout)
    submissions = _platform_submissions(home, "penguins")
    assert len(submissions) == 1
    assert report["status"] == "succeeded" and isinstance(report["private_score"], float)

    store = Store.open(database_url)
    created = [json.loads(e.payload) for e in store.events_after("sub-crash") if e.type == "submission.created"]
    assert created == [
        {
            "type": "submission.created",
            "submission_id": submissions[0].id,  # type: ignore[attr-defined]
            "idempotency_key": created[0]["idempotency_key"],
            "adopted": True,
        }
    ]
    store.close()
