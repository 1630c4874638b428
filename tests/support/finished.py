"""One real mission, run once per test run and shared by every test process: the tests that read what a finished
mission leaves (its archive, blends and pick, snapshots, events, folder) copy it into their own home and store
(`FinishedMission.copy_into`) instead of each running one. It starts in the background as soon as the tests that
need it are collected (`start`), so it runs while the first tests do."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from agent_k.store.repository import Store
from tests.support.homes import copy_mission

MISSION_ID = "finished"
COMPETITION = "penguins"
BUDGET_S = 45
"""A real mission's budget; it ends at convergence (`--stop-early`), with the few dozen candidates, the blends and
the pick a real mission's folder holds."""
FIXTURE = "finished_mission"


@dataclass(frozen=True)
class FinishedMission:
    home: Path
    mission_id: str = MISSION_ID
    competition: str = COMPETITION

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.home / 'agent_k.db'}"

    def copy_into(self, store: Store, missions_dir: Path, mission_id: str) -> None:
        """The mission as `mission_id` in `store` and `missions_dir`, rows and folder its own."""
        origin = Store.open(self.database_url)
        try:
            copy_mission(store, missions_dir, self.mission_id, mission_id, origin=(origin, self.home / "missions"))
        finally:
            origin.close()


def start(root: Path, agent_k: str) -> None:
    """Start the mission under `root` unless another test process already did (the first to make its folder)."""
    folder = root / "finished-mission"
    try:
        folder.mkdir()
    except FileExistsError:
        return
    env = {**os.environ, "AGENT_K_HOME": str(folder / "home")}
    env.pop("AGENT_K_DATABASE_URL", None)
    # A real mission's parallel evaluations and a search that runs on past its first plateau: what its folder holds
    # (the candidates retention collects) depends on them.
    env.pop("AGENT_K_WORKERS", None)
    env["AGENT_K_PATIENCE"] = "3"
    args = ["run", "--competition", COMPETITION, "--time-budget", str(BUDGET_S), "--mission-id", MISSION_ID,
            "--stop-early"]  # fmt: skip
    with (folder / "stderr").open("w") as log:
        subprocess.Popen(
            ["/bin/sh", "-c", '"$0" "$@"; echo $? > exit.partial && mv exit.partial exit', agent_k, *args],
            cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
        )  # fmt: skip


def finished(root: Path, timeout_s: float = 400) -> FinishedMission:
    """The mission once it has ended (it must have succeeded)."""
    folder = root / "finished-mission"
    deadline = time.monotonic() + timeout_s
    while not (folder / "exit").exists():
        assert folder.exists(), "the finished mission was never started: is its fixture named in the test?"
        assert time.monotonic() < deadline, f"the shared mission did not end within {timeout_s:.0f} s"
        time.sleep(0.2)
    code = (folder / "exit").read_text().strip()
    assert code == "0", f"the shared mission exited {code}: {(folder / 'stderr').read_text()[-2000:]}"
    return FinishedMission(folder / "home")
