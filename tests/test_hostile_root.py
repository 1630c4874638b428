"""Hostile candidates against a runner that is root (CI runs as root; so do most containers and VMs).

One runner process (`tests.support.hostile_runner`) evaluates each attack of `tests.support.hostile_attacks` as the
Evolver's script, in bubblewrap, then six 131,072-column headers with an honest script queued behind them. Each attack
must be refused or contained, the runner's peak memory must stay under 500 MB, the honest script must start
within 5 s of its turn, and the runner must return.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_k.sandbox import Job, Limits, bwrap_problem, run_sandboxed
from agent_k.sandbox.identity import sandbox_identity
from tests.conftest import REQUIRE_TOOLS_ENV, need_tool, processes_with

pytestmark = pytest.mark.slow
CORE_PATTERN = Path("/proc/sys/kernel/core_pattern")
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def attacked(competition_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if os.geteuid() != 0:
        if os.environ.get(REQUIRE_TOOLS_ENV):
            pytest.fail(f"{REQUIRE_TOOLS_ENV} is set, and these attacks must run as root (CI is root)")
        pytest.skip("these attacks need a root runner (CI runs them as root)")
    need_tool(bwrap_problem())
    root = tmp_path_factory.mktemp("hostile-root")
    home, work = root / "home", root / "work"
    shutil.copytree(competition_cache / "penguins", home / "competitions" / "penguins")
    pattern = CORE_PATTERN.read_text()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.support.hostile_runner", str(home), str(work)],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        after = CORE_PATTERN.read_text()
    finally:
        CORE_PATTERN.write_text(pattern)  # put the machine back, should an attack ever get through
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    outcome.update(core_pattern_before=pattern, core_pattern_after=after, home=str(home), work=str(work))
    yield outcome


def _attack(attacked: dict[str, Any], name: str) -> dict[str, Any]:
    run: dict[str, Any] = attacked["attacks"][name]
    assert len((run["error"] or "").splitlines()) <= 1, run["error"]
    return run


def test_proc_sys_is_read_only_to_a_candidate(attacked: dict[str, Any]) -> None:
    run = _attack(attacked, "proc-sys")
    assert run["status"] == "succeeded", run["error"]
    assert "written" not in run["found"]["sysctls"].values(), run["found"]


def test_the_core_pattern_chain_gets_nowhere(attacked: dict[str, Any]) -> None:
    """The escape of the issue: find the fold's host path, plant a helper through a host file, point
    kernel.core_pattern at it, crash. No host path shows, nothing of the host is writable, the pattern stays."""
    run = _attack(attacked, "core-pattern")
    assert run["status"] == "succeeded", run["error"]
    assert attacked["core_pattern_after"] == attacked["core_pattern_before"]
    assert run["found"]["core_pattern"] != "set"
    host_paths = (attacked["home"], attacked["work"], str(Path(attacked["work"]).parent))
    leaked = [root for root in run["found"]["mount_roots"] if any(path in root for path in host_paths)]
    assert leaked == [], "the mount table names where the fold lives on the host"
    assert run["cv"] is not None and run["cv"] < 0.6, "a constant prediction scored as if it knew the labels"


def test_writes_through_proc_1_fd_reach_no_host_file(attacked: dict[str, Any]) -> None:
    """512 MiB at each of the sandbox's init's descriptors: they are pipes of the runner's (never host files),
    which the sandbox user cannot even reopen."""
    run = _attack(attacked, "proc-1-fd")
    assert run["status"] == "succeeded", run["error"]
    assert run["found"]["wrote"] == {"0": 0, "1": 0, "2": 0}
    folder = Path(attacked["work"]) / "proc-1-fd"
    on_disk = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    assert on_disk < 5 * 2**20, f"{on_disk:,} bytes reached the host's disk"


def test_ptrace_and_the_kernels_other_doors_are_refused(attacked: dict[str, Any]) -> None:
    run = _attack(attacked, "ptrace")
    assert run["status"] == "succeeded", run["error"]
    calls = run["found"]["calls"]
    assert calls["ptrace attach own child"] == "EPERM", "the seccomp filter refuses even what ptrace rules allow"
    assert {name for name, said in calls.items() if said == "allowed"} == set(), calls


def test_a_huge_header_is_refused_before_it_is_parsed(attacked: dict[str, Any]) -> None:
    run = _attack(attacked, "header-flood")
    refused = ("columns must be ['id', 'species']", "bytes, over its")  # by its header, or by its size already
    assert run["status"] == "failed" and any(reason in run["error"] for reason in refused), run["error"]
    assert run["seconds"] < 20


def test_a_forged_sparse_tar_claiming_a_petabyte_costs_nothing(attacked: dict[str, Any]) -> None:
    """Forged members (its logs and its predictions, each a sparse file claiming a petabyte) sent down any pipe of
    its parent or of the sandbox's pid 1 (both the supervisor, which is not dumpable), and nothing else left to
    stream: no descriptor of the supervisor can be reopened, and the way out would take frames, not tar."""
    run = _attack(attacked, "sparse-tar")
    assert run["seconds"] < 20, "the forged stream stalled the read"
    assert run["found"]["sent"] == [], "a pipe of the runner's was reopened from inside"
    assert run["status"] == "failed" and "predictions.csv was not written" in run["error"], run["error"]


@pytest.mark.parametrize("attack", ["mem-forge", "mem-forge-pax"])
def test_the_process_holding_the_outputs_cannot_be_written_through_proc_mem(
    attacked: dict[str, Any], attack: str
) -> None:
    """seccomp refuses ptrace, but `/proc/<pid>/mem` needs only the ptrace access check: the candidate writes code
    into its parent, which would then send forged outputs (another class for every row; with `-pax`, a pax header
    that costs Python 3.11's tarfile minutes). The parent is our supervisor, not dumpable: the write is refused,
    and what is scored is what the candidate wrote, as for an honest constant (before: the forgery was scored, and
    the pax header pinned a reader for its whole 60 s)."""
    run = _attack(attacked, attack)
    assert run["found"]["mem"] != "written", run["found"]
    assert run["status"] == "succeeded", run["error"]
    assert run["cv"] == attacked["queue"]["runs"]["honest"]["cv"], "a forged file was scored"
    assert run["seconds"] < 20


def test_a_400_mb_prediction_file_is_refused_by_its_size(attacked: dict[str, Any]) -> None:
    run = _attack(attacked, "big-predictions")
    assert run["status"] == "failed" and "over its" in run["error"], run["error"]
    assert run["seconds"] < 30


def test_the_runner_stays_small_and_returns(attacked: dict[str, Any]) -> None:
    assert attacked["peak_rss_mb"] < 500, attacked["peak_rss_mb"]
    assert attacked["returned_after_s"] < 240


def test_an_honest_candidate_behind_six_hostile_ones_starts_within_5_s_of_its_turn(attacked: dict[str, Any]) -> None:
    queue = attacked["queue"]
    hostile = [run for name, run in queue["runs"].items() if name != "honest"]
    assert all(run["status"] == "failed" for run in hostile)
    honest = queue["runs"]["honest"]
    assert honest["status"] == "succeeded", honest["error"]
    assert queue["honest_started"] - queue["honest_turn"] < 5.0


def test_a_candidate_and_its_sandbox_run_as_the_unprivileged_sandbox_user(
    attacked: dict[str, Any], tmp_path: Path
) -> None:
    """Seen from the host, while it runs: every process of the candidate, bubblewrap's own included, belongs to
    the sandbox user, never to root (only our launcher is root, until it drops privileges and execs bwrap)."""
    identity = sandbox_identity()
    assert identity is not None and identity.uid != 0
    token = uuid.uuid4().hex
    script, data = tmp_path / "sleep.py", tmp_path / "data"
    script.write_text("import time\ntime.sleep(2)\n")
    data.mkdir()
    job = Job(script=script, data=data, args=(token,))

    async def watch() -> set[int]:
        run = asyncio.ensure_future(run_sandboxed(job, workdir=tmp_path / "w", limits=Limits(timeout_s=30)))
        owners: set[int] = set()
        while not run.done():
            for pid in processes_with(token):
                with contextlib.suppress(OSError):
                    # Counted only when the command line holds the token and is not our launcher's both before and
                    # after the status is read: the launcher (root, in the moment before it drops to the sandbox
                    # user) only ever turns into bubblewrap, and a pid reused meanwhile holds no token.
                    before = Path(f"/proc/{pid}/cmdline").read_bytes()
                    status = Path(f"/proc/{pid}/status").read_text()
                    after = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if all(token.encode() in line and b"_launch.py" not in line for line in (before, after)):
                        owners.add(int(status.split("Uid:")[1].split()[0]))
            await asyncio.sleep(0.05)
        assert (await run).ok
        return owners

    assert asyncio.run(watch()) == {identity.uid}
