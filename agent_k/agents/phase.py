"""Run a phase's agent, falling back to the workflow path when the model fails (DESIGN §9).

A failure is a model or transport error, a usage limit, or output still invalid after its retries. In `auto`
mode the phase records `phase.fallback {reason}` and its mode becomes `workflow`; in `agent` mode the failure
ends the mission instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx
from pydantic_ai.exceptions import AgentRunError, ModelHTTPError
from pydantic_ai.run import AgentRunResult
from pydantic_ai.usage import UsageLimits

from agent_k.agents.deps import AgentDeps
from agent_k.agents.errors import AgentFailed
from agent_k.agents.models import ModelUnavailable
from agent_k.events.models import PhaseFallback
from agent_k.mission.context import GraphContext
from agent_k.mission.state import MissionState, Mode, Phase

T = TypeVar("T")

AGENT_FAILURES = (AgentRunError, httpx.HTTPError, ModelUnavailable)
"""pydantic-ai's model, transport, usage-limit and invalid-output errors all derive from `AgentRunError`."""


def usage_limits(context: GraphContext) -> UsageLimits:
    settings = context.settings
    return UsageLimits(request_limit=settings.agent_requests, total_tokens_limit=settings.agent_tokens)


async def run_agent(
    state: MissionState,
    context: GraphContext,
    phase: Phase,
    run: Callable[[AgentDeps], Awaitable[AgentRunResult[T]]],
) -> T | None:
    """The agent's output, or None when the phase runs its workflow path (workflow mode, or a fallback)."""
    if state.phase_modes.get(phase) != Mode.agent.value:
        return None
    try:
        if context.model is None:
            raise ModelUnavailable(context.model_error or "no model configured")
        result = await run(AgentDeps(phase=phase, state=state, mission=context))
    except AGENT_FAILURES as exc:
        reason = _reason(exc)
        if state.mode is Mode.agent:
            raise AgentFailed(f"{phase.value} agent failed: {reason}") from exc
        state.phase_modes[phase] = Mode.workflow.value
        if state.phase_history and state.phase_history[-1].phase == phase:
            state.phase_history[-1].mode, state.phase_history[-1].fallback = Mode.workflow.value, reason
        context.events.emit(PhaseFallback(reason=reason), phase.value)
        return None
    usage = result.usage
    state.budget.llm_tokens[phase] = state.budget.llm_tokens.get(phase, 0) + (usage.total_tokens or 0)
    state.budget.llm_requests[phase] = state.budget.llm_requests.get(phase, 0) + usage.requests
    return result.output


def _reason(exc: BaseException) -> str:
    """One line naming the failure, never a response body (it could echo a prompt)."""
    kind = type(exc).__name__
    if isinstance(exc, ModelHTTPError):
        return f"{kind}: HTTP {exc.status_code} from {exc.model_name}"
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{kind}: {message[:200]}" if message else kind
