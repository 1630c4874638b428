"""A local OpenAI-compatible server (Chat Completions) that stands in for a remote LLM in tests.

It answers as AGENT-K's agents would be answered: in Research it reads the column summaries and returns a
plan; in Evolution it reads the candidates and proposes a recipe. With `fail=True` it answers every request
with HTTP 500. Response shapes follow the Chat Completions API (`choices[0].message.tool_calls`, `usage`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.support import local_server


@dataclass
class FakeOpenAI:
    fail: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: set[str] = field(default_factory=set)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def completions(request: Request) -> JSONResponse:
            body = await request.json()
            self.requests.append(body)
            self.authorizations.add(request.headers.get("authorization", ""))
            if self.fail:
                return JSONResponse({"error": {"message": "upstream exploded", "type": "server_error"}}, 500)
            return JSONResponse(_completion(body))

        return app


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    tools = {tool["function"]["name"] for tool in body.get("tools", [])}
    output = next(name for name in tools if name.startswith("final_result"))
    results = {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    if "target_stats" in tools:  # the Scientist's (Research) tools
        if "call_columns" not in results:
            return _calls(("call_columns", "column_summaries", {}))
        plan = {"findings": ["scripted"], "model_families": ["lightgbm", "linear"], "drop_columns": []}
        return _calls(("call_plan", output, plan))
    if "candidates_so_far" in tools:
        if "call_candidates" not in results:
            return _calls(("call_candidates", "candidates_so_far", {"limit": 3}))
        best = json.loads(results["call_candidates"])["candidates"][0]["key"]
        proposal = {"kind": "recipe", "parent": best, "recipe": {"family": "linear", "params": {"C": 0.5}}}
        return _calls(("call_proposals", output, {"proposals": [proposal]}))
    return _calls(("call_out", output, {}))


def _calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        for call_id, name, arguments in calls
    ]
    return {
        "id": "chatcmpl-agent-k",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "gpt-4o-mini",  # a model genai-prices knows, so the mission can price its usage
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
    }


@contextmanager
def serving(fake: FakeOpenAI) -> Iterator[str]:
    """Serve `fake` on 127.0.0.1 in a thread; yields its base URL (`…/v1`)."""
    with local_server.serving(fake.app()) as port:
        yield f"http://127.0.0.1:{port}/v1"
