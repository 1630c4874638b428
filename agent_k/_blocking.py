"""Run CPU-bound library code off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


async def run_blocking(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`asyncio.to_thread`, with OpenMP and BLAS limited to one thread inside the worker thread.

    A second thread that starts OpenMP regions contends with the spinning team of the first: on two cores,
    scikit-learn's HistGradientBoosting ran 9x slower in a worker thread (15.2 s instead of 1.7 s). BLAS threads
    spin the same way beside busy candidates: a stacker's fit took 0.78 s with them, 0.26 s on one thread.
    """

    def limited() -> T:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            return fn(*args, **kwargs)

    return await asyncio.to_thread(limited)
