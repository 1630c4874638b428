"""The local platform's declaration: built-in and added competitions under the home folder, offline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_k.platforms.declaration import Platform

if TYPE_CHECKING:
    import httpx

    from agent_k.config import Settings
    from agent_k.platforms.local.platform import LocalPlatform


def _open(settings: Settings, http: httpx.AsyncClient | None = None) -> LocalPlatform:
    from agent_k.platforms.local.platform import LocalPlatform

    return LocalPlatform(settings.competitions_dir)


async def _verify(settings: Settings, competition_id: str) -> None:
    _open(settings).check_known(competition_id)


PLATFORM = Platform(
    name="local",
    summary="built-in and added competitions with hidden labels, offline",
    open=_open,
    verify=_verify,
)
