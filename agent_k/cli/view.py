"""What a person sees: a live view of phases built from the mission's events, and the final summary."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn
from rich.table import Table

from agent_k.mission.phases import Phase

if TYPE_CHECKING:
    from agent_k.events.models import Event

PHASES = tuple(phase.value for phase in Phase)
SYMBOLS = {"pending": "[dim]·[/]", "running": "[yellow]▶[/]", "completed": "[green]✓[/]", "failed": "[red]✗[/]"}


def describe(event: Event) -> str | None:
    """One line for an event, or None for events only the live widgets show."""
    d: Any = event.data
    match event.type:
        case "mission.started":
            return f"mission started ({d.mode}, budget {d.budget_s:.0f}s)" + (
                f", resumed from step {d.resumed_from_seq}" if d.resumed_from_seq else ""
            )
        case "phase.started":
            return f"{event.phase} started"
        case "phase.completed":
            return f"{event.phase} completed in {d.elapsed_s:.1f}s"
        case "phase.failed":
            return f"{event.phase} failed: {d.reason}"
        case "phase.fallback":
            return f"{event.phase}: the agent fell back to the workflow: {d.reason}"
        case "mission.forked":
            reused = f"{d.candidates_reused} candidates reused"
            return f"forked from {d.parent_id} at {d.phase} (its step {d.parent_seq}), {reused}"
        case "mission.cancelled":
            return f"mission cancelled: {d.reason}"
        case "budget.warning":
            return f"{event.phase}: {d.used_s:.1f}s of {d.allowed_s:.1f}s used"
        case "competition.selected":
            direction = "higher" if d.maximize else "lower"
            return f"selected {d.competition}: {d.task}, {d.metric} ({direction} is better), {d.n_train:,} train rows"
        case "research.finding" | "log":
            return str(d.message)
        case "candidate.evaluated":
            score = f"{d.cv_score:.5g}" if d.cv_score is not None else d.error or "failed"
            sample = f" on {d.fidelity:.0%} of rows" if d.fidelity < 1 else ""
            return f"gen {d.generation} {d.recipe}: {score} ({d.runtime_s:.1f}s{sample})"
        case "evolution.generation":
            best = f"{d.best_score:.5g}" if d.best_score is not None else "-"
            return f"generation {d.generation}: best CV {best}, {d.evaluated} evaluated"
        case "submission.created":
            return f"submission {d.submission_id}" + (" (adopted after restart)" if d.adopted else "")
        case "submission.scored":
            return f"scored: public {d.public_score}, private {d.private_score}, rank {d.rank}/{d.teams}"
        case "mission.completed":
            return f"mission completed in {d.elapsed_s:.1f}s"
        case "mission.failed":
            return f"mission failed: {d.reason}" + (f" ({d.error})" if d.error else "")
    return None


@dataclass
class MissionView:
    """Feeds on events. On a terminal it redraws a live panel; elsewhere it prints one line per event."""

    console: Console
    live: bool
    status: dict[str, str] = field(default_factory=lambda: dict.fromkeys(PHASES, "pending"))
    detail: dict[str, str] = field(default_factory=dict)
    best: float | None = None
    data: str = ""
    """The training data's shape, once Research has read it."""
    candidates: int = 0
    sampled: int = 0
    phase_clock: tuple[str, float, float] | None = None
    """The running phase, its allowance in seconds, and when it started (this view's clock)."""
    _started: float = field(default_factory=time.monotonic)
    _live: Live | None = None
    _progress: Progress = field(
        default_factory=lambda: Progress(
            TextColumn("evolution"), BarColumn(), TaskProgressColumn(), TextColumn("{task.description}")
        )
    )

    def __post_init__(self) -> None:
        self._task = self._progress.add_task("", total=1.0)

    def __enter__(self) -> MissionView:
        if self.live:
            self._live = Live(self, console=self.console, refresh_per_second=8, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.__exit__(kind, exc, tb)

    def handle(self, event: Event) -> None:
        d: Any = event.data
        phase = event.phase or ""
        match event.type:
            case "phase.started":
                self.status[phase] = "running"
                self.phase_clock = (phase, d.budget_s, time.monotonic())
            case "phase.completed":
                self.status[phase] = "completed"
                if phase == "evolution":
                    self._progress.update(self._task, completed=1.0)
            case "phase.failed":
                self.status[phase] = "failed"
            case "research.finding" if d.rows is not None:
                self.data = f"{d.rows:,} rows, {d.features} features"
            case "candidate.evaluated":
                self.candidates += 1
                self.sampled += d.fidelity < 1
                if d.cv_score is not None and self.best is None:
                    self.best = d.cv_score
            case "evolution.generation":
                self.best = d.best_score
                self._progress.update(self._task, completed=d.budget_used, description=f"gen {d.generation}")
        line = describe(event)
        if line is None:
            return
        line = escape(line)  # recipe summaries hold brackets ("[log+ratio]") that are not markup
        if phase:
            self.detail[phase] = line
        # A fallback or a warning stays on screen above the live view: the next event would overwrite it there.
        lasting = event.type == "phase.fallback" or (event.type == "log" and d.level in ("warning", "error"))
        if not self.live or lasting:
            self.console.print(
                f"[dim]{time.monotonic() - self._started:6.1f}s[/] {line}", highlight=False, soft_wrap=True
            )

    def __rich__(self) -> RenderableType:
        table = Table(show_header=False, box=None, pad_edge=False)
        for phase in PHASES:
            table.add_row(SYMBOLS[self.status[phase]], phase, self.detail.get(phase, ""))
        return Group(table, self._progress, self.status_line())

    def status_line(self) -> str:
        """Data, throughput, best score and the running phase's time left: what a long run is judged by."""
        minutes = max((time.monotonic() - self._started) / 60, 1e-9)
        parts = [self.data] if self.data else []
        if self.candidates:
            sampled = f" ({self.sampled} on a sample)" if self.sampled else ""
            parts.append(f"{self.candidates} candidates{sampled}, {self.candidates / minutes:.1f}/min")
        parts.append(f"best CV [bold]{self.best:.5g}[/]" if self.best is not None else "best CV -")
        if self.phase_clock is not None and self.status.get(self.phase_clock[0]) == "running":
            phase, allowance, since = self.phase_clock
            parts.append(f"{phase}: {max(0.0, allowance - (time.monotonic() - since)):.0f}s left")
        return " · ".join(parts)


def summary_table(report: dict[str, Any]) -> Table:
    table = Table(title=f"Mission {report['mission_id']}", show_header=False, title_justify="left")
    rows = [
        ("Competition", report["competition"]),
        ("Status", report["status"] + (f" ({report['error']})" if report.get("error") else "")),
        ("CV score", report["cv_score"]),
        ("Public score", report["public_score"]),
        ("Private score", report["private_score"]),
        ("Rank", f"{report['rank']} of {report['teams']}" if report["rank"] else None),
        ("Percentile", f"{report['percentile']:.1f}" if report["percentile"] is not None else None),
        ("Medal", report["medal"] or "none"),
        ("Leakage suspects", ", ".join(report["leakage_suspects"]) or "none"),
        ("Solution", report["solution_path"]),
        ("Submission", report["submission_path"]),
        ("Elapsed", f"{report['elapsed_s']:.1f}s"),
        *(("Note", note) for note in report.get("notes") or ()),
    ]
    for name, value in rows:
        shown = f"{value:.5g}" if isinstance(value, float) else ("-" if value is None else str(value))
        table.add_row(name, shown)
    return table
