"""`agent-k worker`: run queued missions from the store until interrupted."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Annotated

import typer

from agent_k.cli.common import load_settings, open_store


def worker(
    poll: Annotated[float, typer.Option(min=0.05, help="seconds between looks for queued missions")] = 1.0,
) -> None:
    """Claim queued missions (and missions whose worker died) and run them, one at a time."""
    from agent_k.worker import Worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = load_settings()
    runner = Worker(settings, open_store(settings), poll_s=poll)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await runner.run_forever(stop)

    asyncio.run(main())
