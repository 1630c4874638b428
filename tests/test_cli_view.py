"""The plain progress view prints event lines as they are: recipe text with brackets is not rich markup."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Console

from agent_k.cli.view import MissionView
from agent_k.events.models import CandidateEvaluated, Event
from agent_k.mission.option_help import OPTION_HELP
from agent_k.mission.options import LaunchOptions
from tests.conftest import run_cli


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


def test_the_live_status_shows_data_throughput_best_score_and_time_left() -> None:
    from agent_k.events.models import PhaseStarted, ResearchFinding

    def event(seq: int, phase: str, data: object) -> Event:
        return Event(mission_id="m", seq=seq, ts=datetime.now(UTC), type=data.type, phase=phase, data=data)  # type: ignore[attr-defined, arg-type]

    console = Console(record=True, width=200, color_system=None)
    view = MissionView(console, live=False)
    view.handle(event(1, "research", ResearchFinding(kind="profile", message="p", rows=150_000, features=27)))
    view.handle(event(2, "evolution", PhaseStarted(mode="workflow", budget_s=40.0)))
    for seq, (fidelity, cv) in enumerate([(1.0, 0.91), (0.125, None), (0.125, None)], 3):
        candidate = CandidateEvaluated(
            candidate_key=f"k{seq}", generation=1, recipe="lightgbm()", status="succeeded" if cv else "screened_out",
            cv_score=cv, runtime_s=2.0, fidelity=fidelity,
        )  # fmt: skip
        view.handle(event(seq, "evolution", candidate))
    line = view.status_line()
    assert line.startswith("150,000 rows, 27 features · 3 candidates (2 on a sample), ")
    assert "best CV [bold]0.91[/]" in line and "evolution: 40s left" in line
    assert "(2.0s on 12% of rows)" in console.export_text()


def test_the_run_help_is_the_options_descriptions_with_their_defaults_as_written() -> None:
    """`agent-k run --help` (the real console script) shows each option's description from `MissionOptions`, and a
    `[default: …]` in one is text, not rich markup that would swallow it."""
    shown = run_cli("run", "--help", env={"COLUMNS": "2000", "NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stderr
    lines = " ".join(" ".join(line.strip(" │") for line in shown.stdout.splitlines()).split())
    assert list(OPTION_HELP) == list(LaunchOptions.model_fields), "one help text per option, in their order"
    for name in ("mode", "model", "max_cost_usd", "require_approval", "stop_early", "webhook_url"):
        description = LaunchOptions.model_fields[name].description or ""
        assert " ".join(description.split()) in lines, name
    assert "[default: AGENT_K_TIME_BUDGET]" in lines and "[default: AGENT_K_MODEL]" in lines
