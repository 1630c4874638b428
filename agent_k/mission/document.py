"""One mission as a document (its row, latest state, phase history, result and steps): for the CLI and the API."""

from __future__ import annotations

import json
from typing import Any

from agent_k.store.lineage import children
from agent_k.store.repository import Store
from agent_k.store.webhooks import deliveries


def mission_document(store: Store, mission_id: str) -> dict[str, Any] | None:
    """Everything known about a mission, or None when there is no such mission."""
    row = store.get_mission(mission_id)
    if row is None:
        return None
    finished = json.loads(row.result) if row.result else None
    snapshots = store.snapshots(mission_id)
    state = finished["state"] if finished else (json.loads(snapshots[-1].state_json) if snapshots else None)
    return {
        "id": row.id,
        "competition": row.competition,
        "status": row.status,
        "mode": row.mode,
        "budget_s": row.budget_s,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "lease_owner": row.lease_owner,
        "approval": row.approval,
        "cancel_requested_at": row.cancel_requested_at.isoformat() if row.cancel_requested_at else None,
        "parent_id": row.parent_id,
        "forked_from_seq": row.forked_from_seq,
        "children": [child.id for child in children(store, mission_id)],
        "code_version": row.code_version,
        "graph_fingerprint": row.graph_fingerprint,
        "collected_at": row.collected_at.isoformat() if row.collected_at else None,
        "state": state,
        "phase_history": state["phase_history"] if state else [],
        "result": finished["result"] if finished else None,
        "steps": [{"seq": s.seq, "node": s.node_kind, "status": s.status, "error": s.error} for s in snapshots],
        "webhooks": [
            {
                "event_seq": d.event_seq,
                "event_type": d.event_type,
                "status": d.status,
                "attempts": d.attempts,
                "last_error": d.last_error,
                "delivered_at": d.delivered_at.isoformat() if d.delivered_at else None,
            }
            for d in deliveries(store, mission_id)
        ],
    }
