"""Typed mission events: persisted first, then fanned out to live subscribers.

`EventEmitter` is loaded on first use: the event models alone (a page, a client, the API's schemas) need no
database library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_k.events.models import Event, EventData

if TYPE_CHECKING:
    from agent_k.events.emitter import EventEmitter

__all__ = ["Event", "EventData", "EventEmitter"]


def __getattr__(name: str) -> Any:
    if name == "EventEmitter":
        from agent_k.events.emitter import EventEmitter

        return EventEmitter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
