"""Where candidates are evaluated: sandboxed processes on this machine, or a Dask cluster.

Both run the same `evaluate` (render, sandbox, score from out-of-fold predictions). On a cluster, the mission
folder must be on storage the workers share (the same paths are used on both sides).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_k.ml.evaluate import Evaluation, EvaluationRequest
from agent_k.ml.families import WARM_PRELOAD
from agent_k.ml.requests import evaluate_solution
from agent_k.sandbox import run_sandboxed
from agent_k.sandbox.warm import WarmPool


class ExecutorError(Exception):
    """The executor cannot be used; the message says why."""


class Evaluator(Protocol):
    parallelism: int

    async def evaluate(self, request: EvaluationRequest) -> Evaluation: ...

    def close(self) -> None: ...


@dataclass
class LocalEvaluator:
    """Sandboxed child processes of this one, `parallelism` at a time; our templates run in warm workers
    (`agent_k.sandbox.warm`) unless `warm` is off."""

    parallelism: int
    warm: bool = True
    _pool: WarmPool = field(init=False)

    def __post_init__(self) -> None:
        self._pool = WarmPool(self.parallelism, WARM_PRELOAD)

    async def evaluate(self, request: EvaluationRequest) -> Evaluation:
        return await evaluate_solution(request, run=self._pool.run if self.warm else run_sandboxed)

    def close(self) -> None:
        self._pool.close()


class DaskEvaluator:
    """Candidates run on a Dask distributed cluster, through its `concurrent.futures` executor; each Dask worker
    holds warm workers of its own (`agent_k.ml.dask_warm`); with `warm` off, each candidate starts cold there."""

    def __init__(self, address: str, *, timeout_s: float = 10.0, warm: bool = True) -> None:
        try:
            import distributed

            from agent_k.ml.dask_warm import WarmPoolPlugin, evaluate_on_worker
        except ImportError as exc:
            raise ExecutorError("--executor tcp://… needs Dask: pip install 'agent-k[dask]'") from exc
        try:
            client_type: Any = distributed.Client  # distributed's constructor is untyped
            self._client: Any = client_type(address, timeout=f"{timeout_s}s")
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
        if warm:  # every worker, and each that joins later, gets its warm pool
            self._client.register_plugin(WarmPoolPlugin())
        self._task, self._warm = evaluate_on_worker, warm
        self._executor = self._client.get_executor(pure=False)
        self.parallelism = max(1, sum(self._client.nthreads().values()))

    async def evaluate(self, request: EvaluationRequest) -> Evaluation:
        future = self._executor.submit(self._task, request, self._warm)
        try:
            result: Evaluation = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise
        return result

    def close(self) -> None:
        self._client.close()


def make_evaluator(executor: str | None, parallelism: int) -> Evaluator:
    """`None` or `local`: this machine; `tcp://HOST:PORT`: the Dask scheduler there."""
    if executor in (None, "", "local"):
        return LocalEvaluator(parallelism)
    assert executor is not None
    host, _, port = executor.removeprefix("tcp://").rpartition(":")
    if executor.startswith("tcp://") and host and port.isdigit() and 0 < int(port) < 65536:
        return DaskEvaluator(executor)
    raise ExecutorError(f"unknown executor {executor!r}: use 'local' or tcp://HOST:PORT")
