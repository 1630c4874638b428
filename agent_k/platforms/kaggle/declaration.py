"""Kaggle's declaration: its public API, with credentials from the usual places (docs/kaggle.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_k.platforms.declaration import Platform

if TYPE_CHECKING:
    import httpx

    from agent_k.config import Settings
    from agent_k.platforms.kaggle.adapter import KaggleAdapter


def _open(settings: Settings, http: httpx.AsyncClient) -> KaggleAdapter:
    from agent_k.platforms.kaggle import KaggleAdapter, KaggleClient, load_credentials

    client = KaggleClient(http, load_credentials(), settings.kaggle_api_url)
    return KaggleAdapter(
        client, settings.home / "kaggle", max_data_bytes=settings.kaggle_max_data_bytes, team=settings.kaggle_team
    )


def _check(settings: Settings) -> None:
    from agent_k.platforms.kaggle import load_credentials

    load_credentials()


async def _verify(settings: Settings, competition_id: str) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=30.0) as http:
        await _open(settings, http).metadata(competition_id)


PLATFORM = Platform(
    name="kaggle",
    summary="Kaggle's competitions through its public API (needs credentials)",
    open=_open,
    verify=_verify,
    check=_check,
    daily_submissions=5,
)
