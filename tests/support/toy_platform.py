"""A platform AGENT-K does not ship, declared the way a plug-in would: this file alone.

"Shelf" keeps competitions under `<home>/shelf`, as the local platform does under `<home>/competitions`, lets
only a user holding `SHELF_TOKEN` in, and allows two submissions a day.
"""

from __future__ import annotations

import os

import httpx

from agent_k.config import Settings
from agent_k.platforms import CredentialsMissing, Platform, declare
from agent_k.platforms.local import LocalPlatform


class ShelfPlatform(LocalPlatform):
    name = "shelf"
    team = "shelf-team"


def _open(settings: Settings, http: httpx.AsyncClient | None = None) -> ShelfPlatform:
    _check(settings)
    return ShelfPlatform(settings.home / "shelf")


def _check(settings: Settings) -> None:
    if not os.environ.get("SHELF_TOKEN"):
        raise CredentialsMissing("Shelf credentials missing: set SHELF_TOKEN")


async def _verify(settings: Settings, competition_id: str) -> None:
    _open(settings).check_known(competition_id)


SHELF = declare(
    Platform(
        name="shelf",
        summary="competitions on the shelf (needs SHELF_TOKEN)",
        open=_open,
        verify=_verify,
        check=_check,
        daily_submissions=2,
    )
)
