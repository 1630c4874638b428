"""Run a phase's agent, falling back to the workflow path when the model fails (docs/agents.md, "Modes").

A failure is a model or transport error, or output still invalid after its retries. In `auto` mode the phase
records `phase.fallback {reason}` and its mode becomes `workflow`; in `agent` mode the failure ends the mission
instead. A phase that runs its agent many times (Evolution, once per generation) may use up its allowance of
requests or tokens: that is a budget spent, not a failure, so the workflow path carries on and one `log` says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx
from pydantic_ai.exceptions import AgentRunError, ModelHTTPError, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.run import AgentRunResult
from pydantic_ai.usage import UsageLimits

from agent_k import tracing
from agent_k.events.models import Log
from agent_k.llm import ModelUnavailable
from agent_k.mission.agents import runs_agent
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.agents.errors import AgentFailed
from agent_k.mission.context import GraphContext
from agent_k.mission.lifecycle import book_usage, fall_back
from agent_k.mission.phases import Mode, Phase
from agent_k.mission.state import MissionState

T = TypeVar("T")

AGENT_FAILURES = (AgentRunError, httpx.HTTPError, ModelUnavailable)
"""pydantic-ai's model, transport, usage-limit and invalid-output errors all derive from `AgentRunError`."""


def usage_limits(deps: AgentDeps) -> UsageLimits:
    """What is left of the phase's allowance (a phase may run its agent more than once, as Evolution does)."""
    settings, budget, phase = deps.mission.settings, deps.state.budget, deps.phase
    tokens = settings.agent_tokens - budget.llm_tokens.get(phase, 0) if settings.agent_tokens else None
    requests = settings.agent_requests - budget.llm_requests.get(phase, 0)
    return UsageLimits(
        request_limit=max(0, requests), total_tokens_limit=max(0, tokens) if tokens is not None else None
    )


async def run_agent(
    state: MissionState,
    context: GraphContext,
    phase: Phase,
    run: Callable[[AgentDeps], Awaitable[AgentRunResult[T]]],
) -> T | None:
    """The agent's output, or None when the phase runs its workflow path (workflow mode, or a fallback)."""
    if not runs_agent(state, phase):
        return None
    budget = state.budget
    if state.options.max_cost_usd is not None and budget.cost_usd >= state.options.max_cost_usd:
        reason = f"cost limit reached (${budget.cost_usd:.6f} of ${state.options.max_cost_usd})"
        await fall_back(state, context, phase, reason)
        return None
    try:
        if context.model is None:
            raise ModelUnavailable(context.model_error or "no model configured")
        deps = AgentDeps(phase=phase, state=state, mission=context)
        if _spent(usage_limits(deps)):
            raise UsageLimitExceeded("the phase's allowance is spent")
        with tracing.within(context.phase_span):  # pydantic-ai's model-call spans nest under the phase
            result = await run(deps)
    except UsageLimitExceeded:
        budget.allowance_spent.append(phase)
        message = f"the {phase.value} agent used up its allowance of requests or tokens; its workflow carries on"
        await context.events.emit(Log(message=message), phase.value)
        return None
    except AGENT_FAILURES as exc:
        reason = failure_reason(exc)
        if state.options.mode is Mode.agent:
            raise AgentFailed(f"{phase.value} agent failed: {reason}") from exc
        await fall_back(state, context, phase, reason)
        return None
    usage = result.usage
    cost = cost_usd_of(result.new_messages())
    book_usage(state, phase, tokens=usage.total_tokens or 0, requests=usage.requests, cost_usd=cost)
    return result.output


def _spent(limits: UsageLimits) -> bool:
    return limits.request_limit == 0 or limits.total_tokens_limit == 0


def cost_usd_of(messages: list[ModelMessage]) -> float:
    """What the responses cost, where genai-prices knows the model's price (else nothing is added)."""
    total = 0.0
    for message in messages:
        if isinstance(message, ModelResponse) and message.model_name:
            try:
                total += float(message.cost().total_price)
            except (LookupError, ValueError, AssertionError):
                continue
    return total


def failure_reason(exc: BaseException) -> str:
    """One line naming the failure, never a response body (it could echo a prompt)."""
    kind = type(exc).__name__
    if isinstance(exc, ModelHTTPError):
        return f"{kind}: HTTP {exc.status_code} from {exc.model_name}"
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{kind}: {message[:200]}" if message else kind
