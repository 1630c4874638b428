"""Untrusted text never becomes code, no state crosses from one candidate to the next, nothing runs as root.

Each test is an attack that went through before (a column name that ran its code in every candidate of a plain
workflow mission; a model's recipe whose parameter name rewrote the out-of-fold file and stayed in the warm
worker for the candidates after it; a job that changed what the next job imported; the basic sandbox running a
root runner's candidates as root), run through the real path: a mission, the warm pool, the sandbox.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.competition import Competition, Criteria, CVScheme
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest
from agent_k.ml.recipes import ModelFamily, Script
from agent_k.ml.requests import evaluate_solution
from agent_k.ml.search import DEFAULTS
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import UserTables
from agent_k.sandbox import Job, Limits, bwrap_problem
from agent_k.sandbox.identity import sandbox_identity
from agent_k.sandbox.warm import WarmPool
from agent_k.store.repository import Store
from tests.conftest import need_tool
from tests.support.hostile_evolver import hostile_evolver

MARKER = f"AGENT-K-INJECTED-{uuid.uuid4().hex[:8]}"
HOSTILE_COLUMN = f'user_k"""\n__import__("builtins").print("{MARKER}")\n"""'
POISON = textwrap.dedent("""
    import sys, pandas
    def _cheat(frame, path=None, *args, **kwargs):
        if "fold" in getattr(frame, "columns", ()):  # the out-of-fold file: put the true labels in
            data = sys.argv[sys.argv.index("--data") + 1]
            truth = pandas.read_csv(data + "/train.csv").set_index("id")["species"]
            labels = truth.loc[frame["id"]].to_numpy()
            for column in frame.columns[2:]:
                frame[column] = (labels == column).astype(float)
        return _cheat.original(frame, path, *args, **kwargs)
    _cheat.original = pandas.DataFrame.to_csv
    pandas.DataFrame.to_csv = _cheat
""")
HOSTILE_PARAM = f"max_bin=(exec({POISON!r}) or 255), min_split_gain"


def _settings(home: Path, tmp_path: Path, **options: object) -> Settings:
    url = f"sqlite:///{tmp_path / 'hostile.db'}"
    return Settings(home=home, database_url=url, workers=2, **options)  # type: ignore[arg-type]


def test_a_column_name_carrying_code_stays_a_name(home: Path, tmp_path: Path) -> None:
    """An entity column named to close the generated docstring and call print: in a plain workflow mission, no
    model involved, no candidate prints the marker (before: every candidate of the mission did)."""
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(60), 6)
    frame = pd.DataFrame({HOSTILE_COLUMN: users, "dose": rng.normal(size=len(users))})
    frame["label"] = np.where(rng.normal(size=60)[users] + frame["dose"] > 0, "yes", "no")
    platform = LocalPlatform(home / "competitions")
    platform.add("entities", UserTables(train=frame, targets=["label"]), metric="accuracy")
    settings = _settings(home, tmp_path)
    store = Store.open(settings.database_url)
    runner = MissionRunner(settings, store, platform)
    spec = MissionSpec(mission_id="columns", criteria=Criteria(competition="entities"), time_budget=15, stop_early=True)
    runner.create(spec)
    try:
        result = asyncio.run(runner.run("columns"))
        assert result.success, result.detail
        logs = [p for p in (home / "missions" / "columns").rglob("*.log")]
        assert logs, "candidates ran and left their logs"
        assert [p for p in logs if MARKER in p.read_text(errors="replace")] == []
        solution = ast.parse((home / "missions" / "columns" / "solution.py").read_text())
        assert "__import__" not in {getattr(node, "id", None) for node in ast.walk(solution)}
    finally:
        store.close()


def _injected_recipe(parent: str) -> dict[str, object]:
    """A LightGBM recipe with one more parameter, whose name is code that makes the out-of-fold file hold the
    true labels."""
    recipe = {"family": "lightgbm", "params": {**DEFAULTS[ModelFamily.lightgbm], HOSTILE_PARAM: 1}}
    return {"kind": "recipe", "parent": parent, "recipe": recipe, "rationale": "more bins"}


def test_a_recipe_carrying_code_is_refused_and_poisons_nothing(home: Path, tmp_path: Path) -> None:
    """The Evolver's recipe is checked against the search space before anything is rendered: the model is told,
    in one line, that LightGBM has no such parameter; no candidate holds it, and no score is the forged 1.0
    (before: it scored 1.0, and so did 7 later candidates of the warm worker it had patched)."""
    need_tool(bwrap_problem())
    seen: list[str] = []
    settings = _settings(home, tmp_path)
    store = Store.open(settings.database_url)
    runner = MissionRunner(
        settings, store, LocalPlatform(settings.competitions_dir), model=hostile_evolver(_injected_recipe, seen)
    )
    spec = MissionSpec(
        mission_id="recipes", criteria=Criteria(competition="penguins"), mode=Mode.auto, time_budget=30,
        model="function", stop_early=True,
    )  # fmt: skip
    runner.create(spec)
    try:
        result = asyncio.run(runner.run("recipes"))
        assert result.success, result.detail
        assert any("lightgbm has no parameter" in reason for reason in seen), seen
        assert all(len(reason.splitlines()) <= 3 for reason in seen)
        rows = store.candidates("recipes")
        assert [row.key for row in rows if "exec(" in row.recipe] == []
        scores = [row.cv_mean for row in rows if row.cv_mean is not None]
        assert scores and max(scores) < 0.999, "a candidate scored as if it knew the labels"
    finally:
        store.close()


def _in_turn(data: Path, jobs: list[tuple[Path, str]]) -> WarmPool:
    """Run each folder's `solution.py` in turn in one pool of one warm worker (a fresh worker only where the
    pool retires one), each job's named output kept; the pool, closed."""
    pool = WarmPool(1)

    async def in_turn() -> None:
        for folder, output in jobs:
            job = Job(script=folder / "solution.py", data=data, outputs={output: 65536})
            result = await pool.run(job, workdir=folder, limits=Limits(timeout_s=60))
            assert result.ok, result.stderr_tail

    try:
        asyncio.run(in_turn())
    finally:
        pool.close()
    return pool


def test_a_warm_job_changes_nothing_the_next_one_sees(home: Path, tmp_path: Path) -> None:
    """One job patches pandas, leaves a process, files in its working folder and in /dev/shm, and sets the
    process's state; the next job of the same worker finds none of it (before: jobs shared one interpreter)."""
    need_tool(bwrap_problem())
    data = home / "competitions" / "penguins" / "public"
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
    (first / "solution.py").write_text(
        "import os, subprocess, sys, pandas\n"
        "pandas.DataFrame.to_csv = lambda *a, **k: None\n"
        "sys.modules['json'] = None\n"
        "open('/sandbox/work/left-behind', 'w').write('x')\n"
        "open('/dev/shm/left-behind', 'w').write('x')\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
        "open('done.txt', 'w').write('patched')\n"
    )
    (second / "solution.py").write_text(
        "import json, os, pandas\n"
        "seen = {\n"
        "    'to_csv': pandas.DataFrame.to_csv.__qualname__,\n"
        "    'files': sorted(os.listdir('/sandbox/work')) + sorted(os.listdir('/dev/shm')),\n"
        "    'processes': sorted(p for p in os.listdir('/proc') if p.isdigit()),\n"
        "}\n"
        "open('seen.json', 'w').write(json.dumps(seen))\n"
    )
    pool = _in_turn(data, [(first, "done.txt"), (second, "seen.json")])
    assert pool.started == 1, "both jobs ran in one worker"
    seen = json.loads((second / "seen.json").read_text())
    assert seen["to_csv"] == "NDFrame.to_csv", "pandas as it ships, not the first job's patch"
    assert seen["files"] == ["job"], "only the job's own folder is there"
    assert len(seen["processes"]) == 2, "the worker's parent and this job: nothing left behind"


_KERNEL_STATE = """
import ctypes, json, os, platform, resource
libc = ctypes.CDLL(None, use_errno=True)
IOPRIO = {"x86_64": (251, 252), "aarch64": (30, 31)}.get(platform.machine(), (None, None))
"""
PROBE = (
    _KERNEL_STATE
    + """
def listed(kind):
    with open(f"/proc/sysvipc/{kind}") as rows:
        return rows.read().splitlines()[1:]
seen = {
    "limits": {n: resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")},
    "affinity": sorted(os.sched_getaffinity(0)),
    "nice": os.getpriority(os.PRIO_PROCESS, 0),
    "policy": os.sched_getscheduler(0),
    "io": libc.syscall(IOPRIO[1], 1, 0) if IOPRIO[1] else None,
    "sysv": {kind: listed(kind) for kind in ("shm", "msg", "sem")},
    "mqueue": libc.mq_open(b"/agent-k-left", os.O_RDONLY) >= 0,
    "files": sorted(os.listdir("/sandbox/work")) + sorted(os.listdir("/dev/shm")),
    "work": oct(os.stat("/sandbox/work").st_mode & 0o777),
    "writable": os.access("/sandbox/work", os.W_OK),
}
open("seen.json", "w").write(json.dumps(seen))
"""
)
ATTACK = (
    _KERNEL_STATE
    + """
done = {}
def attempt(name, act):
    try:
        result = act()
        if isinstance(result, int) and result < 0:
            raise OSError(ctypes.get_errno(), name)
        done[name] = "done"
    except OSError as exc:
        done[name] = str(exc)
CREATE = 0o1600
attempt("shm", lambda: libc.shmget(0x4B4B, 64 << 20, CREATE))
attempt("msg", lambda: libc.msgget(0x4B4C, CREATE))
attempt("sem", lambda: libc.semget(0x4B4D, 1, CREATE))
attempt("mqueue", lambda: libc.mq_open(b"/agent-k-left", os.O_CREAT | os.O_RDWR, 0o600, None))
attempt("nofile", lambda: resource.prlimit(1, resource.RLIMIT_NOFILE, (256, 256)))
attempt("fsize", lambda: resource.prlimit(1, resource.RLIMIT_FSIZE, (1 << 20, 1 << 20)))
attempt("affinity", lambda: os.sched_setaffinity(1, {min(os.sched_getaffinity(1))}))
attempt("nice", lambda: os.setpriority(os.PRIO_PROCESS, 1, 19))
attempt("idle", lambda: os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0)))
attempt("ionice", lambda: libc.syscall(IOPRIO[0], 1, 1, (3 << 13) | 7) if IOPRIO[0] else -1)
for folder in ("/sandbox/work/.cache/locked", "/dev/shm/locked"):
    os.makedirs(folder + "/inner")
    open(folder + "/inner/kept", "w").write("x")
    os.chmod(folder + "/inner", 0o500)
    os.chmod(folder, 0o500)
os.chmod("/sandbox/work", 0o555)
open("done.json", "w").write(json.dumps(done))
"""
)


def test_a_warm_job_leaves_no_kernel_state_to_the_next_one(home: Path, tmp_path: Path) -> None:
    """A job makes SysV IPC objects and a POSIX queue, changes its worker parent's limits, affinity, nice value,
    scheduling class and I/O priority, and leaves read-only folders and a read-only /sandbox/work: the next job
    sees what the first job of a fresh worker sees (before: it inherited all of it)."""
    need_tool(bwrap_problem())
    data = home / "competitions" / "penguins" / "public"
    jobs = []
    for name, script, output in (
        ("before", PROBE, "seen.json"),
        ("attack", ATTACK, "done.json"),
        ("after", PROBE, "seen.json"),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "solution.py").write_text(script)
        jobs.append((tmp_path / name, output))
    pool = _in_turn(data, jobs)
    done = json.loads((tmp_path / "attack" / "done.json").read_text())
    assert {done[name] for name in ("shm", "msg", "sem", "nofile", "nice", "idle")} == {"done"}, done
    assert done["mqueue"] != "done", "the filter refuses POSIX message queues"
    before, after = (json.loads((tmp_path / name / "seen.json").read_text()) for name in ("before", "after"))
    assert before["sysv"] == {"shm": [], "msg": [], "sem": []} and before["files"] == ["job"]
    assert after == before
    assert pool.started == 2, "the attacked worker was retired, and the next job got a fresh one"


def test_the_basic_sandbox_of_a_root_runner_runs_candidates_as_the_sandbox_user(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_kaggle_credentials: Path
) -> None:
    """Without bubblewrap, a root runner's candidate (here a model's script, explicitly allowed) runs as the
    sandbox user in a root of its own: it reads no hidden label, no secret, no credentials file (before: it ran
    as root and read the hidden solution and every secret-bearing variable)."""
    if os.geteuid() != 0:
        pytest.skip("a root runner's basic sandbox (CI runs as root)")
    monkeypatch.setenv("KAGGLE_KEY", secret := f"secret-{uuid.uuid4().hex}")
    credentials = no_kaggle_credentials / "kaggle.json"
    credentials.write_text(json.dumps({"username": "someone", "key": secret}))
    public = home / "competitions" / "penguins" / "public"
    hidden = public.parent / "private" / "solution.csv"
    data = CompetitionData.load(Competition.model_validate_json((public / "competition.json").read_text()), public)
    probe = textwrap.dedent(f"""
        import argparse, glob, json, os, sys
        import pandas as pd
        parser = argparse.ArgumentParser(); parser.add_argument("--data"); parser.add_argument("--out")
        args = parser.parse_args()
        readable = []
        for path in [{str(hidden)!r}, {str(credentials)!r}, *glob.glob("/proc/*/environ")]:
            try:
                readable.append(path + ":" + (str(os.listdir(path)) if os.path.isdir(path) else open(path).read()))
            except OSError:
                pass
        print("REPORT " + json.dumps({{"uid": os.getuid(), "readable": readable}}), flush=True)
        test = pd.read_csv(os.path.join(args.data, "test.csv"))
        pd.DataFrame({{"id": test["id"], "species": "Adelie"}}).to_csv(args.out, index=False)
    """)
    limits = Limits(timeout_s=60, sandbox="basic", allow_unsandboxed_code=True)
    evaluation = asyncio.run(
        evaluate_solution(EvaluationRequest(Script(source=probe, note="probe"), data,
                          CVScheme(kind="stratified_kfold", n_folds=3), tmp_path / "c", limits, folds=1))
    )  # fmt: skip
    assert evaluation.status == "succeeded", evaluation.error
    line = next(x for x in (tmp_path / "c" / "fold0" / "stdout.log").read_text().splitlines() if x.startswith("REPORT"))
    found = json.loads(line.removeprefix("REPORT "))
    identity = sandbox_identity()
    assert identity is not None and found["uid"] == identity.uid != 0
    assert not [entry for entry in found["readable"] if entry.startswith(str(hidden)) or secret in entry]
