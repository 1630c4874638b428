"""Follow an agent's tool calls: what it reads, what it does, and when it stops learning anything new.

Pure bookkeeping (no model, no events): `Steering` turns what it observes into nudges and events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Stage = Literal["exploring", "acting"]


@dataclass(frozen=True)
class Turn:
    """What one model response did, as the tracker saw it."""

    reads: int
    new: int
    acted: bool
    stage_changed_from: Stage | None


@dataclass
class PhaseTracker:
    reads_since_action: int = 0
    actions: int = 0
    stale_turns: int = 0
    """Consecutive turns that looked at fewer than two new things and did nothing."""
    stage: Stage = "exploring"
    seen: set[str] = field(default_factory=set)
    nudged: set[str] = field(default_factory=set)
    """Nudges already given in this run (each is said once)."""

    def observe(self, reads: list[str], actions: list[str]) -> Turn:
        """Count one response: `reads` and `actions` are its tool calls (name and arguments, as text)."""
        new = len(set(reads) - self.seen)
        self.seen.update(reads)
        previous = self.stage
        if actions:
            self.actions += len(actions)
            self.reads_since_action, self.stale_turns = 0, 0
            self.stage = "acting"
        else:
            self.reads_since_action += len(reads)
            self.stale_turns = self.stale_turns + 1 if new < 2 else 0
            self.stage = "exploring" if self.actions == 0 else self.stage
        return Turn(len(reads), new, bool(actions), previous if previous != self.stage else None)

    def saturated(self, max_reads: int, max_stale_turns: int) -> bool:
        """More than `max_reads` reads, or `max_stale_turns` turns learning under two new things, and no action."""
        return self.reads_since_action > max_reads or self.stale_turns >= max_stale_turns
