"""`GET /metrics`: what operators watch, in the Prometheus text format (behind the token when one is set)."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import APIRouter, Response
from fastapi.concurrency import run_in_threadpool
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from agent_k.api.deps import FeedsDep, StoreDep
from agent_k.store.overview import Figures, figures
from agent_k.store.status import CandidateStatus, MissionStatus

router = APIRouter(tags=["metrics"])


class _Snapshot(Collector):
    """One scrape's figures, read from the store once (the store is the truth every API process shares)."""

    def __init__(self, figures: Figures, subscribers: int) -> None:
        self.figures, self.subscribers = figures, subscribers

    def collect(self) -> Iterator[Metric]:
        f = self.figures
        missions = GaugeMetricFamily("agent_k_missions", "Missions by status.", labels=["status"])
        for mission_status in MissionStatus:
            missions.add_metric([mission_status.value], f.missions.get(mission_status.value, 0))
        yield missions
        yield GaugeMetricFamily("agent_k_queue_depth", "Missions waiting for a worker.", value=f.queued)
        yield GaugeMetricFamily(
            "agent_k_oldest_queued_age_seconds",
            "How long the oldest queued mission has waited (0 with an empty queue).",
            value=f.oldest_queued_age_s or 0.0,
        )
        yield GaugeMetricFamily(
            "agent_k_live_workers", "Workers whose last sign of life is younger than their lease.", value=f.live_workers
        )
        yield GaugeMetricFamily(
            "agent_k_missions_awaiting_reclaim",
            "Running missions whose process died (lease expired), waiting for a worker to resume them.",
            value=len(f.lease_expired_s),
        )
        expired = GaugeMetricFamily(
            "agent_k_lease_expired_seconds",
            "Seconds since each mission awaiting reclaim lost its lease.",
            labels=["mission"],
        )
        for mission, age in sorted(f.lease_expired_s.items()):
            expired.add_metric([mission], round(age, 3))
        yield expired
        candidates = CounterMetricFamily("agent_k_candidates", "Candidates evaluated, by outcome.", labels=["status"])
        for candidate_status in CandidateStatus:
            candidates.add_metric([candidate_status.value], f.candidates.get(candidate_status.value, 0))
        yield candidates
        ages = GaugeMetricFamily(
            "agent_k_last_event_age_seconds", "Seconds since each running mission's last event.", labels=["mission"]
        )
        for mission, age in sorted(f.last_event_age_s.items()):
            ages.add_metric([mission], round(age, 3))
        yield ages
        yield GaugeMetricFamily(
            "agent_k_sse_subscribers", "Event streams this API process is serving.", value=self.subscribers
        )


@router.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
async def metrics(store: StoreDep, feeds: FeedsDep) -> Response:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(await run_in_threadpool(figures, store), feeds.subscribers))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
