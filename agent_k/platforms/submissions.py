"""Rules every platform's submissions follow: a daily quota per UTC day, and scores that may arrive later."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

from agent_k.platforms.base import PlatformAdapter, Submission, SubmissionStatus
from agent_k.platforms.registry import platform_named


class QuotaExhausted(Exception):
    def __init__(self, used: int, limit: int, resets_at: datetime, now: datetime) -> None:
        wait = resets_at - now
        hours, minutes = divmod(max(0, int(wait.total_seconds())) // 60, 60)
        super().__init__(
            f"the daily submission quota is used up ({used} of {limit} today); "
            f"it resets at {resets_at:%Y-%m-%d %H:%M} UTC (in {hours}h{minutes:02d}m)"
        )
        self.used, self.limit, self.resets_at = used, limit, resets_at


def description(mission_id: str, key: str) -> str:
    """What a submission says about itself: the key lets a resumed mission find it on the platform."""
    return f"AGENT-K mission {mission_id} [key:{key}]"


def find_by_key(submissions: list[Submission], key: str) -> Submission | None:
    return next((s for s in submissions if f"[key:{key}]" in s.description), None)


def daily_limit(platform: str, configured: int | None, competition_limit: int | None) -> int | None:
    """The setting wins; then the competition's own limit; then the platform's usual one (Kaggle's 5)."""
    if configured is not None:
        return configured
    if competition_limit:
        return competition_limit
    return platform_named(platform).daily_submissions


def check_quota(existing: list[Submission], limit: int | None, now: datetime | None = None) -> None:
    """Raise `QuotaExhausted` when today's (UTC) counted submissions reach `limit`; errored ones do not count."""
    if limit is None:
        return
    now = now or datetime.now(UTC)
    today = now.date()
    used = sum(1 for s in existing if s.status is not SubmissionStatus.error and _utc(s.created_at).date() == today)
    if used >= limit:
        midnight = datetime.combine(today + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
        raise QuotaExhausted(used, limit, midnight, now)


async def wait_for_score(
    platform: PlatformAdapter, submission: Submission, *, timeout_s: float, max_delay_s: float = 30.0
) -> Submission:
    """Poll a pending submission with exponential backoff until it is scored or errored, or `timeout_s` passes."""
    deadline, delay = time.monotonic() + timeout_s, 1.0
    while submission.status is SubmissionStatus.pending:
        submission = await platform.get_submission(submission.competition_id, submission.id)
        left = deadline - time.monotonic()
        if submission.status is not SubmissionStatus.pending or left <= 0:
            break
        await asyncio.sleep(min(delay, left))
        delay = min(delay * 2, max_delay_s)
    return submission


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
