"""A mission's SSE stream against a runner that ends the mission at the worst moment for it."""

from __future__ import annotations

import asyncio
import json

from agent_k.api.feeds import EventFeeds
from agent_k.api.streaming import follow
from agent_k.store.models import MissionRow, utcnow
from agent_k.store.repository import Store
from agent_k.store.status import MissionStatus


class _EndsOnFirstLook(Store):
    """A store whose mission ends as a runner ends it (its last event, then its row) just before the stream first
    reads the row, after the replay: a client that connects as a mission finishes can land there."""

    ended = False

    def get_mission(self, mission_id: str) -> MissionRow | None:
        if not self.ended:
            self.ended = True
            self.append_event(mission_id, seq=3, type="mission.completed", phase=None, payload="{}", ts=utcnow())
            self.finish_mission(mission_id, last_snapshot_id=None, status=MissionStatus.succeeded, result="{}")
        return super().get_mission(mission_id)


def test_a_stream_that_finds_the_mission_ended_after_its_replay_still_sends_the_ending(database_url: str) -> None:
    store = _EndsOnFirstLook.open(database_url)
    try:
        store.create_mission("ending", competition="wine", platform="local", mode="workflow", budget_s=10, options="{}")
        for seq, kind in enumerate(["mission.started", "submission.scored"], start=1):
            store.append_event("ending", seq=seq, type=kind, phase=None, payload=json.dumps({}), ts=utcnow())

        async def stream() -> list[str]:
            feeds = EventFeeds(store)
            await feeds.start()
            try:
                return [event.event or "" async for event in follow(feeds, store, "ending", 0)]
            finally:
                await feeds.close()

        assert asyncio.run(stream()) == ["mission.started", "submission.scored", "mission.completed"]
    finally:
        store.close()
