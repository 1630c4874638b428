"""The mission's time budget: one clock across processes, a cumulative deadline per phase."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from agent_k.mission.contract import MISSION_CONTRACT, PhaseContract
from agent_k.mission.phases import Phase
from agent_k.mission.state import BudgetLedger


def deadlines(contract: PhaseContract) -> dict[Phase, float]:
    """Fraction of the total budget by which each phase must end, as the contract declares. Time a phase leaves
    unused flows on to the next; in the mission's contract the last 4% is Submission's reserve."""
    return {Phase(p.name): p.deadline for p in contract.phases}


SUBMISSION_FLOOR_S = 1.0
"""The last phase (Submission: reading, checking and uploading a file) keeps at least this long where its share is
less."""
FLOOR_CAP = 0.12
"""The most of the budget the floor may keep (what Submission kept before): on budgets under 8.3 s it is less."""


WARNING_FRACTION = 0.8
HARD_STOP_FRACTION = 1.0
"""A step still running when the whole budget is spent is stopped, and the mission submits what it has
(`agent_k.mission.fallback`); Submission alone may run on, to SUBMISSION_LIMIT_FRACTION."""
SUBMISSION_LIMIT_FRACTION = 1.10
"""The contract's +10%: no step of a mission runs past it."""


@dataclass
class BudgetClock:
    """Elapsed time = what the ledger has recorded (earlier steps, earlier processes) + the current step."""

    ledger: BudgetLedger
    deadlines: dict[Phase, float] = field(default_factory=lambda: deadlines(MISSION_CONTRACT))
    _step_started: float = field(default_factory=time.monotonic)
    _step_phase: Phase | None = None

    @property
    def total_s(self) -> float:
        return self.ledger.total_s

    def start_step(self, phase: Phase) -> None:
        self._step_started = time.monotonic()
        self._step_phase = phase
        self.ledger.phase_started_at_s.setdefault(phase, self.ledger.elapsed_s)

    def end_step(self) -> None:
        """Book the running step's time into the ledger."""
        if self._step_phase is not None:
            spent = time.monotonic() - self._step_started
            self.ledger.spent_s[self._step_phase] = self.ledger.spent_s.get(self._step_phase, 0.0) + spent
            self._step_phase = None

    def elapsed(self) -> float:
        running = time.monotonic() - self._step_started if self._step_phase is not None else 0.0
        return self.ledger.elapsed_s + running

    def deadline(self, phase: Phase) -> float:
        end = self.total_s * self.deadlines[phase]
        if self.deadlines[phase] >= 1.0:  # the last phase: what the floor keeps for it
            return end
        return min(end, self.total_s - min(SUBMISSION_FLOOR_S, FLOOR_CAP * self.total_s))

    def remaining(self, phase: Phase) -> float:
        return max(0.0, self.deadline(phase) - self.elapsed())

    def allowance(self, phase: Phase) -> float:
        started = self.ledger.phase_started_at_s.get(phase, self.elapsed())
        return max(0.0, self.deadline(phase) - started)

    def used_in_phase(self, phase: Phase) -> float:
        started = self.ledger.phase_started_at_s.get(phase)
        return 0.0 if started is None else self.elapsed() - started

    def hard_remaining(self, phase: Phase | None = None) -> float:
        """Until a step of `phase` is stopped: the whole budget, or for Submission its +10%."""
        share = SUBMISSION_LIMIT_FRACTION if phase is Phase.submission else HARD_STOP_FRACTION
        return self.total_s * share - self.elapsed()
