"""Build the platform a mission names: `local` (embedded, offline) or `kaggle` (needs credentials)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from agent_k.config import Settings
from agent_k.platforms import PLATFORMS
from agent_k.platforms.base import PlatformAdapter

if TYPE_CHECKING:
    from agent_k.platforms.kaggle import KaggleAdapter


def check_platform(name: str, settings: Settings) -> None:
    """Raise `PlatformError` (e.g. missing Kaggle credentials) when `name` cannot be used from here."""
    if name == "kaggle":
        from agent_k.platforms.kaggle import load_credentials

        load_credentials()
    elif name != "local":
        from agent_k.platforms.base import PlatformError

        raise PlatformError(f"unknown platform '{name}': use one of {', '.join(PLATFORMS)}")


def open_platform(name: str, settings: Settings, http: httpx.AsyncClient) -> PlatformAdapter:
    """The adapter for `name`; the Kaggle one sends its requests through `http`."""
    if name == "kaggle":
        return open_kaggle(settings, http)
    check_platform(name, settings)
    from agent_k.platforms.local import LocalPlatform

    return LocalPlatform(settings.competitions_dir)


def open_kaggle(settings: Settings, http: httpx.AsyncClient) -> KaggleAdapter:
    from agent_k.platforms.kaggle import KaggleAdapter, KaggleClient, load_credentials

    client = KaggleClient(http, load_credentials(), settings.kaggle_api_url)
    return KaggleAdapter(
        client, settings.home / "kaggle", max_data_bytes=settings.kaggle_max_data_bytes, team=settings.kaggle_team
    )


async def verify_competition(name: str, competition_id: str, settings: Settings) -> None:
    """Raise `PlatformError` (`CompetitionNotFound`, missing credentials, …) unless the competition exists.

    Cheap on both platforms: nothing is downloaded or materialised."""
    if name == "kaggle":
        async with httpx.AsyncClient(timeout=30.0) as http:
            await open_kaggle(settings, http).metadata(competition_id)
        return
    check_platform(name, settings)
    from agent_k.platforms.local import LocalPlatform

    LocalPlatform(settings.competitions_dir).check_known(competition_id)
