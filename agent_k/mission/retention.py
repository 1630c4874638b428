"""Retention: a finished mission's folder and snapshots only grow; `collect` removes what no one needs again.

Kept, always: the mission's row, result and events (its page and `missions show` stay whole), its data and
features, `solution.py`, `submission.csv` and the report, the snapshot each phase began from plus the last (so it
can still be forked at any phase and resumed), and the files of its best candidates and of the candidates those
snapshots and the submission name (a kept blend's members too). Removed: the other candidates'
folders, the downloaded archives, the intermediate snapshots. A fork holds its own links to what it took, so
collecting its parent takes nothing from it (docs/architecture.md, "Retention").
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from agent_k.config import RetentionPolicy, Settings
from agent_k.mission.state import MissionState
from agent_k.store.models import CandidateRow, MissionRow, SnapshotRow, utcnow
from agent_k.store.repository import Store
from agent_k.store.retention import drop_snapshots, finished_before
from agent_k.store.status import CandidateStatus

DOWNLOADS = "downloads"


@dataclass(frozen=True)
class Collected:
    """What collecting one mission did (or, on a dry run, would do)."""

    mission_id: str
    bytes_before: int
    bytes_freed: int
    """Bytes no other mission shares (a fork's links keep a file alive: those are not counted)."""
    candidates: int
    candidates_removed: int
    snapshots_removed: int


def collect(
    store: Store, settings: Settings, policy: RetentionPolicy, *, now: datetime | None = None, dry_run: bool = False
) -> list[Collected]:
    """Collect every mission that ended more than `policy.days` ago."""
    cutoff = (now or utcnow()) - timedelta(days=policy.days)
    return [collect_one(store, settings, row, policy.best, dry_run=dry_run) for row in finished_before(store, cutoff)]


def collect_one(store: Store, settings: Settings, row: MissionRow, best: int, *, dry_run: bool) -> Collected:
    folder = settings.missions_dir / row.id
    snapshots = store.snapshots(row.id)
    candidates = store.candidates(row.id)
    keep_seqs = _kept_snapshots(snapshots)
    keep = _kept_candidates(row, [s for s in snapshots if s.seq in keep_seqs], candidates, best)
    removed = [path for path in _children(folder / "candidates") if path.name not in keep]
    doomed = removed + [path for path in (folder / DOWNLOADS,) if path.is_dir()]
    before, freed = _bytes(folder), sum(_bytes(path, alone=True) for path in doomed)
    dropped: int | None = len(snapshots) - len(keep_seqs)
    if not dry_run:
        dropped = drop_snapshots(store, row.id, keep_seqs)
        if dropped is None:  # resumed meanwhile: left whole
            return Collected(row.id, before, 0, len(candidates), 0, 0)
        for path in doomed:
            shutil.rmtree(path, ignore_errors=True)
    return Collected(row.id, before, freed, len(candidates), len(removed), dropped or 0)


def _kept_candidates(row: MissionRow, snapshots: list[SnapshotRow], rows: list[CandidateRow], best: int) -> set[str]:
    states = [MissionState.model_validate_json(s.state_json) for s in snapshots]
    final = json.loads(row.result or "{}").get("state")
    if isinstance(final, dict):
        states.append(MissionState.model_validate(final))
    named = {s.evolution_state.best_candidate_key for s in states} - {None}
    competition = next((s.selected_competition for s in reversed(states) if s.selected_competition), None)
    scored = [r for r in rows if r.status == CandidateStatus.succeeded and r.cv_mean is not None]
    if competition is not None:
        scored = competition.scored_by.ranked(scored, lambda r: r.cv_mean)
    keep = {r.key for r in scored[:best]} | {key for key in named if key}
    by_key = {r.key: r for r in rows}
    for key in list(keep):  # a blend is rebuilt from its members' predictions
        recipe = json.loads(by_key[key].recipe) if key in by_key else {}
        if isinstance(recipe, dict) and "members" in recipe:
            keep |= set(json.loads(by_key[key].parents))
    return keep


def _kept_snapshots(snapshots: list[SnapshotRow]) -> set[int]:
    """The first snapshot of each step kind (where each phase began: a fork starts there) and the last."""
    first: dict[str, int] = {}
    for snapshot in snapshots:
        first.setdefault(snapshot.node_kind, snapshot.seq)
    return set(first.values()) | ({snapshots[-1].seq} if snapshots else set())


def _children(folder: Path) -> Iterator[Path]:
    return (child for child in folder.iterdir() if child.is_dir()) if folder.is_dir() else iter(())


def _bytes(path: Path, *, alone: bool = False) -> int:
    """Bytes of the files under `path`, each inode once; with `alone`, only files no other link keeps."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            info = (Path(root) / name).lstat()
            if (info.st_dev, info.st_ino) in seen or (alone and info.st_nlink > 1):
                continue
            seen.add((info.st_dev, info.st_ino))
            total += info.st_size
    return total
