"""Open the platform a mission names, through its declaration (`agent_k.platforms.declaration`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_k.platforms.registry import platform_named

if TYPE_CHECKING:
    import httpx

    from agent_k.config import Settings
    from agent_k.platforms.base import PlatformAdapter


def check_platform(name: str, settings: Settings) -> None:
    """Raise `PlatformError` (`CredentialsMissing`, an unknown name) when `name` cannot be used from here."""
    platform_named(name).check(settings)


def open_platform(name: str, settings: Settings, http: httpx.AsyncClient) -> PlatformAdapter:
    """The adapter for `name`; a remote one sends its requests through `http`."""
    return platform_named(name).open(settings, http)


async def verify_competition(name: str, competition_id: str, settings: Settings) -> None:
    """Raise `PlatformError` (`CompetitionNotFound`, missing credentials, …) unless the competition exists.

    Cheap on every platform: nothing is downloaded or materialised."""
    platform = platform_named(name)
    platform.check(settings)
    await platform.verify(settings, competition_id)
