"""End to end through the real `agent-k` executable: the JSON contract, input errors, and crash recovery
with a real `kill -9` of the mission process (on SQLite and on PostgreSQL)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_k.mission.phases import Phase
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox.identity import sandbox_identity
from agent_k.store.repository import Store
from tests.conftest import AGENT_K, CliResult, run_cli

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


def _standing_by_hand(board_file: Path, score: float, maximize: bool) -> tuple[int, int, float, str | None]:
    """Rank, teams, percentile and medal of `score` among the board file's teams, as MLE-bench's `rank_score`
    counts them (Kaggle's thresholds for fewer than 100 teams; ties in the submission's favour)."""
    teams = json.loads(board_file.read_text())["teams"]
    others = sorted((float(t["private_score"]) for t in teams), reverse=maximize)
    better = sum(1 for s in others if (s > score if maximize else s < score))
    assert len(others) < 100, "the built-in boards are small"
    medal = None
    for name, share in (("bronze", 0.4), ("silver", 0.2), ("gold", 0.1)):
        threshold = others[max(1, int(len(others) * share)) - 1]
        if (score >= threshold) if maximize else (score <= threshold):
            medal = name
    rank = better + 1
    return rank, len(others) + 1, round(100 * (len(others) + 1 - rank) / len(others), 2), medal


class _Candidates:
    """The accounts every candidate under a process ran as, seen in /proc while it runs: the sandbox's supervisor
    and the candidates it forks (`agent_k/sandbox/_supervise.py`)."""

    def __init__(self, root: int) -> None:
        self.root, self.uids, self._stop = root, set[int](), threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            parents: dict[int, int] = {}
            for entry in Path("/proc").iterdir():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    if entry.name.isdigit():
                        parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            below, grew = {self.root}, True
            while grew:
                more = {pid for pid, parent in parents.items() if parent in below} - below
                below, grew = below | more, bool(more)
            for pid in below - {self.root}:
                with contextlib.suppress(OSError):
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    if any(a.endswith(b"supervise.py") for a in argv[1:3]):  # the supervisor, or a candidate it forked
                        status = Path(f"/proc/{pid}/status").read_text()
                        self.uids.add(int(next(x for x in status.splitlines() if x.startswith("Uid:")).split()[1]))
            time.sleep(0.02)

    def stop(self) -> set[int]:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.uids


def _first_run(args: list[str], env: dict[str, str]) -> tuple[CliResult, set[int]]:
    """The CLI as on a machine without bubblewrap under umask 027: PATH holds only the environment's own folder."""
    process = subprocess.Popen(
        ["/bin/sh", "-c", 'umask 027 && exec "$0" "$@"', AGENT_K, *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**env, "PATH": str(Path(AGENT_K).parent)},
    )  # fmt: skip
    watched = _Candidates(process.pid)
    stdout, stderr = process.communicate(timeout=300)
    return CliResult(process.returncode, stdout, stderr), watched.stop()


@pytest.mark.slow
def test_the_first_run_without_bubblewrap_under_umask_027_reports_each_missions_own_place(home: Path) -> None:
    """The README's run command on a fresh machine: no bwrap on PATH, the CLI's umask 027 (as root too: the basic
    sandbox builds its root for the sandbox user). The JSON contract, `missions show`, the report and the solution
    run alone; each mission's rank, percentile and medal are its own submission's place on the board file, and a
    second, worse mission in the same home reports its own, lower place, not the team's best."""
    assert shutil.which("bwrap", path=str(Path(AGENT_K).parent)) is None
    env = {**os.environ}
    args = ["run", "--competition", "penguins", "--time-budget", "10", "--json", "--stop-early"]
    result, uids = _first_run([*args, "--mission-id", "e2e-1"], env)
    assert result.returncode == 0, result.stderr[-3000:]
    report = _last_json_line(result.stdout)
    assert report.keys() >= CONTRACT_KEYS
    assert report["status"] == "succeeded" and report["competition"] == "penguins"
    for key in ("cv_score", "public_score", "private_score", "percentile"):
        assert isinstance(report[key], float), key
    assert report["leakage_suspects"] == []
    assert Path(str(report["submission_path"])).exists() and Path(str(report["solution_path"])).exists()
    assert float(str(report["elapsed_s"])) <= 10 * 1.1
    identity = sandbox_identity()
    assert uids == {identity.uid if identity else os.getuid()}, "every candidate ran as the sandbox user"

    board = home / "competitions" / "penguins" / "private" / "leaderboard.json"
    own = _standing_by_hand(board, float(str(report["private_score"])), maximize=True)
    assert (report["rank"], report["teams"], report["percentile"], report["medal"]) == own

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
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert standalone.returncode == 0, standalone.stderr

    # No time for a model: the training prior, whose place is its own, below the first mission's.
    worse, _ = _first_run(["run", "--competition", "penguins", "--time-budget", "2", "--json"], env)
    assert worse.returncode == 0, worse.stderr[-3000:]
    prior = _last_json_line(worse.stdout)
    assert "the training prior" in str(prior["notes"]), prior  # for want of time before a model, or at the hard stop
    place = _standing_by_hand(board, float(str(prior["private_score"])), maximize=True)
    assert (prior["rank"], prior["teams"], prior["percentile"], prior["medal"]) == place
    assert int(str(prior["rank"])) > int(str(report["rank"])) and prior["medal"] is None
    listed = run_cli("competitions", "show", "penguins", env={"COLUMNS": "200"}).stdout
    assert "agent-k (the team's best public submission of 2)" in listed


def _wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_kill_9_in_evolution_and_crashes_around_the_submit_resume_to_one_submission(
    home: Path, database_url: str
) -> None:
    """One mission killed with -9 after its first generation, then twice inside Submission (just before the submit
    call, then just after it): every resume goes on from the last checkpoint, no candidate is evaluated twice, and
    the platform gets exactly one submission, which the last resume adopts."""
    store = Store.open(database_url)
    process = subprocess.Popen(
        [AGENT_K, "run", "--competition", "penguins", "--time-budget", "20", "--mission-id", "killed", "--stop-early"],
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

    crashed = run_cli("resume", "killed", env={"AGENT_K_FAILPOINTS": "submission.before_submit"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]
    assert _platform_submissions(home, "penguins") == []
    crashed = run_cli("resume", "killed", env={"AGENT_K_FAILPOINTS": "submission.after_submit"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]
    assert len(_platform_submissions(home, "penguins")) == 1

    resumed = run_cli("resume", "killed", "--json")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = _last_json_line(resumed.stdout)
    assert report["status"] == "succeeded" and isinstance(report["private_score"], float)
    submissions = _platform_submissions(home, "penguins")
    assert len(submissions) == 1
    created = [json.loads(e.payload) for e in store.events_after("killed") if e.type == "submission.created"]
    assert created == [
        {
            "type": "submission.created",
            "submission_id": submissions[0].id,  # type: ignore[attr-defined]
            "idempotency_key": created[0]["idempotency_key"],
            "adopted": True,
        }
    ]

    after = store.snapshots("killed")
    succeeded = Counter(s.node_kind for s in after if s.status == "succeeded")
    assert succeeded["DiscoveryNode"] == succeeded["ResearchNode"] == succeeded["PrototypeNode"] == 1
    assert succeeded["SubmissionNode"] == 1 and Counter(s.node_kind for s in after)["DiscoveryNode"] == 1
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
