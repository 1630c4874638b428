"""The platforms AGENT-K knows by name: every subpackage of `agent_k.platforms` with a `declaration` module,
loaded on first use, and any declared since (docs/architecture.md, "Platforms")."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from agent_k._declarations import Declarations
from agent_k.platforms.declaration import Platform


def _builtin_platforms() -> list[Platform]:
    """Every subpackage of `agent_k.platforms` with a `declaration` module, in name order."""
    folders = sorted(Path(__file__).parent.glob("*/declaration.py"))
    return [import_module(f"agent_k.platforms.{folder.parent.name}.declaration").PLATFORM for folder in folders]


_PLATFORMS = Declarations("platform", _builtin_platforms)
declare = _PLATFORMS.declare
"""Make a platform known by its name (a second, different declaration of a name is refused)."""
platform_names = _PLATFORMS.names


def platform_named(name: str) -> Platform:
    """The declaration of platform `name`; `PlatformError` naming the known ones when there is none."""
    from agent_k.platforms.base import PlatformError

    try:
        return _PLATFORMS.named(name)
    except ValueError as exc:
        raise PlatformError(str(exc)) from None


check_platform_name = _PLATFORMS.known
"""`name` when a platform has it, else a one-line `ValueError` naming the known ones."""
PlatformName = Annotated[str, AfterValidator(check_platform_name)]
"""A platform's name, validated against the declared ones (pydantic fields)."""
