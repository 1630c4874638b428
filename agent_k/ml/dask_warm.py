"""Warm workers inside each Dask worker process, so that a candidate on a cluster starts as fast as a local one.

A Dask task is a function call in a worker's thread: run there as it is, each candidate would start a cold
sandboxed interpreter (about 4 s on two cores, against 0.5 s warm). `WarmPoolPlugin` is a worker plugin that gives
each Dask worker the local evaluator's `WarmPool` (fork-server sandboxes with the libraries imported, one clean
child per job: `agent_k.sandbox.warm`) and an event loop of its own in a thread to drive it; tasks hand their
evaluation to that loop. Imported only where a Dask executor is used (`pip install 'agent-k[dask]'`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

from distributed import WorkerPlugin, get_worker

from agent_k.ml.evaluate import Evaluation, EvaluationRequest
from agent_k.ml.families import WARM_PRELOAD
from agent_k.ml.requests import evaluate_solution
from agent_k.sandbox.warm import WarmPool

PLUGIN = "agent-k-warm"


class WarmPoolPlugin(WorkerPlugin):
    """One warm pool per Dask worker process, sized to the worker's threads (its parallel tasks)."""

    name = PLUGIN

    def setup(self, worker: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="agent-k-warm", daemon=True)
        self.thread.start()
        self.pool = WarmPool(max(1, int(worker.state.nthreads)), WARM_PRELOAD)

    def teardown(self, worker: Any) -> None:
        self.pool.close()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)

    def run(self, evaluation: Coroutine[Any, Any, Evaluation]) -> Evaluation:
        """Drive an evaluation on this worker's warm loop; the calling task's thread waits for it."""
        return asyncio.run_coroutine_threadsafe(evaluation, self.loop).result()


def evaluate_on_worker(request: EvaluationRequest, warm: bool = True) -> Evaluation:
    """Runs on a Dask worker: the same sandboxed evaluation as on this machine, in the worker's warm pool (or cold:
    where asked, or on a worker the plugin has not reached)."""
    plugin = get_worker().plugins.get(PLUGIN)
    if not warm or not isinstance(plugin, WarmPoolPlugin):
        return asyncio.run(evaluate_solution(request))
    return plugin.run(evaluate_solution(request, run=plugin.pool.run))
