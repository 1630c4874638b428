"""`agent-k report`: the mission page as one HTML file, its events and every script inlined, which opens from
disk with no server and no network."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from agent_k.dashboard.render import mission_meta, page
from agent_k.mission.document import mission_document
from agent_k.store.repository import Store


class UnknownMission(LookupError):
    pass


def report_path(missions_dir: Path, mission_id: str) -> Path:
    """Where a mission's report is written when it ends (by `agent-k run` or by the worker that ran it)."""
    return missions_dir / mission_id / "report.html"


def envelope(mission_id: str, seq: int, ts: str, type_: str, phase: str | None, payload: str) -> dict[str, object]:
    """An event as the stream sends it (`data` of an SSE message), so the page reads reports and streams alike."""
    return {"mission_id": mission_id, "seq": seq, "ts": ts, "type": type_, "phase": phase, "data": json.loads(payload)}


def render_report(store: Store, mission_id: str) -> str:
    document = mission_document(store, mission_id)
    if document is None:
        raise UnknownMission(f"no mission '{mission_id}'")
    events = [
        envelope(e.mission_id, e.seq, e.ts.isoformat(), e.type, e.phase, e.payload)
        for e in store.events_after(mission_id)
    ]
    return page("mission.html", meta=mission_meta(document), events=events, inline=True, live=False, csrf="")


def write_report(store: Store, mission_id: str, path: Path) -> Path:
    """Write the report whole or not at all (a temporary file renamed into place), readable by others."""
    html = render_report(store, mission_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", delete=False) as out:
        out.write(html)
    written = Path(out.name)
    written.chmod(0o644)
    written.replace(path)
    return path
