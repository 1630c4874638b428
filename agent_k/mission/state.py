"""`MissionState` (persisted with every snapshot) and `MissionResult` (the End payload). Kept small:
datasets, scripts and predictions live in files and rows the state refers to."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from agent_k.ml.profiling import ResearchFindings
from agent_k.platforms.base import Competition, Criteria


class Phase(StrEnum):
    discovery = "discovery"
    research = "research"
    prototype = "prototype"
    evolution = "evolution"
    submission = "submission"


class Mode(StrEnum):
    auto = "auto"
    workflow = "workflow"
    agent = "agent"


class PhaseRecord(BaseModel):
    phase: Phase
    mode: str
    started: datetime
    ended: datetime | None = None
    outcome: str | None = None
    reason: str | None = None
    fallback: str | None = None
    """Why an agent phase fell back to its workflow path, if it did."""


class EvolutionState(BaseModel):
    generation: int = 0
    best_candidate_key: str | None = None
    best_score: float | None = None
    no_improvement: int = 0
    evaluated: int = 0
    failed: int = 0
    screened_out: int = 0
    stop_reason: str | None = None


class BudgetLedger(BaseModel):
    total_s: float
    spent_s: dict[Phase, float] = Field(default_factory=dict)
    phase_started_at_s: dict[Phase, float] = Field(default_factory=dict)
    """Mission-elapsed seconds when each phase began; a phase's allowance runs from there."""
    warned: list[Phase] = Field(default_factory=list)
    llm_tokens: dict[Phase, int] = Field(default_factory=dict)
    llm_requests: dict[Phase, int] = Field(default_factory=dict)
    cost_usd: float = 0.0

    @property
    def elapsed_s(self) -> float:
        return sum(self.spent_s.values())


class MissionState(BaseModel):
    mission_id: str
    competition_id: str | None = None
    criteria: Criteria = Field(default_factory=Criteria)
    mode: Mode = Mode.workflow
    keep_columns: list[str] = Field(default_factory=list)
    require_approval: bool = False
    """Stop before Submission until a person approves (status `awaiting_approval`)."""
    model: str | None = None
    """The pydantic-ai model string of agent mode; never a key (providers read those from the environment)."""
    max_cost_usd: float | None = None
    """Once the agents have cost this much, the remaining agent phases run their workflow path."""
    current_phase: Phase | None = None
    phases_completed: list[Phase] = Field(default_factory=list)
    phase_modes: dict[Phase, str] = Field(default_factory=dict)
    discovered_competitions: list[str] = Field(default_factory=list)
    selected_competition: Competition | None = None
    data_dir: str | None = None
    research_findings: ResearchFindings | None = None
    prototype_code: str | None = None
    """Path of the baseline's `solution.py`."""
    prototype_score: float | None = None
    evolution_state: EvolutionState = Field(default_factory=EvolutionState)
    final_submission_id: str | None = None
    public_score: float | None = None
    final_score: float | None = None
    """The private score: the one the final rank comes from."""
    final_rank: int | None = None
    teams: int | None = None
    percentile: float | None = None
    medal: str | None = None
    solution_path: str | None = None
    submission_path: str | None = None
    budget: BudgetLedger
    phase_history: list[PhaseRecord] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


MissionStatus = Literal["succeeded", "failed", "cancelled", "awaiting_approval"]


class MissionResult(BaseModel):
    success: bool
    status: MissionStatus = "succeeded"
    mission_id: str
    competition_id: str | None = None
    cv_score: float | None = None
    public_score: float | None = None
    private_score: float | None = None
    rank: int | None = None
    teams: int | None = None
    percentile: float | None = None
    medal: str | None = None
    submission_id: str | None = None
    submission_path: str | None = None
    solution_path: str | None = None
    leakage_suspects: list[str] = Field(default_factory=list)
    duration_s: float = 0.0
    phases_completed: list[Phase] = Field(default_factory=list)
    error: str | None = None
    """A reason code such as `illegal_phase_transition` or `no_valid_baseline`."""
    detail: str | None = None

    @classmethod
    def from_state(
        cls,
        state: MissionState,
        *,
        error: str | None = None,
        detail: str | None = None,
        status: MissionStatus | None = None,
    ) -> MissionResult:
        status = status or ("failed" if error else "succeeded")
        findings = state.research_findings
        return cls(
            success=status == "succeeded",
            status=status,
            mission_id=state.mission_id,
            competition_id=state.competition_id,
            cv_score=state.evolution_state.best_score,
            public_score=state.public_score,
            private_score=state.final_score,
            rank=state.final_rank,
            teams=state.teams,
            percentile=state.percentile,
            medal=state.medal,
            submission_id=state.final_submission_id,
            submission_path=state.submission_path,
            solution_path=state.solution_path,
            leakage_suspects=findings.leakage_suspects if findings else [],
            duration_s=round(state.budget.elapsed_s, 3),
            phases_completed=list(state.phases_completed),
            error=error,
            detail=detail,
        )
