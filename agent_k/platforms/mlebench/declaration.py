"""MLE-bench's declaration: its prepared competitions, from a data folder and a checkout, both configured."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_k.platforms.declaration import Platform

if TYPE_CHECKING:
    import httpx

    from agent_k.config import Settings
    from agent_k.platforms.mlebench.adapter import MlebenchPlatform


def _check(settings: Settings) -> None:
    from agent_k.platforms.base import PlatformError

    for name, folder in (("AGENT_K_MLEBENCH_DATA", settings.mlebench_data),
                         ("AGENT_K_MLEBENCH_REPO", settings.mlebench_repo)):  # fmt: skip
        if folder is None or not folder.is_dir():
            shown = f"{folder} is not a folder" if folder is not None else "it is not set"
            raise PlatformError(f"the mlebench platform needs {name} ({shown}; docs/mlebench.md)")


def _open(settings: Settings, http: httpx.AsyncClient | None = None) -> MlebenchPlatform:
    from agent_k.platforms.mlebench.adapter import MlebenchPlatform

    _check(settings)
    return MlebenchPlatform.of(settings)


async def _verify(settings: Settings, competition_id: str) -> None:
    from agent_k._blocking import run_blocking

    await run_blocking(_open(settings).ensure, competition_id)


PLATFORM = Platform(
    name="mlebench",
    summary="MLE-bench's prepared competitions, ranked on their Kaggle leaderboards (needs AGENT_K_MLEBENCH_DATA "
    "and AGENT_K_MLEBENCH_REPO)",
    open=_open,
    verify=_verify,
    check=_check,
)
