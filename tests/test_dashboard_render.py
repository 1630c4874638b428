"""The mission page at scale: a report of 5,000 events renders in the browser (the time goes to benchmarks.md)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

import agent_k.dashboard
from agent_k.dashboard.render import mission_meta
from agent_k.events.models import EventData
from agent_k.store.repository import Store
from tests.support.browser import Watched

pytestmark = pytest.mark.slow


def test_a_mission_of_5000_events_renders_in_the_browser(browser: Any, tmp_path: Path) -> None:
    """Prints the render time (docs/benchmarks.md records it); AGENT_K_DASHBOARD_TIMING=FILE appends it there."""
    from agent_k.dashboard.report import write_report
    from agent_k.store.models import MissionRow, utcnow

    store = Store.open(f"sqlite:///{tmp_path / 'big.db'}")
    now = utcnow()
    with store._session() as session:
        session.add(MissionRow(id="big", competition="wine", platform="local", status="succeeded", mode="workflow",
                               budget_s=3600, options="{}", created_at=now, updated_at=now))  # fmt: skip
        session.commit()
    start = datetime.now(UTC) - timedelta(hours=1)
    payloads = _synthetic_events(5000)
    for seq, (kind, phase, payload) in enumerate(payloads, 1):
        store.append_event(
            "big", seq=seq, type=kind, phase=phase, payload=json.dumps(payload), ts=start + timedelta(seconds=seq * 0.5)
        )
    path = write_report(store, "big", tmp_path / "big.html")
    store.close()

    watched = Watched(browser, offline=True)
    try:
        watched.page.goto(path.as_uri())
        watched.wait("window.AgentK && window.AgentK.rendered === 5000")
        took = watched.page.evaluate("window.AgentK.renderMs")
        assert watched.page.evaluate("document.querySelectorAll('#log li').length") == 5000
        candidates = sum(1 for kind, _, _ in payloads if kind == "candidate.evaluated")
        assert watched.page.evaluate("window.AgentK.plotData.x.length") == candidates
        assert watched.errors == []
    finally:
        watched.close()
    print(f"\n5,000-event mission page rendered in {took:.0f} ms")
    if target := os.environ.get("AGENT_K_DASHBOARD_TIMING"):
        with open(target, "a") as out:
            out.write(f"{took:.1f}\n")


def _synthetic_events(n: int) -> list[tuple[str, str | None, dict[str, Any]]]:
    events: list[tuple[str, str | None, dict[str, Any]]] = [
        (
            "mission.started",
            None,
            {"type": "mission.started", "competition": "wine", "mode": "workflow", "budget_s": 3600},
        ),
        (
            "competition.selected",
            "discovery",
            {
                "type": "competition.selected",
                "competition": "wine",
                "task": "multiclass",
                "metric": "accuracy",
                "maximize": True,
                "n_train": 133,
                "n_test": 45,
            },
        ),
        ("phase.started", "evolution", {"type": "phase.started", "mode": "workflow", "budget_s": 3000}),
    ]
    generation = 0
    while len(events) < n - 2:
        i = len(events)
        if i % 10 == 0:
            generation += 1
            events.append(
                (
                    "evolution.generation",
                    "evolution",
                    {
                        "type": "evolution.generation",
                        "generation": generation,
                        "best_score": 0.9,
                        "best_candidate_key": "k",
                        "evaluated": i,
                        "budget_used": 0.5,
                    },
                )
            )
        elif i % 3 == 0:
            events.append(("log", "evolution", {"type": "log", "level": "info", "message": f"note {i}"}))
        else:
            score = 0.8 + 0.15 * ((i * 7919) % 1000) / 1000
            events.append(
                (
                    "candidate.evaluated",
                    "evolution",
                    {
                        "type": "candidate.evaluated",
                        "candidate_key": f"k{i}",
                        "generation": generation,
                        "recipe": f"lightgbm(n_estimators={i})",
                        "status": "succeeded",
                        "cv_score": score,
                        "runtime_s": 1.0,
                        "error": None,
                        "fidelity": 1.0,
                    },
                )
            )
    events.append(
        (
            "phase.completed",
            "evolution",
            {"type": "phase.completed", "elapsed_s": 2400, "summary": "", "llm_requests": 0, "llm_tokens": 0},
        )
    )
    events.append(
        (
            "mission.completed",
            None,
            {
                "type": "mission.completed",
                "cv_score": 0.95,
                "public_score": 0.9,
                "private_score": 0.9,
                "rank": 1,
                "teams": 14,
                "percentile": 100.0,
                "medal": "gold",
                "elapsed_s": 2500,
            },
        )
    )
    return events


def test_the_page_subscribes_to_every_event_type_and_offers_controls_by_the_servers_rules() -> None:
    """The page reads its vocabularies from its metadata (before: it copied 31 of the 32 event types, without
    `mission.forked`, and which status allows which control)."""
    schema = TypeAdapter(EventData).json_schema()
    sent = sorted(schema["discriminator"]["mapping"])
    meta = mission_meta({"id": "m", "status": "queued"})
    assert sorted(meta["event_types"]) == sent and "mission.forked" in sent
    assert meta["controls"] == {
        "cancel": ["awaiting_approval", "queued", "running"],
        "resume": ["cancelled", "failed"],
        "approve": ["awaiting_approval"],
        "reject": ["awaiting_approval"],
    }
    script = (Path(agent_k.dashboard.__file__).parent / "static" / "mission.js").read_text()
    assert "source.addEventListener(type, take)" in script and "mission.meta.event_types" in script
    assert '"approval.granted", "approval.rejected"' not in script, "no copied list of event types"
