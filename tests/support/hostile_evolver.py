"""A model whose Evolver proposes what a hostile model would (a script, a recipe), for the hostile suites: it
reads the candidates once, then proposes `proposal(parent)` for the best one, every time it is asked, and records
what the mission answers its proposals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


def hostile_evolver(proposal: Callable[[str], dict[str, Any]], answers: list[str] | None = None) -> FunctionModel:
    """`proposal` makes the proposal from the parent's key; `answers` collects what the mission said to them."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        output = info.output_tools[0].name
        if answers is not None:
            answers.extend(
                str(part.content)
                for message in messages[-1:]
                if isinstance(message, ModelRequest)
                for part in message.parts
                if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name == output
            )
        if "candidates_so_far" not in {tool.name for tool in info.function_tools}:  # Research: a plain plan
            plan = {"findings": [], "model_families": ["linear", "lightgbm"], "drop_columns": []}
            return ModelResponse(parts=[ToolCallPart(output, plan)])
        returned = [
            part.content
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart) and part.tool_name == "candidates_so_far"
        ]
        if not returned:
            return ModelResponse(parts=[ToolCallPart("candidates_so_far", {"limit": 1})])
        parent = returned[-1]["candidates"][0]["key"]
        return ModelResponse(parts=[ToolCallPart(output, {"proposals": [proposal(parent)]})])

    return FunctionModel(respond)
