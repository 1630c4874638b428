"""The plain progress view prints event lines as they are: recipe text with brackets is not rich markup."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Console

from agent_k.cli.view import MissionView
from agent_k.events.models import CandidateEvaluated, Event


def test_recipe_summaries_with_brackets_are_printed_verbatim() -> None:
    console = Console(record=True, width=200, color_system=None)
    data = CandidateEvaluated(
        candidate_key="k",
        generation=3,
        recipe="linear(C=1) [log+ratio]",
        status="succeeded",
        cv_score=0.9,
        runtime_s=1.0,
    )
    event = Event(mission_id="m", seq=1, ts=datetime.now(UTC), type=data.type, phase="evolution", data=data)
    with MissionView(console, live=False) as view:
        view.handle(event)
    assert "gen 3 linear(C=1) [log+ratio]: 0.9 (1.0s)" in console.export_text()
