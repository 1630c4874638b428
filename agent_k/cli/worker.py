"""`agent-k worker`: run queued missions from the store until interrupted."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import signal
import time
from typing import IO, Annotated

import typer

from agent_k.cli.common import fail_input, load_settings, open_store, start_tracing

LOCK_WAIT_S = 5.0
"""A worker that is stopping (say, the embedded one of an API being restarted) gets this long to let go."""


def _sole_sqlite_worker(url: str) -> IO[str] | None:
    """SQLite allows one worker: hold an exclusive lock beside the database file while this one runs."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    handle = open(f"{parsed.database}.worker.lock", "a")  # noqa: SIM115 (held until the process exits)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if time.monotonic() > deadline:
                handle.close()
                fail_input(f"another worker runs on {parsed.database}: SQLite allows one (use PostgreSQL for more)")
            time.sleep(0.1)


def worker(
    poll: Annotated[float, typer.Option(min=0.05, help="seconds between looks for queued missions")] = 1.0,
) -> None:
    """Claim queued missions (and missions whose worker died) and run them, one at a time."""
    from agent_k.secrets import collect, scrub_logs
    from agent_k.worker import Worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = load_settings()
    start_tracing(settings)
    scrub_logs(collect(settings))
    store = open_store(settings)
    lock = _sole_sqlite_worker(settings.resolved_database_url)
    runner = Worker(settings, store, poll_s=poll)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await runner.run_forever(stop)

    try:
        asyncio.run(main())
    finally:
        if lock is not None:
            lock.close()
