"""SSE fan-out: one mission emits N events while S subscribers follow it over HTTP from `agent-k serve`.

Three processes, as in production: the API server, an emitter writing through `EventEmitter` (what a worker
does), and the subscribers. Checks that every subscriber receives every event once, in order, and reports
emit-to-receipt latency (the emitter stamps each event; all processes share the clock).

    python benchmarks/events.py [--events 5000] [--subscribers 20] [--rate 500] [--database-url URL]

`--rate 0` emits as fast as the store takes them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx

from agent_k.events.emitter import EventEmitter
from agent_k.events.models import Log, MissionCompleted
from agent_k.store.repository import Store

MISSION = "fanout"


def _emit(url: str, events: int, rate: float) -> None:
    store = Store.open(url)

    async def emit_all() -> None:
        emitter = await EventEmitter.open(store, MISSION)
        started = time.perf_counter()
        for i in range(events):
            if rate:
                delay = started + i / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            await emitter.emit(Log(level="info", message=f"event {i}"))
        await emitter.emit(MissionCompleted(elapsed_s=0))

    asyncio.run(emit_all())
    store.close()


async def _subscribe(base: str, connected: asyncio.Semaphore) -> list[tuple[int, float]]:
    """(seq, latency in seconds) for every event until the stream closes."""
    received = []
    async with (
        httpx.AsyncClient(timeout=None) as client,
        client.stream("GET", f"{base}/missions/{MISSION}/events") as response,
    ):
        connected.release()
        seq, ts = 0, 0.0
        async for line in response.aiter_lines():
            now = time.time()
            if line.startswith("id: "):
                seq = int(line[4:])
            elif line.startswith("data: "):
                ts = datetime.fromisoformat(json.loads(line[6:])["ts"]).timestamp()
            elif not line and seq:
                received.append((seq, now - ts))
    return received


async def _follow(base: str, subscribers: int, start_emitter: multiprocessing.Process) -> list[list[tuple[int, float]]]:
    connected = asyncio.Semaphore(0)
    tasks = [asyncio.create_task(_subscribe(base, connected)) for _ in range(subscribers)]
    for _ in range(subscribers):
        await connected.acquire()
    await asyncio.sleep(0.5)  # let every stream reach the live feed
    start_emitter.start()
    return await asyncio.gather(*tasks)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--subscribers", type=int, default=20)
    parser.add_argument("--rate", type=float, default=100.0, help="events per second; 0 = as fast as possible")
    parser.add_argument("--database-url", help="default: a fresh SQLite file")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="agent-k-events-"))
    url = args.database_url or f"sqlite:///{home / 'agent_k.db'}"
    store = Store.open(url)
    store.create_mission(
        MISSION, competition=None, platform="local", mode="workflow", budget_s=1, options="{}", status="running"
    )
    port = _free_port()
    env = {**os.environ, "AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": url}
    agent_k = str(Path(sys.executable).parent / "agent-k")
    server = subprocess.Popen(
        [agent_k, "serve", "--no-worker", "--port", str(port)], env=env, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        emitter = multiprocessing.get_context("spawn").Process(target=_emit, args=(url, args.events, args.rate))
        started = time.perf_counter()
        streams = asyncio.run(_follow(base, args.subscribers, emitter))
        wall = time.perf_counter() - started
        emitter.join()
    finally:
        server.terminate()
        server.wait(timeout=20)
        with store.engine.begin() as connection:  # leave a shared PostgreSQL database as it was
            for table in ("events", "missions"):
                connection.exec_driver_sql(
                    f"DELETE FROM {table} WHERE " + ("mission_id" if table == "events" else "id") + f" = '{MISSION}'"
                )
        store.close()

    expected = list(range(1, args.events + 2))
    lost = sum(1 for stream in streams if [seq for seq, _ in stream] != expected)
    latencies = sorted(latency for stream in streams for _, latency in stream)
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
    report = {
        "database": store.engine.dialect.name,
        "events": args.events + 1,
        "subscribers": args.subscribers,
        "rate": args.rate or "max",
        "streams_incomplete_or_out_of_order": lost,
        "deliveries": len(latencies),
        "p50_ms": round(p50, 2),
        "p99_ms": round(p99, 2),
        "max_ms": round(latencies[-1] * 1000, 2),
        "wall_s": round(wall, 2),
    }
    print(json.dumps(report))
    if lost:
        sys.exit(f"{lost} of {args.subscribers} streams lost or reordered events")


if __name__ == "__main__":
    main()
