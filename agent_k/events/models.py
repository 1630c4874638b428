"""Event payloads: a discriminated union on `type`, wrapped in the `Event` envelope (docs/events.md).

Payloads carry scores, names and counts, never configuration values, so no secret can reach them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, Field

from agent_k.competition import Scores


class MissionStarted(BaseModel):
    type: Literal["mission.started"] = "mission.started"
    competition: str | None
    mode: str
    budget_s: float
    resumed_from_seq: int | None = None


class MissionForked(BaseModel):
    """The first event of a fork: where it came from and what it took over from its parent."""

    type: Literal["mission.forked"] = "mission.forked"
    parent_id: str
    phase: str
    parent_seq: int
    candidates_reused: int


class MissionCompleted(Scores):
    type: Literal["mission.completed"] = "mission.completed"
    elapsed_s: float


class MissionFailed(BaseModel):
    type: Literal["mission.failed"] = "mission.failed"
    reason: str
    error: str | None = None


class MissionCancelled(BaseModel):
    type: Literal["mission.cancelled"] = "mission.cancelled"
    reason: str = "cancelled"


class PhaseStarted(BaseModel):
    type: Literal["phase.started"] = "phase.started"
    mode: str
    budget_s: float


class PhaseCompleted(BaseModel):
    type: Literal["phase.completed"] = "phase.completed"
    elapsed_s: float
    summary: str = ""
    llm_requests: int = 0
    llm_tokens: int = 0
    mission_cost_usd: float = 0.0
    """What the mission's model calls have cost so far (genai-prices)."""


class PhaseFailed(BaseModel):
    type: Literal["phase.failed"] = "phase.failed"
    reason: str
    error: str | None = None


class PhaseFallback(BaseModel):
    type: Literal["phase.fallback"] = "phase.fallback"
    reason: str


class BudgetWarning(BaseModel):
    type: Literal["budget.warning"] = "budget.warning"
    used_s: float
    allowed_s: float


class CompetitionSelected(BaseModel):
    type: Literal["competition.selected"] = "competition.selected"
    competition: str
    task: str
    metric: str
    maximize: bool
    """The metric's direction: pages plot and rank candidates by it."""
    n_train: int
    n_test: int


class ResearchFinding(BaseModel):
    type: Literal["research.finding"] = "research.finding"
    kind: str
    message: str
    rows: int | None = None
    """The profile's training rows and feature columns (kind "profile")."""
    features: int | None = None


class GalleryItem(BaseModel):
    label: str
    """What it is (and what was predicted, for a mistake)."""
    image: str
    """A small JPEG as a data URI: the image, or a sound's spectrogram."""


class MediaGallery(BaseModel):
    """Files of a media competition for people to look at: training examples, or the chosen candidate's most
    confident out-of-fold mistakes."""

    type: Literal["media.gallery"] = "media.gallery"
    kind: Literal["examples", "mistakes"]
    items: list[GalleryItem]


class CandidateEvaluated(BaseModel):
    type: Literal["candidate.evaluated"] = "candidate.evaluated"
    candidate_key: str
    generation: int
    recipe: str
    status: str
    cv_score: float | None
    runtime_s: float
    error: str | None = None
    fidelity: float = 1.0
    """The share of training rows it was scored on (below 1: screened on a sample, never compared with full CV)."""


class EvolutionGeneration(BaseModel):
    type: Literal["evolution.generation"] = "evolution.generation"
    generation: int
    best_score: float | None
    best_candidate_key: str | None
    evaluated: int
    budget_used: float
    """Share of the evolution budget used so far, 0 to 1."""


class EvolutionEnsemble(BaseModel):
    type: Literal["evolution.ensemble"] = "evolution.ensemble"
    method: Literal["weighted", "stacked"] = "weighted"
    """Averaged by weights chosen out of fold, or mixed by a linear model fitted on the out-of-fold predictions."""
    members: list[str]
    """Candidate keys in the blend, best first."""
    weights: list[float]
    cv_score: float | None
    best_single: float | None
    kept: bool
    reason: str


class PickedCandidate(BaseModel):
    candidate_key: str
    cv_score: float
    """On the mission's split."""
    resplit_score: float | None
    """On the final pick's second, differently seeded split (None: not re-scored)."""
    combined: float | None
    """The mean of both: what the pick compares."""


class EvolutionPick(BaseModel):
    """The final pick: the top candidates and the blend re-scored on a second split, the best of both chosen."""

    type: Literal["evolution.pick"] = "evolution.pick"
    candidates: list[PickedCandidate]
    chosen: str | None
    changed: bool
    """The pick differs from the best on the mission's split alone."""
    reason: str


class ApprovalRequested(BaseModel):
    type: Literal["approval.requested"] = "approval.requested"
    cv_score: float | None


class ApprovalGranted(BaseModel):
    type: Literal["approval.granted"] = "approval.granted"


class ApprovalRejected(BaseModel):
    type: Literal["approval.rejected"] = "approval.rejected"


class SubmissionCreated(BaseModel):
    type: Literal["submission.created"] = "submission.created"
    submission_id: str
    idempotency_key: str
    adopted: bool


class SubmissionScored(Scores):
    type: Literal["submission.scored"] = "submission.scored"
    submission_id: str


class ToolNarrowed(BaseModel):
    type: Literal["tool.narrowed"] = "tool.narrowed"
    tool: str
    reason: str
    code: str = "wrong_phase"
    """wrong_phase, precondition_not_met, forbidden_in_state or manual_filter."""
    shadow: bool = False
    """Shadow mode: enforcement would have removed it; it was left in place."""


class TransitionBlocked(BaseModel):
    type: Literal["transition.blocked"] = "transition.blocked"
    reason: str
    """`ambiguous_phase_transition`: one model response asked for two different phase outcomes."""
    outcomes: list[str]


class PhaseTransition(BaseModel):
    type: Literal["phase.transition"] = "phase.transition"
    agent: str
    previous: str
    """The stage the agent's tool calls showed until now: exploring, acting or validating."""
    entered: str
    reason: str


class ExplorationSaturation(BaseModel):
    type: Literal["exploration.saturation"] = "exploration.saturation"
    agent: str
    reads: int
    stale_turns: int


class AgentNudged(BaseModel):
    type: Literal["agent.nudged"] = "agent.nudged"
    agent: str
    kind: Literal["saturation", "finish", "validate"]
    message: str


class StepFailed(BaseModel):
    type: Literal["step.failed"] = "step.failed"
    step: str
    error: str
    strategy: str
    """What the phase does about it: raise, ignore, retry or repair."""
    attempt: int = 1


class RepairStarted(BaseModel):
    type: Literal["phase.repair.started"] = "phase.repair.started"
    step: str
    error: str
    attempt: int


class RepairSucceeded(BaseModel):
    type: Literal["phase.repair.succeeded"] = "phase.repair.succeeded"
    step: str
    candidate_key: str | None = None
    cv_score: float | None = None


class RepairFailed(BaseModel):
    type: Literal["phase.repair.failed"] = "phase.repair.failed"
    step: str
    error: str


class Log(BaseModel):
    type: Literal["log"] = "log"
    level: Literal["debug", "info", "warning", "error"] = "info"
    message: str


EventData = Annotated[
    MissionStarted
    | MissionForked
    | MissionCompleted
    | MissionFailed
    | MissionCancelled
    | PhaseStarted
    | PhaseCompleted
    | PhaseFailed
    | PhaseFallback
    | BudgetWarning
    | CompetitionSelected
    | ResearchFinding
    | MediaGallery
    | CandidateEvaluated
    | EvolutionGeneration
    | EvolutionEnsemble
    | EvolutionPick
    | ApprovalRequested
    | ApprovalGranted
    | ApprovalRejected
    | SubmissionCreated
    | SubmissionScored
    | ToolNarrowed
    | TransitionBlocked
    | PhaseTransition
    | ExplorationSaturation
    | AgentNudged
    | StepFailed
    | RepairStarted
    | RepairSucceeded
    | RepairFailed
    | Log,
    Field(discriminator="type"),
]


EVENT_TYPES: tuple[str, ...] = tuple(
    get_args(member.model_fields["type"].annotation)[0] for member in get_args(get_args(EventData)[0])
)
"""Every event type, in the order above: what a page subscribes to on the stream."""


class Event(BaseModel):
    """The envelope: `{mission_id, seq, ts, type, phase, data}`; `seq` counts 1, 2, 3… per mission."""

    mission_id: str
    seq: int
    ts: datetime
    type: str
    phase: str | None
    data: EventData
