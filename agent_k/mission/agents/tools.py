"""Phase-scoped tools: the phase contract says where each tool may be used, and why it is removed where not.

Before each model request the agent's toolset is narrowed (`PrepareTools`): a tool is removed for being of
another phase (`wrong_phase`), for a fact the mission lacks (`precondition_not_met`), for what the mission's
state forbids (`forbidden_in_state`: anything that spends once the cost limit is reached), or because an
operator removed it (`manual_filter`). Each removal other than `wrong_phase` is recorded once as
`tool.narrowed`; a call to a removed tool reaches pydantic-ai as an unknown tool, and before the next request
the model is told why it was refused (`ProcessHistory`). In shadow mode (`AGENT_K_CONTRACTS=shadow`) the same
removals are recorded, marked `shadow`, and nothing is removed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, PrepareTools, ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

from agent_k.events.models import ToolNarrowed
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.contract import MISSION_CONTRACT, PhaseContract, Precondition, ToolSpec
from agent_k.mission.control import operator_filter
from agent_k.mission.state import MissionState


class Removal(StrEnum):
    wrong_phase = "wrong_phase"
    precondition_not_met = "precondition_not_met"
    forbidden_in_state = "forbidden_in_state"
    manual_filter = "manual_filter"


PRECONDITIONS: dict[Precondition, Callable[[MissionState], bool]] = {
    Precondition.data_profiled: lambda state: state.research_findings is not None,
    Precondition.candidates_exist: lambda state: state.evolution_state.best_candidate_key is not None,
}


def removal(tool: ToolSpec, phase: str, state: MissionState, operator: frozenset[str]) -> tuple[Removal, str] | None:
    """Why `tool` may not be offered now, or None: the contract's phases, then its preconditions, then the
    mission's state, then the operator's filter."""
    if tool.phases and phase not in tool.phases:
        return Removal.wrong_phase, f"'{tool.name}' is a {', '.join(tool.phases)} tool; it is not available in {phase}"
    unmet = [p.value for p in tool.requires if not PRECONDITIONS[p](state)]
    if unmet:
        return Removal.precondition_not_met, f"'{tool.name}' needs {', '.join(unmet)}"
    budget = state.budget
    if tool.spends and state.options.max_cost_usd is not None and budget.cost_usd >= state.options.max_cost_usd:
        limit = f"the cost limit (${state.options.max_cost_usd}) is reached"
        return Removal.forbidden_in_state, f"'{tool.name}' spends, and {limit}"
    if tool.name in operator:
        return Removal.manual_filter, f"an operator removed '{tool.name}' from this mission"
    return None


@dataclass
class PhaseTools:
    """The mission's tool functions, each declared in the contract; `toolset()` and `capabilities()` give them
    to an agent, narrowed by the contract before every model request."""

    contract: PhaseContract = MISSION_CONTRACT
    _toolset: FunctionToolset[AgentDeps] = field(default_factory=FunctionToolset)

    def tool(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """Register a tool taking `RunContext[AgentDeps]` first; the contract must declare it."""
        if self.contract.tool(function.__name__) is None:
            raise ValueError(f"tool {function.__name__} is not declared in the phase contract")
        self._toolset.add_function(function, takes_ctx=True)
        return function

    def toolset(self) -> FunctionToolset[AgentDeps]:
        return self._toolset

    def capabilities(self) -> list[AbstractCapability[AgentDeps]]:
        return [PrepareTools(self._narrow), ProcessHistory(self._explain_refusals)]

    async def _narrow(self, ctx: RunContext[AgentDeps], tools: list[ToolDefinition]) -> list[ToolDefinition]:
        deps = ctx.deps
        row = await asyncio.to_thread(deps.mission.store.get_mission, deps.state.mission_id)
        operator = frozenset(operator_filter(row))
        shadow = deps.mission.settings.contracts == "shadow"
        offered = []
        for definition in tools:
            spec = self.contract.tool(definition.name)
            why = removal(spec, deps.phase.value, deps.state, operator) if spec is not None else None
            if why is None:
                offered.append(definition)
                continue
            code, reason = why
            deps.removed[definition.name] = code.value
            if code is not Removal.wrong_phase or shadow:
                await _record(deps, definition.name, code, reason, shadow=shadow)
            if shadow:
                offered.append(definition)
        return offered

    async def _explain_refusals(self, ctx: RunContext[AgentDeps], messages: list[ModelMessage]) -> list[ModelMessage]:
        deps = ctx.deps
        for message in messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                spec = self.contract.tool(getattr(part, "tool_name", ""))
                if not _is_unknown_tool_retry(part) or spec is None:
                    continue
                assert isinstance(part, ToolReturnPart)
                why = removal(spec, deps.phase.value, deps.state, frozenset())
                code, reason = why or (Removal.manual_filter, f"an operator removed '{spec.name}' from this mission")
                part.content = f"Refused: {reason}. Use the tools you were given."
                if part.tool_call_id not in deps.refused_calls:
                    deps.refused_calls.add(part.tool_call_id)
                    await _record(deps, part.tool_name, code, reason, shadow=False, force=True)
        return messages


async def _record(deps: AgentDeps, tool: str, code: Removal, reason: str, *, shadow: bool, force: bool = False) -> None:
    """One `tool.narrowed` per tool and reason in a run (a refused call is always recorded)."""
    key = f"{tool}:{code.value}"
    if key in deps.recorded_removals and not force:
        return
    deps.recorded_removals.add(key)
    await deps.events.emit(ToolNarrowed(tool=tool, code=code.value, reason=reason, shadow=shadow), deps.phase.value)


def _is_unknown_tool_retry(part: object) -> bool:
    retry = getattr(part, "retry", None)
    return isinstance(part, ToolReturnPart) and retry is not None and retry.cause == "unknown_tool"
