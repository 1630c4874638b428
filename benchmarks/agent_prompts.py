"""Prompt size of the Evolver as a search grows: generation 1 against generation 30.

A real mission (agent mode, the built-in penguins by default) runs with a scripted Evolver (`FunctionModel`,
in place of the LLM) that reads what a model would read each generation (the candidate table and the research
findings, summaries first), asks for one candidate's details, and proposes a new recipe, so the search goes on.
The prompt of its answering request is measured in tokens as pydantic-ai counts a `FunctionModel`'s usage
(words of the messages), for every generation.

    python benchmarks/agent_prompts.py [--competition penguins] [--budget 150] [--generations 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store


def prompt_tokens(messages: list[ModelMessage]) -> int:
    """Words in every request part (instructions, tool returns), as pydantic-ai estimates a FunctionModel's."""
    words = 0
    for message in messages:
        if isinstance(message, ModelRequest):
            words += len((message.instructions or "").split())
            for part in message.parts:
                content = part.content if hasattr(part, "content") else ""
                text = content if isinstance(content, str) else json.dumps(content, default=str)
                words += len(text.split())
    return words


def scripted_evolver(sizes: list[int], rng: random.Random) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools = {tool.name for tool in info.function_tools}
        output = info.output_tools[0].name
        if "candidates_so_far" not in tools:  # the Scientist: a plan, so Research goes on
            plan = {"findings": [], "model_families": ["lightgbm", "linear"], "drop_columns": []}
            return ModelResponse(parts=[ToolCallPart(output, plan)])
        returns = {
            p.tool_name: p.content
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        }
        if "candidates_so_far" not in returns:
            return ModelResponse(
                parts=[ToolCallPart("candidates_so_far", {}, tool_call_id="t"), ToolCallPart("findings_summary", {})]
            )
        best = returns["candidates_so_far"]["candidates"][0]["key"]  # type: ignore[index]
        if "candidate_details" not in returns:
            return ModelResponse(parts=[ToolCallPart("candidate_details", {"candidate_key": best})])
        sizes.append(prompt_tokens(messages))
        recipe = {"family": "linear", "params": {"C": round(rng.uniform(0.01, 10), 4)}}
        proposal = {"kind": "recipe", "parent": best, "recipe": recipe}
        return ModelResponse(parts=[ToolCallPart(output, {"proposals": [proposal]})])

    return FunctionModel(respond)


def measure(competition: str, budget: float) -> list[int]:
    sizes: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        url = f"sqlite:///{home / 'agent_k.db'}"
        settings = Settings(home=home, database_url=url, agent_requests=10_000, agent_tokens=None)
        LocalPlatform(settings.competitions_dir).ensure(competition)
        store = Store.open(url)
        runner = MissionRunner(settings, store, model=scripted_evolver(sizes, random.Random(0)))
        spec = MissionSpec(
            mission_id="prompts", criteria=Criteria(competition=competition), mode=Mode.agent, time_budget=budget
        )
        runner.create(spec)
        result = asyncio.run(runner.run("prompts"))
        runner.evaluator.close()
        if not result.success:
            raise SystemExit(f"the mission failed: {result.error}: {result.detail}")
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--competition", default="penguins")
    parser.add_argument("--budget", type=float, default=150.0)
    parser.add_argument("--generations", type=int, default=30)
    args = parser.parse_args()
    sizes = measure(args.competition, args.budget)
    report: dict[str, Any] = {"competition": args.competition, "generations": len(sizes), "tokens": sizes}
    if len(sizes) >= args.generations:
        first, last = sizes[0], sizes[args.generations - 1]
        report |= {"generation_1": first, f"generation_{args.generations}": last, "ratio": round(last / first, 3)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
