"""Build homes of finished missions from a few real ones: each copy gets its own rows (mission, snapshots, events,
candidates, submissions) and its own full copy of the folder (no links), as if it had run itself; the copy may go
to another store and home (`origin`), on SQLite or PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path

from sqlalchemy import insert
from sqlmodel import Session, select

from agent_k.store.models import CandidateRow, EventRow, MissionRow, SnapshotRow, SubmissionRow
from agent_k.store.repository import Store


def copy_mission(
    store: Store, missions_dir: Path, source: str, target: str, *, origin: tuple[Store, Path] | None = None
) -> None:
    """Copy mission `source` as `target` into `store` and `missions_dir`; `origin`: the store and missions folder
    `source` lives in (default: the same ones)."""
    from_store, from_dir = origin or (store, missions_dir)
    old, new = f"{from_dir / source}/", f"{missions_dir / target}/"

    def moved(values: dict[str, object]) -> dict[str, object]:
        return {k: v.replace(old, new).replace(f'"{source}"', f'"{target}"') if isinstance(v, str) else v
                for k, v in values.items()}  # fmt: skip

    with Session(from_store.engine) as session:
        mission = session.get(MissionRow, source)
        assert mission is not None
        rows = {
            table: list(session.exec(select(table).where(table.mission_id == source)))  # type: ignore[attr-defined]
            for table in (SnapshotRow, EventRow, CandidateRow, SubmissionRow)
        }
    with store.engine.begin() as connection:
        connection.execute(insert(MissionRow).values(**{**moved(mission.model_dump()), "id": target}))
        for table, copies in rows.items():
            for row in copies:
                values = moved(row.model_dump(exclude={"id"}))
                connection.execute(insert(table).values(**{**values, "mission_id": target}))
    shutil.copytree(from_dir / source, missions_dir / target)
