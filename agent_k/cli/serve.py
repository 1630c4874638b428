"""`agent-k serve`: the mission API over HTTP (uvicorn)."""

from __future__ import annotations

import ipaddress
import signal
import subprocess
import sys
from typing import Annotated

import typer

from agent_k.cli.common import fail_input, load_settings


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _die_with_parent() -> None:
    """On Linux, the embedded worker gets SIGTERM when `serve` dies, even by kill -9, so a restarted API
    never finds an orphaned worker beside its new one."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)


def serve(
    host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    with_worker: Annotated[bool, typer.Option("--worker/--no-worker", help="run queued missions here too")] = True,
) -> None:
    """Serve the mission API (OpenAPI docs at /docs). Beyond loopback it needs AGENT_K_API_TOKEN."""
    settings = load_settings()
    if not _is_loopback(host) and settings.api_token is None:
        fail_input(f"refusing to serve on {host} without a token: set AGENT_K_API_TOKEN, or bind 127.0.0.1")
    import uvicorn

    from agent_k.api import create_app

    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"dashboard: http://{shown}:{port}/  (API docs: http://{shown}:{port}/docs)", err=True)
    # The embedded worker is a child process: phases never run in the API's event loop.
    worker = subprocess.Popen([sys.argv[0], "worker"], preexec_fn=_die_with_parent) if with_worker else None
    try:
        # Open event streams (a dashboard left open) would otherwise hold a shutdown until their missions end.
        uvicorn.run(
            create_app(settings),
            host=host,
            port=port,
            log_level="info",
            access_log=False,
            timeout_graceful_shutdown=5,
        )
    finally:
        if worker is not None:
            worker.terminate()
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()
