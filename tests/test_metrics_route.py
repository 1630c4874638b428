"""`GET /metrics` read by Prometheus's own parser: its figures match the store while two workers run two
missions and a third waits, and it is behind the token."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from agent_k.store.overview import Figures, figures
from agent_k.store.repository import Store
from tests.support.api_client import running_api
from tests.test_workers import _queue, _wait_for, _worker

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
TOKEN = "metrics-test-token-0a7c"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _scrape(base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(f"{base}/metrics", headers=AUTH)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def test_metrics_match_the_store_while_two_missions_run_and_one_waits(
    home: Path, postgres_url: str, tmp_path: Path
) -> None:
    missions = {"m1": "wine", "m2": "penguins", "m3": "wine"}
    store = _queue(postgres_url, home, missions, budget=25)
    env = {"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": postgres_url, "AGENT_K_API_TOKEN": TOKEN}
    workers = [_worker({**env, "AGENT_K_WORKERS": "1"}, tmp_path / f"w{i}.log") for i in range(2)]
    try:
        with running_api(env, "--no-worker") as api:
            assert httpx.get(f"{api.base}/metrics").status_code == 401
            deadline = time.monotonic() + 90
            while (fig := figures(store)).missions.get("running", 0) < 2 or fig.live_workers < 2:
                assert time.monotonic() < deadline, fig
                time.sleep(0.2)
            done = threading.Event()

            def follow() -> None:  # one SSE subscriber, which leaves when the test is done with it
                with httpx.stream("GET", f"{api.base}/missions/m1/events", headers=AUTH, timeout=120) as events:
                    for _ in events.iter_lines():
                        if done.is_set():
                            return

            stream = threading.Thread(target=follow, daemon=True)
            stream.start()
            for _ in range(100):  # the store moves on while we read: compare one scrape with the store after it
                scraped = _scrape(api.base)
                truth = figures(store)
                if scraped[("agent_k_sse_subscribers", ())] == 1 and _agrees(scraped, truth):
                    break
                time.sleep(0.1)
            else:
                pytest.fail(f"the metrics never matched the store: {scraped} vs {truth}")
            assert truth.missions == {"running": 2, "queued": 1}
            assert scraped[("agent_k_queue_depth", ())] == 1 and scraped[("agent_k_live_workers", ())] == 2
            assert 0 < scraped[("agent_k_oldest_queued_age_seconds", ())] < 120
            running = {labels[0][1] for name, labels in scraped if name == "agent_k_last_event_age_seconds"}
            assert running == set(truth.last_event_age_s) and len(running) == 2
            done.set()
            stream.join(timeout=60)
            for mission_id in reversed(missions):  # the queued one first, before a worker frees up for it
                cancelled = httpx.post(f"{api.base}/missions/{mission_id}/cancel", json={}, headers=AUTH)
                assert cancelled.status_code in (200, 202), cancelled.text
            _wait_for(store, list(missions), timeout=120, ends=("cancelled",))
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=60)
    assert figures(store).live_workers == 0, "a stopped worker removes its sign of life"
    store.close()


def _agrees(scraped: dict[tuple[str, tuple[tuple[str, str], ...]], float], truth: Figures) -> bool:
    missions = {labels[0][1]: v for (name, labels), v in scraped.items() if name == "agent_k_missions" and v}
    candidates = {labels[0][1]: v for (name, labels), v in scraped.items() if name == "agent_k_candidates_total" and v}
    return missions == truth.missions and candidates == truth.candidates


def test_a_store_with_nothing_in_it_reports_zeros(home: Path) -> None:
    store = Store.open(f"sqlite:///{home / 'agent_k.db'}")
    empty = figures(store)
    store.close()
    assert (empty.missions, empty.queued, empty.oldest_queued_age_s, empty.live_workers) == ({}, 0, None, 0)
