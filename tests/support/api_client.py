"""Test helpers for the HTTP API: start `agent-k serve` in a child process, and read SSE streams."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from tests.conftest import AGENT_K


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Api:
    base: str
    process: subprocess.Popen[bytes]


@contextlib.contextmanager
def running_api(env: dict[str, str], *args: str, port: int | None = None) -> Iterator[Api]:
    """A running `agent-k serve` child process (on `port`, to restart one where it was); stopped (if still alive)
    afterwards."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+") as log:  # not a pipe: nobody reads it while the server runs
        command = [AGENT_K, "serve", "--port", str(port), *args]
        server = subprocess.Popen(command, env={**os.environ, **env}, stderr=log)
        try:
            deadline = time.monotonic() + 60  # a loaded 2-core machine can take a while to import everything
            while not _answers(base):
                if server.poll() is not None:
                    log.seek(0)
                    raise AssertionError(f"agent-k serve exited: {log.read()}")
                assert time.monotonic() < deadline, "the API did not start"
                time.sleep(0.1)
            yield Api(base, server)
        finally:
            server.terminate()
            server.wait(timeout=20)


def serve(env: dict[str, str], *args: str) -> Iterator[str]:
    """Yield the base URL of a running `agent-k serve`; stop it afterwards (for fixtures)."""
    with running_api(env, *args) as api:
        yield api.base


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz").status_code == 200
    except httpx.TransportError:
        return False


def read_stream(url: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every SSE event of a stream until the server closes it: {id, event, data}."""
    events, current = [], {}
    with httpx.stream("GET", url, headers=headers, timeout=60) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if not line:
                if "data" in current:
                    events.append(current)
                current = {}
            elif not line.startswith(":"):
                field, _, value = line.partition(": ")
                current[field] = json.loads(value) if field == "data" else value
    return events
