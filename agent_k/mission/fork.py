"""Fork: a new mission that starts from another's snapshot at the start of a phase, with options changed.

The parent is untouched. The fork gets the parent's state as it was when that phase began, its own copy of the
parent's folder (hard links where the file system allows: from that phase on, a mission writes each of those
files once, or replaces it whole), and the parent's archive of candidates, so nothing the parent evaluated runs
again: a recipe already in the archive is taken from it (`evaluate_proposals`). Its first snapshot (seq 0,
`forked`) is that state; its first step is the phase it forked at (docs/architecture.md, "Fork and replay").
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError

from agent_k.config import Settings
from agent_k.events.models import MissionForked
from agent_k.mission.control import MissionError, MissionNotFound
from agent_k.mission.graph import graph_fingerprint
from agent_k.mission.launch import LaunchError, MissionSpec, check_webhook, new_mission_id, resolve_model
from agent_k.mission.nodes import PHASE_NODES
from agent_k.mission.options import LaunchOptions, first_error
from agent_k.mission.phases import Phase
from agent_k.mission.state import BudgetLedger, MissionState
from agent_k.mission.versions import code_version
from agent_k.store.lineage import create_fork
from agent_k.store.models import CandidateRow, MissionRow, SnapshotRow, utcnow
from agent_k.store.repository import Store
from agent_k.store.status import UNFINISHED, MissionStatus

MISSION_FILES = frozenset({"solution.py", "submission.csv", "report.html"})
"""The parent's own outcome: a fork makes its own."""
SAME_DATA_FROM = Phase.prototype
"""From this phase on a fork keeps the parent's data, split and findings, so all of the parent's candidates
hold for it too, not only those made before the fork point."""


class InvalidFork(MissionError):
    """The options asked for cannot be the fork's (an unknown option, a value it cannot take, a mode without a
    model, a webhook this process cannot sign): the request is wrong, not the parent's state."""


class ForkChanges(LaunchOptions):
    """The options a fork may change: any of a mission's; one left out (unset) keeps the parent's value."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def parse(cls, pairs: list[str]) -> ForkChanges:
        """`KEY=VALUE` pairs (the CLI's `--set`): `keep_columns` takes a comma-separated list, `none` clears."""
        values: dict[str, Any] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                raise InvalidFork(f"--set takes KEY=VALUE, not {pair!r}")
            key = key.strip().replace("-", "_")
            if value.strip().lower() in ("none", "null"):
                values[key] = None
            elif key == "keep_columns":
                values[key] = [column for column in value.split(",") if column]
            else:
                values[key] = value
        return cls.checked(values)

    @classmethod
    def checked(cls, values: dict[str, Any]) -> ForkChanges:
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise InvalidFork(f"cannot change {first_error(exc).removeprefix('invalid ')}") from None


def fork_mission(
    store: Store,
    settings: Settings,
    parent_id: str,
    phase: Phase,
    *,
    time_budget: float | None = None,
    changes: ForkChanges | None = None,
    mission_id: str | None = None,
    claimed_by: str | None = None,
) -> MissionSpec:
    """Create the fork (queued, or held by `claimed_by` to run now) and return its spec."""
    parent = store.get_mission(parent_id)
    if parent is None:
        raise MissionNotFound(f"no mission '{parent_id}'")
    if parent.status in UNFINISHED - {MissionStatus.awaiting_approval}:
        raise MissionError(f"mission '{parent_id}' is {parent.status}: fork it once it has stopped")
    snapshot = _phase_start(store, parent_id, phase)
    spec = _fork_spec(MissionSpec.from_row(parent), mission_id or new_mission_id(), time_budget, changes, settings)
    parent_dir, fork_dir = settings.missions_dir / parent_id, settings.missions_dir / spec.mission_id
    if store.get_mission(spec.mission_id) is not None:
        raise MissionError(f"mission '{spec.mission_id}' already exists")
    reused = [
        row
        for row in _reused_candidates(store.candidates(parent_id), snapshot, phase)
        if (parent_dir / "candidates" / row.key).is_dir()  # retention may have collected its files
    ]
    state = _start_state(MissionState.model_validate_json(snapshot.state_json), phase, spec)
    state_json = _moved(state.model_dump_json(), parent_dir, fork_dir, in_json=True)
    event = MissionForked(
        parent_id=parent_id, phase=phase.value, parent_seq=snapshot.seq, candidates_reused=len(reused)
    )
    settings.missions_dir.mkdir(parents=True, exist_ok=True)
    try:
        fork_dir.mkdir()  # the folder is ours alone from here: two forks of one id cannot both get it
    except FileExistsError:
        raise MissionError(f"mission '{spec.mission_id}' already exists") from None
    try:
        _link_tree(parent_dir, fork_dir, {row.key for row in reused}, phase)
        create_fork(
            store,
            MissionRow(
                id=spec.mission_id,
                competition=parent.competition,
                platform=spec.platform,
                status=MissionStatus.queued,
                mode=spec.mode.value,
                budget_s=spec.time_budget,
                options=spec.row_options(),
                parent_id=parent_id,
                forked_from_seq=snapshot.seq,
                code_version=code_version(),
                graph_fingerprint=graph_fingerprint(PHASE_NODES),
                created_at=utcnow(),
                updated_at=utcnow(),
            ),
            snapshot=snapshot.model_copy(update={"state_json": state_json}),
            candidates=[_moved_row(row, parent_dir, fork_dir) for row in reused],
            event_type=event.type,
            event_payload=event.model_dump_json(),
            claimed_by=claimed_by,
            lease_ttl=settings.lease_ttl,
        )
    except Exception:
        shutil.rmtree(fork_dir, ignore_errors=True)  # nothing half-made stays behind
        raise
    return spec


def _phase_start(store: Store, parent_id: str, phase: Phase) -> SnapshotRow:
    """The parent's first snapshot of `phase`: the state that phase began from."""
    kind = next(node.get_node_id() for node in PHASE_NODES if node.phase is phase)
    snapshot = next((s for s in store.snapshots(parent_id) if s.node_kind == kind), None)
    if snapshot is None:
        raise MissionError(f"mission '{parent_id}' never reached {phase.value}: there is no snapshot to fork from")
    return snapshot


def _fork_spec(
    parent: MissionSpec,
    mission_id: str,
    time_budget: float | None,
    changes: ForkChanges | None,
    settings: Settings,
) -> MissionSpec:
    update: dict[str, Any] = {"mission_id": mission_id}
    if time_budget is not None:
        update["time_budget"] = time_budget
    if changes is not None:
        update |= changes.model_dump(exclude_unset=True)
    try:
        if update.get("webhook_url"):
            check_webhook(update["webhook_url"], settings)
        spec = MissionSpec.model_validate(parent.model_dump() | update)
        return spec.model_copy(update={"model": resolve_model(spec.mode, spec.model)})
    except LaunchError as exc:
        raise InvalidFork(str(exc)) from None
    except ValidationError as exc:
        raise InvalidFork(first_error(exc)) from None


def _start_state(state: MissionState, phase: Phase, spec: MissionSpec) -> MissionState:
    """The parent's state at the snapshot, as it stood just before `phase` was entered, with the fork's options."""
    history = list(state.phase_history)
    while history and history[-1].phase == phase and history[-1].ended is None:
        history.pop()
    budget: BudgetLedger = state.budget.model_copy(deep=True)
    budget.total_s = spec.time_budget
    budget.phase_started_at_s.pop(phase, None)
    budget.warned = [p for p in budget.warned if p != phase]
    budget.allowance_spent = [p for p in budget.allowance_spent if p != phase]
    phase_modes = {p: mode for p, mode in state.phase_modes.items() if p != phase}
    failures = {p: n for p, n in state.consecutive_failures.items() if p != phase}
    return state.model_copy(
        update={
            "mission_id": spec.mission_id,
            "options": spec.mission_options(),
            "current_phase": history[-1].phase if history else None,
            "phase_history": history,
            "phase_modes": phase_modes,
            "consecutive_failures": failures,
            "budget": budget,
        }
    )


def _reused_candidates(rows: list[CandidateRow], snapshot: SnapshotRow, phase: Phase) -> list[CandidateRow]:
    """The archive as it stood at the snapshot; from `SAME_DATA_FROM` on, all of the parent's archive: the same
    recipe on the same data and folds gives the same result, so none is evaluated twice (one that failed or was
    screened out stays so; a fork that wants it tried again forks earlier)."""
    order = list(Phase)
    if order.index(phase) >= order.index(SAME_DATA_FROM):
        return rows
    started = snapshot.started_at.replace(tzinfo=None)
    return [row for row in rows if row.created_at.replace(tzinfo=None) < started]


def _moved(text: str, parent_dir: Path, fork_dir: Path, *, in_json: bool = False) -> str:
    """Paths under the parent's folder (its data, its baseline's script) point into the fork's copy; `in_json`:
    in JSON text, where a path is written escaped."""
    old, new = f"{parent_dir}/", f"{fork_dir}/"
    if in_json:
        old, new = json.dumps(old)[1:-1], json.dumps(new)[1:-1]
    return text.replace(old, new)


def _moved_row(row: CandidateRow, parent_dir: Path, fork_dir: Path) -> CandidateRow:
    script = row.script_path and _moved(row.script_path, parent_dir, fork_dir)
    return row.model_copy(update={"script_path": script})


def _link_tree(parent_dir: Path, fork_dir: Path, candidate_keys: set[str], phase: Phase) -> None:
    """Copy the parent's folder (hard links where possible), less its own outcome, the candidates not reused, and
    what the fork's first phase makes again: a fork at Discovery starts empty, one at Research takes the data
    only (its features are made anew, never written into a file the parent still has)."""
    if not parent_dir.is_dir() or phase is Phase.discovery:
        return
    order = list(Phase)
    for entry in parent_dir.iterdir():
        if entry.name in MISSION_FILES:
            continue
        if order.index(phase) < order.index(SAME_DATA_FROM) and entry.name != "data":
            continue
        # The candidates' folder is looked into one reused candidate at a time: the others are not copied.
        _only_what_a_mission_makes(entry, parent_dir, deep=entry.name != "candidates")
        if entry.name == "candidates" and entry.is_dir():
            (fork_dir / "candidates").mkdir()
            for candidate in entry.iterdir():
                if candidate.name in candidate_keys:
                    _only_what_a_mission_makes(candidate, parent_dir)
                    _copy_tree(candidate, fork_dir / "candidates" / candidate.name)
        elif entry.is_dir():
            _copy_tree(entry, fork_dir / entry.name)
        else:
            _link(str(entry), str(fork_dir / entry.name))


def _only_what_a_mission_makes(path: Path, parent_dir: Path, *, deep: bool = True) -> None:
    """Refuse unless `path` is a regular file, or a folder (of folders and regular files, when `deep`): a link or
    a device planted in the parent's folder could lead the copy anywhere (or block it, a FIFO)."""
    stack = [path]
    while stack:
        current = stack.pop()
        mode = current.lstat().st_mode
        if stat.S_ISDIR(mode):
            if deep:
                stack.extend(current.iterdir())
        elif not stat.S_ISREG(mode):
            kind = "a link" if stat.S_ISLNK(mode) else "not a regular file"
            where = str(current.relative_to(parent_dir))
            raise MissionError(f"cannot fork: {where!r} in the parent's folder is {kind}")  # quoted: one line


def _copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, symlinks=True, copy_function=_link)  # links were refused: never followed


def _link(source: str, target: str) -> str:
    """Hard-link a file the runner made; copy anything else. A hard link planted in the parent's folder to
    someone else's file is a regular file like the parent's own, but owned by another: linked, the fork would
    share that file's inode (and keep it alive, and write through it); copied, it shares nothing."""
    try:
        if os.lstat(source).st_uid != os.geteuid():
            raise PermissionError("not made by this runner")
        os.link(source, target, follow_symlinks=False)
    except OSError:  # not ours, another file system, or links not allowed: a copy
        shutil.copy2(source, target, follow_symlinks=False)
    return target
