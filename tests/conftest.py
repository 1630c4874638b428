"""Shared fixtures: an isolated AGENT_K_HOME per test, and a real database (SQLite, or PostgreSQL when
AGENT_K_TEST_POSTGRES_URL names a server)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agent_k.config import OPENMP_SPIN, Settings
from agent_k.mission.contract import PhaseContract
from agent_k.mission.nodes import PhaseNode
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from tests.support import finished

for _name, _value in OPENMP_SPIN.items():  # the boards these processes build, as the CLI builds them
    os.environ.setdefault(_name, _value)
# Missions here count their search converged at its first flat generation, not its sixth: what a test checks comes
# before the plateau, and `--stop-early` then ends it sooner (tests of convergence itself pass the default).
os.environ.setdefault("AGENT_K_PATIENCE", "1")
# A mission these processes start evaluates one candidate at a time: two test processes already keep the two cores
# busy, so a second evaluation per mission only contends with the other process's work (and starts a second warm
# worker). Tests of parallel evaluation name their own count.
os.environ.setdefault("AGENT_K_WORKERS", "1")
pytest_plugins = ["tests.support.browser"]  # the `browser` fixture of the dashboard's tests

POSTGRES_ENV = "AGENT_K_TEST_POSTGRES_URL"
REQUIRE_TOOLS_ENV = "AGENT_K_TEST_REQUIRE_TOOLS"
"""CI sets it: a test whose system tool (bwrap, chromium) is missing fails there instead of skipping."""
CACHED_COMPETITIONS = ("penguins", "wine", "titanic", "diabetes", "digits")
AGENT_K = str(Path(sys.executable).parent / "agent-k")


def _run_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The folder every test process of this run shares (pytest-xdist's workers each have one below it)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start the shared finished mission as soon as a test that reads it is collected, so it runs beside the first
    tests (every process collects; the first to get there starts it)."""
    if any(finished.FIXTURE in getattr(item, "fixturenames", ()) for item in items):
        workerinput = getattr(config, "workerinput", None)
        worker_id = workerinput["workerid"] if workerinput else "master"
        factory = config._tmp_path_factory  # type: ignore[attr-defined]  # what the tmp_path_factory fixture returns
        finished.start(_run_root(factory, worker_id), AGENT_K)


@pytest.fixture(scope="session")
def finished_mission(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> finished.FinishedMission:
    """A real 45 s penguins mission that has ended, shared by the run (`tests/support/finished.py`)."""
    return finished.finished(_run_root(tmp_path_factory, worker_id))


@pytest.fixture(scope="session")
def competition_cache(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """Built-in competitions materialised once per run (materialising trains the reference models). pytest-xdist's
    workers share one folder; the platform's lock lets one build each competition while the other uses it, and
    each worker starts at a different one so that they build side by side."""
    root = _run_root(tmp_path_factory, worker_id) / "competition-cache"
    start = int(worker_id.removeprefix("gw")) % len(CACHED_COMPETITIONS) if worker_id.startswith("gw") else 0
    platform = LocalPlatform(root)
    for competition in CACHED_COMPETITIONS[start:] + CACHED_COMPETITIONS[:start]:
        platform.ensure(competition)
    return root


@pytest.fixture(autouse=True)
def no_kaggle_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The developer's own Kaggle account is never used by a test: no KAGGLE_* variables, an empty config dir."""
    for name in ("KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "kaggle-config"
    config.mkdir()
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(config))
    return config


@pytest.fixture
def home(tmp_path: Path, competition_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh AGENT_K_HOME with the cached competitions copied in (so submissions stay per test)."""
    home = tmp_path / "home"
    for competition in CACHED_COMPETITIONS:
        shutil.copytree(competition_cache / competition, home / "competitions" / competition)
    monkeypatch.setenv("AGENT_K_HOME", str(home))
    monkeypatch.delenv("AGENT_K_DATABASE_URL", raising=False)
    return home


def _postgres_url() -> str:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"PostgreSQL tests need {POSTGRES_ENV} (e.g. postgresql+psycopg://postgres@127.0.0.1:5432/test)")
    return url


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A brand-new PostgreSQL database for one test, dropped afterwards. Unreachable server = error, not skip."""
    admin_url = make_url(_postgres_url()).set(drivername="postgresql+psycopg")
    name = f"agentk_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    sqlite = f"sqlite:///{home / 'agent_k.db'}"
    url = sqlite if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    monkeypatch.setenv("AGENT_K_DATABASE_URL", url)
    return url


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    store = Store.open(database_url)
    yield store
    store.close()


@pytest.fixture
def settings(home: Path, database_url: str) -> Settings:
    return Settings(home=home, database_url=database_url, workers=2)


def need_tool(problem: str | None) -> None:
    """Skip (or, in CI, fail) a test whose system tool cannot run here; `problem` says why, or is None."""
    if problem is None:
        return
    if os.environ.get(REQUIRE_TOOLS_ENV):
        pytest.fail(f"{REQUIRE_TOOLS_ENV} is set but {problem}")
    pytest.skip(problem)


@pytest.fixture(scope="session")
def media_models(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The image network's export and librosa's compiled kernels, made once per run and shared by the workers."""
    return _run_root(tmp_path_factory, worker_id) / "media-models"


@pytest.fixture
def media_home(home: Path, media_models: Path) -> Path:
    """`home`, for media competitions: the media extra is installed (else skip; in CI, fail) and the models'
    caches are shared with the other tests."""
    from agent_k.media import missing_extra

    need_tool(missing_extra("image") or missing_extra("audio"))
    media_models.mkdir(parents=True, exist_ok=True)
    (home / "models").symlink_to(media_models, target_is_directory=True)
    return home


@pytest.fixture(params=["bwrap", "basic"])
def sandbox_kind(request: pytest.FixtureRequest) -> str:
    """Each sandbox in turn; bubblewrap only where it can run."""
    if request.param == "bwrap":
        from agent_k.sandbox import bwrap_problem

        need_tool(bwrap_problem())
    return str(request.param)


def processes_with(token: str) -> list[int]:
    """Host pids of live (non-zombie) processes whose command line holds `token` (sandboxed ones included:
    their working folders are not the host's, their command lines are)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            holds = token in (proc / "cmdline").read_bytes().decode(errors="replace")
            if holds and (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def wait_until_gone(token: str, seconds: float = 5.0) -> list[int]:
    """Wait for every process holding `token` to die (an orphan lingers until init reaps it); those left."""
    import time

    deadline = time.monotonic() + seconds
    while (alive := processes_with(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, timeout: float = 300, env: dict[str, str] | None = None) -> CliResult:
    """Run the real `agent-k` console script in a child process."""
    completed = subprocess.run(
        [AGENT_K, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)


def contract_for(*nodes: type[PhaseNode]) -> PhaseContract:
    """A phase contract declaring exactly the transitions of these stand-in nodes (the first is the entry), with
    the mission's budget shares: what a test graph of its own phases runs under."""
    from agent_k.mission.contract import MISSION_CONTRACT, PhaseSpec
    from agent_k.mission.graph import END, successors

    phase_of = {node.get_node_id(): node.phase.value for node in nodes}
    specs = tuple(
        PhaseSpec(
            name=node.phase.value,
            next=tuple("end" if s == END else phase_of[s] for s in sorted(successors(node))),
            deadline=MISSION_CONTRACT.phase(node.phase.value).deadline,
        )
        for node in nodes
    )
    return PhaseContract(initial=nodes[0].phase.value, phases=specs)
