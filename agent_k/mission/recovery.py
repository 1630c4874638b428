"""Error strategies (docs/agents.md, "Error strategies"): what a phase does when one of its steps fails.

A step is one unit of a phase's work with an intent (Prototype's baseline, one Evolution generation,
Submission's upload). When it raises `StepError`, the phase's strategy decides: `raise` (the mission fails
with the step's reason), `ignore` (recorded; the phase goes on where the graph allows), `retry` (again, with
backoff), or `repair` (an agent gets a goal scoped to the step). Every failure is recorded in the phase's
`phase_history` entry and as a `step.failed` event. A strategy a step cannot use becomes `raise`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryError, retry_if_exception_type, stop_after_attempt, wait_exponential

from agent_k.events.models import Log, StepFailed
from agent_k.mission.context import GraphContext
from agent_k.mission.contract import MISSION_CONTRACT, REPAIR_PHASES, ErrorStrategy
from agent_k.mission.phases import Mode, Phase
from agent_k.mission.state import MissionState, StepFailureRecord
from agent_k.store.status import FailureReason

T = TypeVar("T")


class StepError(Exception):
    """A step could not do what it is for; `reason` is the mission's failure code if nothing recovers it."""

    def __init__(self, reason: FailureReason, detail: str, attempts: tuple[str, ...] = ()) -> None:
        super().__init__(detail)
        self.reason, self.detail, self.attempts = reason, detail, attempts


@dataclass(frozen=True)
class Step:
    phase: Phase
    name: str
    intent: str
    """What the step is for, in a sentence: a repair agent's goal is to complete exactly this."""


def repair_available(state: MissionState, ctx: GraphContext, phase: Phase) -> bool:
    """Amphiflow repairs every repairable phase; auto with a model repairs the phases without an agent of their
    own (the others fall back to their workflow path instead)."""
    if phase.value not in REPAIR_PHASES or (state.options.model is None and ctx.model is None):
        return False
    has_agent = MISSION_CONTRACT.phase(phase.value).agent is not None
    return state.options.mode is Mode.amphiflow or (state.options.mode is Mode.auto and not has_agent)


def strategy_for(state: MissionState, ctx: GraphContext, phase: Phase) -> ErrorStrategy:
    """The settings' override or the contract's default; `repair` without a repair agent is `raise`."""
    override = ctx.settings.error_strategies.get(phase.value)
    chosen = ErrorStrategy(override) if override else MISSION_CONTRACT.phase(phase.value).strategy
    if chosen is ErrorStrategy.repair and not repair_available(state, ctx, phase):
        return ErrorStrategy.raise_
    return chosen


async def run_step(
    state: MissionState,
    ctx: GraphContext,
    step: Step,
    attempt: Callable[[], Awaitable[T]],
    *,
    repair: Callable[[StepError], Awaitable[T]] | None = None,
    can_ignore: bool = False,
) -> T | None:
    """Run `attempt` under the phase's strategy: its value, or None when a failure was ignored. Raises
    `StepError` when the mission must fail."""
    strategy = strategy_for(state, ctx, step.phase)
    if (strategy is ErrorStrategy.repair and repair is None) or (strategy is ErrorStrategy.ignore and not can_ignore):
        strategy = ErrorStrategy.raise_
    if strategy is not ErrorStrategy.retry:
        try:
            value = await attempt()
        except StepError as error:
            await _record(state, ctx, step, error, strategy, 1)
            if strategy is ErrorStrategy.ignore:
                await ctx.events.emit(Log(level="warning", message=f"{step.name} failed and was ignored"))
                return None
            if strategy is not ErrorStrategy.repair or repair is None:
                raise
            value = await repair(error)  # a repair that fails raises the step's StepError
        state.consecutive_failures.pop(step.phase, None)
        return value
    return await _retry(state, ctx, step, attempt)


async def _retry(state: MissionState, ctx: GraphContext, step: Step, attempt: Callable[[], Awaitable[T]]) -> T:
    runs = ctx.settings.retry_attempts
    number = 0
    try:
        async for trial in AsyncRetrying(
            stop=stop_after_attempt(runs),
            wait=wait_exponential(multiplier=0.5, max=8),
            retry=retry_if_exception_type(StepError),
            reraise=False,
        ):
            with trial:
                number += 1
                try:
                    value = await attempt()
                except StepError as error:
                    await _record(state, ctx, step, error, ErrorStrategy.retry, number)
                    raise
    except RetryError as exhausted:
        last = exhausted.last_attempt.exception()
        assert isinstance(last, StepError)
        raise StepError(last.reason, f"{last.detail} (after {runs} attempts)") from last
    state.consecutive_failures.pop(step.phase, None)
    return value


async def _record(
    state: MissionState, ctx: GraphContext, step: Step, error: StepError, strategy: ErrorStrategy, attempt: int
) -> None:
    detail = ctx.scrub(error.detail)
    failures = state.consecutive_failures
    failures[step.phase] = failures.get(step.phase, 0) + 1
    record = StepFailureRecord(step=step.name, error=detail[:500], strategy=strategy.value, attempt=attempt)
    if state.phase_history and state.phase_history[-1].phase == step.phase:
        state.phase_history[-1].step_failures.append(record)
    event = StepFailed(step=step.name, error=detail[:500], strategy=strategy.value, attempt=attempt)
    await ctx.events.emit(event, step.phase.value)
    phase_agent = MISSION_CONTRACT.phase(step.phase.value).agent
    fully_agent = (
        failures[step.phase] >= ctx.settings.max_consecutive_fallbacks and state.options.mode is Mode.amphiflow
    )
    if fully_agent and phase_agent and state.phase_modes.get(step.phase) != Mode.agent.value:
        state.phase_modes[step.phase] = Mode.agent.value
        message = f"{failures[step.phase]} failed steps in a row: {step.phase.value} runs fully as its agent now"
        await ctx.events.emit(Log(level="warning", message=message), step.phase.value)


@dataclass(frozen=True)
class RepairGoal:
    """What a repair agent is asked to do: resolve one failed step's error and complete its intent, no more."""

    step: Step
    reason: FailureReason
    """The step's failure code, which the mission ends with if the repair fails too."""
    error: str
    failures: tuple[str, ...] = ()
    """What the failed attempts said (each candidate's error, one line each)."""

    @classmethod
    def of(cls, step: Step, error: StepError) -> RepairGoal:
        return cls(step, error.reason, error.detail, error.attempts)

    def prompt(self) -> str:
        return (
            f"The {self.step.phase.value} phase's step '{self.step.name}' failed.\n"
            f"Its intent: {self.step.intent}\nThe error: {self.error}\n"
            "Do two things, and nothing beyond them: resolve the error, and complete this step's intent. "
            "Read the step's failure and the data files with your tools, then answer."
        )
