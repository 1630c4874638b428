"""The candidate sandbox (docs/architecture.md, "Sandbox"), in bubblewrap and in the basic isolation: timeouts kill
everything, the environment is scrubbed, there is no network, memory and tasks are capped, outputs come back safely. The
hostile candidates of `test_hostile.py` go further."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.runner import MissionRunner
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import (
    Job,
    Limits,
    SandboxResult,
    bwrap,
    bwrap_problem,
    network_isolation_available,
    run_sandboxed,
)
from agent_k.sandbox.basic import PRIVATE
from agent_k.sandbox.bwrap import WORK
from agent_k.sandbox.cgroups import available
from agent_k.sandbox.reader import TableShape, UntrustedOutput, check_shape
from agent_k.sandbox.run import LOG_TAIL_BYTES
from agent_k.store.repository import Store
from tests.conftest import need_tool, wait_until_gone
from tests.support.sandboxed import run_script


def test_a_hanging_candidate_and_its_children_are_killed(tmp_path: Path, sandbox_kind: str) -> None:
    token = uuid.uuid4().hex
    started = time.monotonic()
    result, _ = run_script(
        tmp_path,
        f"""
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{token}"], start_new_session=True)
        time.sleep(600)
        """,
        sandbox_kind,
        timeout_s=3,
    )
    assert result.timed_out and not result.ok and result.failure_reason() == "timed out"
    assert time.monotonic() - started < 15
    assert wait_until_gone(token) == []


def test_the_environment_is_scrubbed_and_the_data_is_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox_kind: str
) -> None:
    monkeypatch.setenv("KAGGLE_KEY", "super-secret-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    result, workdir = run_script(
        tmp_path,
        """
        import argparse, os
        parser = argparse.ArgumentParser()
        parser.add_argument("--data")
        data = parser.parse_args().data
        print(sorted(os.environ))
        print("HOME", os.environ["HOME"], "CWD", os.getcwd())
        import getpass
        print("USER", getpass.getuser())
        print("DATA", open(os.path.join(data, "train.csv")).read().splitlines()[0])
        try:
            open(os.path.join(data, "train.csv"), "a").write("1,1\\n")
            print("DATA WRITABLE")
        except OSError:
            print("DATA READ-ONLY")
        """,
        sandbox_kind,
    )
    assert result.ok, result.stderr_tail
    assert "KAGGLE_KEY" not in result.stdout_tail and "OPENAI_API_KEY" not in result.stdout_tail
    assert "secret" not in result.stdout_tail
    contained = sandbox_kind == "bwrap" or os.geteuid() == 0  # as root, the basic sandbox has a root of its own
    home = WORK if contained else str(workdir / PRIVATE)
    assert f"HOME {home} CWD {home}" in result.stdout_tail
    assert "USER sandbox" in result.stdout_tail, "getpass answers without a passwd entry (torch asks it)"
    assert "DATA id,y" in result.stdout_tail
    if contained:  # a non-root basic sandbox leaves file permissions to the data's owner
        assert "DATA READ-ONLY" in result.stdout_tail
        assert (tmp_path / "data" / "train.csv").read_text() == "id,y\n1,2\n"


def test_candidates_have_no_network(tmp_path: Path, sandbox_kind: str) -> None:
    if sandbox_kind == "basic" and not network_isolation_available():
        pytest.skip("unshare --net is not permitted on this machine (the basic sandbox then has network)")
    result, _ = run_script(
        tmp_path,
        """
        import socket
        s = socket.socket()
        s.settimeout(2)
        s.connect(("127.0.0.1", 5432))
        """,
        sandbox_kind,
    )
    assert not result.ok
    assert "ConnectionRefusedError" in result.stderr_tail or "unreachable" in result.stderr_tail.lower()


def test_memory_limit_turns_a_hog_into_a_failure(tmp_path: Path, sandbox_kind: str) -> None:
    result, _ = run_script(tmp_path, "block = bytearray(2 * 1024 ** 3)\n", sandbox_kind, memory_mb=512)
    assert not result.ok
    assert "out of memory" in result.failure_reason()  # the cgroup's kill, or a failed allocation


def test_memory_is_capped_across_all_of_a_candidates_processes(tmp_path: Path, sandbox_kind: str) -> None:
    """Four processes of 200 MB each stay under a 512 MB address-space limit apiece, but not under the 512 MB
    the candidate has in all: the memory cgroup kills one of them."""
    if "memory" not in available():
        pytest.skip("no writable memory cgroup here: each process is capped by RLIMIT_AS only")
    result, _ = run_script(
        tmp_path,
        """
        import multiprocessing, time
        def hold():
            block = bytearray(200 * 1024 ** 2)
            block[::4096] = b"x" * len(block[::4096])
            time.sleep(5)
        workers = [multiprocessing.Process(target=hold) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert all(w.exitcode == 0 for w in workers), [w.exitcode for w in workers]
        """,
        sandbox_kind,
        memory_mb=512,
    )
    assert not result.ok
    assert result.out_of_memory and result.failure_reason() == "killed: out of memory (over its memory cap)"


def test_a_crash_reports_its_error_line(tmp_path: Path, sandbox_kind: str) -> None:
    result, _ = run_script(tmp_path, "raise ValueError('bad feature')\n", sandbox_kind)
    assert result.returncode == 1
    assert result.failure_reason() == "exit code 1: ValueError: bad feature"


def test_a_fork_bomb_is_capped_and_all_its_processes_die(tmp_path: Path, sandbox_kind: str) -> None:
    """Bounded at 600 children, so even a broken guard could not take the machine down."""
    token = uuid.uuid4().hex
    result, _ = run_script(
        tmp_path,
        f"""
        import os, sys, time
        made = 0
        try:
            for _ in range(600):
                if os.fork() == 0:
                    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "{token}"])
                made += 1
        finally:
            print("made", made, flush=True)
        """,
        sandbox_kind,
        processes=64,
        timeout_s=20,
    )
    assert not result.ok
    assert "BlockingIOError" in result.stderr_tail or "Resource temporarily unavailable" in result.stderr_tail
    made = int(result.stdout_tail.split("made")[-1])
    assert 0 < made < 64
    assert wait_until_gone(token) == []


def test_outputs_come_back_and_links_and_fifos_do_not(tmp_path: Path, sandbox_kind: str) -> None:
    result, workdir = run_script(
        tmp_path,
        """
        import os
        open("good.csv", "w").write("a,b\\n1,2\\n")
        os.symlink("/etc/passwd", "link.csv")
        os.mkfifo("fifo.csv")
        """,
        sandbox_kind,
        outputs=("good.csv", "link.csv", "fifo.csv", "missing.csv"),
    )
    assert result.ok, result.stderr_tail
    assert (workdir / "good.csv").read_text() == "a,b\n1,2\n"
    assert result.left_out["link.csv"] == "link.csv is a link" and not (workdir / "link.csv").exists()
    assert result.left_out["fifo.csv"] == "fifo.csv is a FIFO" and not (workdir / "fifo.csv").exists()
    assert "missing.csv" not in result.left_out and not (workdir / "missing.csv").exists()


def test_a_header_is_checked_from_a_bounded_prefix_before_any_parsing(tmp_path: Path) -> None:
    """A 256 KB header of 131,072 names (the parse that took 165 s of CPU) is refused after reading a few
    hundred bytes; a quoted or BOM-prefixed header of the right columns passes."""
    shape = TableShape(("id", "species"), max_rows=10, max_bytes=10 * 2**20)
    flood = tmp_path / "flood.csv"
    flood.write_text(",".join("x" for _ in range(131072)) + "\n1\n")
    with pytest.raises(UntrustedOutput, match="its header is longer than the columns"):
        check_shape(flood, shape)
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("id,species,extra\n1,a,b\n")
    with pytest.raises(UntrustedOutput, match=r"columns must be \['id', 'species'\], got \['id', 'species', 'extra'\]"):
        check_shape(wrong, shape)
    fine = tmp_path / "fine.csv"
    fine.write_bytes('\ufeff"id","species"\r\n1,Adelie\r\n'.encode())
    check_shape(fine, shape)
    with pytest.raises(UntrustedOutput, match="more than 10 rows of its columns take"):
        check_shape(fine, TableShape(("id", "species"), max_rows=10, max_bytes=8))


def test_a_flood_of_output_keeps_the_last_lines_and_the_error(tmp_path: Path, sandbox_kind: str) -> None:
    """200 MB on stdout and 50 MB on stderr, then a crash: the logs keep their last 64 KB, the error says why,
    and nothing of the flood reached a disk."""
    result, workdir = run_script(
        tmp_path,
        """
        import sys
        line = "x" * 1023 + "\\n"
        for _ in range(200 * 1024):
            sys.stdout.write(line)
        for _ in range(50 * 1024):
            sys.stderr.write(line)
        print("the last stdout line", flush=True)
        raise RuntimeError("the real reason")
        """,
        sandbox_kind,
        disk_mb=64,
    )
    assert result.failure_reason() == "exit code 1: RuntimeError: the real reason"
    assert result.stdout_tail.endswith("the last stdout line\n")
    assert (workdir / "stdout.log").stat().st_size == LOG_TAIL_BYTES
    assert (workdir / "stderr.log").read_text().rstrip().endswith("RuntimeError: the real reason")


def test_parallel_candidates_each_keep_their_own_limits(tmp_path: Path, sandbox_kind: str) -> None:
    """Candidates started together must not disturb each other's setup (each gets its own cgroups)."""
    script, data = tmp_path / "quick.py", tmp_path / "data"
    script.write_text("print('ok')\n")
    data.mkdir()

    async def many() -> list[SandboxResult]:
        limits = Limits(timeout_s=30, sandbox=sandbox_kind)  # type: ignore[arg-type]
        runs = [run_sandboxed(Job(script, data), workdir=tmp_path / f"w{i}", limits=limits) for i in range(8)]
        return list(await asyncio.gather(*runs))

    results = asyncio.run(many())
    failures = [r.failure_reason() for r in results if not r.ok]
    assert failures == []


def test_a_workflow_mission_succeeds_in_the_basic_sandbox_and_says_why(home: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'basic.db'}"
    settings = Settings(home=home, database_url=url, workers=2, sandbox="basic")
    store = Store.open(url)
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    spec = MissionSpec(mission_id="basic", criteria=Criteria(competition="penguins"), time_budget=12, stop_early=True)
    runner.create(spec)
    assert asyncio.run(runner.run("basic")).success
    warnings = [json.loads(e.payload)["message"] for e in store.events_after("basic") if e.type == "log"]
    assert any(
        w.startswith("candidates run in the basic sandbox, without bubblewrap (AGENT_K_SANDBOX=basic)")
        for w in warnings
    )
    store.close()


def test_a_candidates_processes_together_get_the_cores_it_was_given(tmp_path: Path, sandbox_kind: str) -> None:
    """Four spinning processes of a one-thread candidate share one core (its CPU cgroup), not the machine's:
    a fork bomb drove the load average to 60 for its whole timeout before."""
    if "cpu" not in available():
        need_tool("no writable cpu cgroup here: a candidate's CPU is capped only by RLIMIT_CPU")
    result, _ = run_script(
        tmp_path,
        """
        import multiprocessing, os, resource, time
        def spin(until):
            while time.monotonic() < until:
                pass
        until = time.monotonic() + 2.0
        started = time.monotonic()
        workers = [multiprocessing.Process(target=spin, args=(until,)) for _ in range(4)]
        for w in workers: w.start()
        for w in workers: w.join()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        print("CORES", (used.ru_utime + used.ru_stime) / (time.monotonic() - started))
        """,
        sandbox_kind,
        threads=1,
    )
    assert result.ok, result.stderr_tail
    cores = float(result.stdout_tail.split("CORES")[-1])
    assert cores < 1.15, f"its processes took {cores:.2f} cores"


def test_dev_is_read_only_and_dev_shm_is_small(tmp_path: Path, sandbox_kind: str) -> None:
    """Neither /dev nor /dev/shm is a way around the disk cap (both were unbounded tmpfs)."""
    if sandbox_kind == "basic" and os.geteuid() != 0:
        pytest.skip("a non-root basic sandbox has the host's /dev")
    result, _ = run_script(
        tmp_path,
        """
        import json
        written = {}
        for path in ("/dev/filler", "/dev/shm/filler"):
            total = 0
            try:
                with open(path, "wb") as out:
                    for _ in range(256):
                        out.write(b"x" * (1 << 20))
                        out.flush()
                        total += 1 << 20
            except OSError as exc:
                written[path] = (total, exc.errno)
            else:
                written[path] = (total, None)
        print("WRITTEN", json.dumps(written))
        """,
        sandbox_kind,
    )
    assert result.ok, result.stderr_tail
    written = json.loads(result.stdout_tail.split("WRITTEN")[-1])
    assert written["/dev/filler"] == [0, 30], "EROFS: /dev is read-only"
    assert written["/dev/shm/filler"][0] <= 64 * 2**20 and written["/dev/shm/filler"][1] == 28, "ENOSPC at 64 MiB"


@pytest.fixture
def flaky_bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """bubblewrap behind a wrapper that fails to start, as bwrap does on a busy machine ("Creating new namespace
    failed: Resource temporarily unavailable"), while the file it returns holds a number above 0 (one fewer each
    time). It stands in for the kernel's transient refusal; what is tested is what the runner does about it."""
    need_tool(bwrap_problem())
    real = shutil.which("bwrap")
    # Not under /tmp, which a root launcher covers with its staging; not under a private folder: the sandbox user
    # runs it.
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        root = Path(folder)
        root.chmod(0o755)
        failures, wrapper = root / "failures", root / "bwrap"
        failures.write_text("0")
        failures.chmod(0o666)
        wrapper.write_text(
            "#!/bin/sh\n"
            f'left=$(cat {failures}); if [ "$left" -gt 0 ]; then echo $((left - 1)) > {failures}; '
            'echo "bwrap: Creating new namespace failed: Resource temporarily unavailable" >&2; exit 1; fi\n'
            f'exec {real} "$@"\n'
        )
        wrapper.chmod(0o755)
        monkeypatch.setattr(bwrap, "BWRAP", str(wrapper))
        yield failures


def test_a_bubblewrap_that_fails_to_start_is_tried_again_per_candidate(tmp_path: Path, flaky_bwrap: Path) -> None:
    """Under `auto`: two failed starts, then bubblewrap on the third try; a candidate whose bubblewrap never
    starts runs in the basic sandbox (as the sandbox user when root), and the next one gets bubblewrap again
    (before: one failed start sent the whole mission to the basic sandbox, as root)."""
    flaky_bwrap.write_text("2")
    retried, _ = run_script(tmp_path / "a", "print('ran')", "auto")
    assert retried.ok and retried.sandbox == "bwrap" and flaky_bwrap.read_text().strip() == "0"
    flaky_bwrap.write_text("99")
    fell_back, _ = run_script(tmp_path / "b", "import os; print('uid', os.getuid())", "auto")
    assert fell_back.ok and fell_back.sandbox == "basic", fell_back.failure_reason()
    assert os.geteuid() != 0 or "uid 0" not in fell_back.stdout_tail
    flaky_bwrap.write_text("0")
    again, _ = run_script(tmp_path / "c", "print('ran')", "auto")
    assert again.ok and again.sandbox == "bwrap"
    flaky_bwrap.write_text("99")
    insisted, _ = run_script(tmp_path / "d", "print('ran')", "bwrap")
    assert not insisted.ok and insisted.failure_reason() == (
        "the bwrap sandbox did not start: bwrap: Creating new namespace failed: Resource temporarily unavailable"
    )
