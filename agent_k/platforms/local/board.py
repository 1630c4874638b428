"""A local competition's board file, `private/leaderboard.json`: its reference teams and the version of the
references that trained them, so that a board built by older references is known and rebuilt."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_k.platforms.base import LeaderboardEntry

BOARD_VERSION = 2
"""1 (a bare list): teams trained on at most 20,000 rows, no practitioner's entries; 2: every team on every
training row, the practitioner's entries, each team's build time."""


def write_board(path: Path, teams: list[dict[str, object]]) -> None:
    """Write the board in one step (a reader never sees half of it)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps({"version": BOARD_VERSION, "teams": teams}, indent=2))
    partial.replace(path)


def board_version(path: Path) -> int:
    document = json.loads(path.read_text())
    return int(document.get("version", 1)) if isinstance(document, dict) else 1


def read_board(path: Path) -> list[LeaderboardEntry]:
    document = json.loads(path.read_text())
    teams = document["teams"] if isinstance(document, dict) else document
    return [LeaderboardEntry.model_validate(team) for team in teams]
