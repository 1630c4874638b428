"""Phase-scoped tools: every tool names the phases where it may be used (none: all of them).

Before each model request the agent's toolset is narrowed to the current phase (`PrepareTools`), so the model
only sees what it may call. A call to a tool of another phase reaches pydantic-ai as an unknown tool; before
the next request we tell the model why it was refused and record a `tool.narrowed` event (`ProcessHistory`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, PrepareTools, ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

from agent_k.events.models import ToolNarrowed
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.phases import Phase


@dataclass
class PhaseTools:
    """A registry of tools with their phases; `toolset()` and `capabilities()` give them to an agent."""

    _phases: dict[str, frozenset[Phase]] = field(default_factory=dict)
    _toolset: FunctionToolset[AgentDeps] = field(default_factory=FunctionToolset)

    def tool(self, *phases: Phase) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool taking `RunContext[AgentDeps]` first, usable in `phases` (all, if none)."""

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self._phases[function.__name__] = frozenset(phases)
            self._toolset.add_function(function, takes_ctx=True)
            return function

        return register

    def allowed(self, name: str, phase: Phase) -> bool:
        phases = self._phases.get(name)
        return phases is not None and (not phases or phase in phases)

    def phases_of(self, name: str) -> frozenset[Phase] | None:
        return self._phases.get(name)

    def toolset(self) -> FunctionToolset[AgentDeps]:
        return self._toolset

    def capabilities(self) -> list[AbstractCapability[AgentDeps]]:
        return [PrepareTools(self._narrow), ProcessHistory(self._explain_refusals)]

    def _narrow(self, ctx: RunContext[AgentDeps], tools: list[ToolDefinition]) -> list[ToolDefinition]:
        return [tool for tool in tools if self.allowed(tool.name, ctx.deps.phase)]

    async def _explain_refusals(self, ctx: RunContext[AgentDeps], messages: list[ModelMessage]) -> list[ModelMessage]:
        for message in messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                phases = self.phases_of(getattr(part, "tool_name", ""))
                if not _is_unknown_tool_retry(part) or phases is None:
                    continue
                assert isinstance(part, ToolReturnPart)
                where = ", ".join(sorted(p.value for p in phases))
                reason = f"'{part.tool_name}' is a {where} tool; it is not available in {ctx.deps.phase.value}"
                part.content = f"Refused: {reason}. Use the tools you were given."
                if part.tool_call_id not in ctx.deps.refused_calls:
                    ctx.deps.refused_calls.add(part.tool_call_id)
                    await ctx.deps.events.emit(ToolNarrowed(tool=part.tool_name, reason=reason), ctx.deps.phase.value)
        return messages


def _is_unknown_tool_retry(part: object) -> bool:
    retry = getattr(part, "retry", None)
    return isinstance(part, ToolReturnPart) and retry is not None and retry.cause == "unknown_tool"
