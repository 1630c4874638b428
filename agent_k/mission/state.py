"""`MissionState` (persisted with every snapshot) and `MissionResult` (the End payload). Kept small:
datasets, scripts and predictions live in files and rows the state refers to."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, model_validator

from agent_k.competition import Competition, Criteria, ResearchFindings, Scores
from agent_k.mission.options import MissionOptions
from agent_k.mission.phases import Phase
from agent_k.store.status import MissionStatus


class StepFailureRecord(BaseModel):
    step: str
    error: str
    strategy: str
    attempt: int = 1


class PhaseRecord(BaseModel):
    phase: Phase
    mode: str
    started: datetime
    ended: datetime | None = None
    outcome: str | None = None
    reason: str | None = None
    fallback: str | None = None
    """Why an agent phase fell back to its workflow path, if it did."""
    strategy: str | None = None
    """The phase's error strategy: raise, ignore, retry or repair."""
    step_failures: list[StepFailureRecord] = Field(default_factory=list)
    repaired: str | None = None
    """The step an agent repaired, if one was."""


class CandidateMemory(BaseModel):
    memory_mb: int
    """Each candidate's cap, all its processes together."""
    parallel: int
    """How many candidates may run at once with that cap."""


class EvolutionState(BaseModel):
    generation: int = 0
    best_candidate_key: str | None = None
    best_score: float | None = None
    no_improvement: int = 0
    evaluated: int = 0
    failed: int = 0
    screened_out: int = 0
    stop_reason: str | None = None
    widened_at: int | None = None
    """The generation after which the converged search was widened to spend the rest of the budget."""


class BudgetLedger(BaseModel):
    total_s: float
    spent_s: dict[Phase, float] = Field(default_factory=dict)
    phase_started_at_s: dict[Phase, float] = Field(default_factory=dict)
    """Mission-elapsed seconds when each phase began; a phase's allowance runs from there."""
    warned: list[Phase] = Field(default_factory=list)
    llm_tokens: dict[Phase, int] = Field(default_factory=dict)
    llm_requests: dict[Phase, int] = Field(default_factory=dict)
    cost_usd: float = 0.0
    allowance_spent: list[Phase] = Field(default_factory=list)
    """Phases whose agent used up its requests or tokens: their workflow path carries on, without a fallback."""

    @property
    def elapsed_s(self) -> float:
        return sum(self.spent_s.values())


class MissionState(BaseModel):
    mission_id: str
    competition_id: str | None = None
    criteria: Criteria = Field(default_factory=Criteria)
    options: MissionOptions = Field(default_factory=MissionOptions)
    """What it runs with, as launched or forked (the model string, never a key: providers read keys from the
    environment)."""
    candidate_memory: CandidateMemory | None = None
    """Decided once, when the first candidates run: a cap that followed the free memory from one generation to
    the next would restart the warm workers every time."""
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
    scores: Scores = Field(default_factory=Scores)
    """The platform's verdict on the submission: public and private score, rank, percentile, medal (the CV
    score is the search's, in `evolution_state.best_score`)."""
    solution_path: str | None = None
    submission_path: str | None = None
    budget: BudgetLedger
    phase_history: list[PhaseRecord] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    prior_reason: str | None = None
    """Why Prototype's baseline is the training prior (None: a model's)."""
    notes: list[str] = Field(default_factory=list)
    """What a user should know of a mission that succeeded: e.g. that it submitted the training prior."""
    consecutive_failures: dict[Phase, int] = Field(default_factory=dict)
    """Failed steps in a row per phase (amphiflow: at `max_consecutive_fallbacks` the phase runs as its agent)."""

    @model_validator(mode="before")
    @classmethod
    def _fold_flat_options(cls, data: Any) -> Any:
        """States stored before the options moved held them as fields of their own: fold them in, so every
        stored snapshot still resumes."""
        if not isinstance(data, dict) or not _FLAT_OPTIONS & data.keys():
            return data
        flat = {key: data[key] for key in _FLAT_OPTIONS & data.keys()}
        rest = {key: value for key, value in data.items() if key not in _FLAT_OPTIONS}
        return rest | {"options": flat | dict(rest.get("options") or {})}


_FLAT_OPTIONS = frozenset(MissionOptions.model_fields)


class MissionResult(Scores):
    """The End payload: how the mission went (`Scores` flattened in, as the `--json` report has them)."""

    success: bool
    status: MissionStatus = MissionStatus.succeeded
    mission_id: str
    competition_id: str | None = None
    submission_id: str | None = None
    submission_path: str | None = None
    solution_path: str | None = None
    leakage_suspects: list[str] = Field(default_factory=list)
    duration_s: float = 0.0
    phases_completed: list[Phase] = Field(default_factory=list)
    error: str | None = None
    """A reason code such as `illegal_phase_transition` or `no_valid_baseline`."""
    detail: str | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def scores(self) -> Scores:
        return Scores.model_validate(self.model_dump(include=set(Scores.model_fields)))

    @classmethod
    def from_state(
        cls,
        state: MissionState,
        *,
        error: str | None = None,
        detail: str | None = None,
        status: MissionStatus | None = None,
    ) -> MissionResult:
        status = status or (MissionStatus.failed if error else MissionStatus.succeeded)
        findings = state.research_findings
        return cls(
            **state.scores.model_dump(exclude={"cv_score"}),
            cv_score=state.evolution_state.best_score,
            success=status is MissionStatus.succeeded,
            status=status,
            mission_id=state.mission_id,
            competition_id=state.competition_id,
            submission_id=state.final_submission_id,
            submission_path=state.submission_path,
            solution_path=state.solution_path,
            leakage_suspects=findings.leakage_suspects if findings else [],
            duration_s=round(state.budget.elapsed_s, 3),
            phases_completed=list(state.phases_completed),
            error=error,
            detail=detail,
            notes=list(state.notes),
        )
