"""Helpers every command uses: settings, store and platform factories, and the input-error exit."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from agent_k.config import Settings
    from agent_k.platforms.local import LocalPlatform
    from agent_k.store.repository import Store

err_console = Console(stderr=True)

EXIT_FAILED = 1
EXIT_USAGE = 2


def print_error(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def fail_input(message: str) -> NoReturn:
    """A usage or input error: one line on stderr, exit code 2."""
    print_error(message)
    raise typer.Exit(EXIT_USAGE)


def known_metric(value: str | None) -> str | None:
    """An option's check: a declared metric's name (or nothing), else a usage error naming the known ones."""
    from agent_k.competition.registry import check_metric_name

    try:
        return None if value is None else check_metric_name(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def known_platform(value: str | None) -> str | None:
    """An option's check: a declared platform's name, else a usage error naming the known ones."""
    from agent_k.platforms.registry import check_platform_name

    try:
        return None if value is None else check_platform_name(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def load_settings() -> Settings:
    from pydantic import ValidationError

    from agent_k.config import Settings

    try:
        settings = Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        fail_input(f"invalid setting AGENT_K_{'_'.join(map(str, first['loc'])).upper()}: {first['msg']}")
    try:
        settings.private_home()
    except OSError as exc:
        fail_input(f"cannot prepare AGENT_K_HOME ({settings.home}): {exc.strerror or exc}")
    return settings


def start_tracing(settings: Settings) -> None:
    """Switch on AGENT_K_TRACING for this process (a missing package is an input error: exit 2)."""
    if settings.tracing == "off":
        return
    from agent_k.tracing import TracingUnavailable, install

    try:
        install(settings.tracing)
    except TracingUnavailable as exc:
        fail_input(str(exc))


def open_store(settings: Settings) -> Store:
    from sqlalchemy.exc import SQLAlchemyError

    from agent_k.store.repository import Store

    try:
        return Store.open(settings.resolved_database_url)
    except (SQLAlchemyError, OSError) as exc:
        fail_input(f"cannot open the database: {str(exc).splitlines()[0]}")


def local_platform(settings: Settings) -> LocalPlatform:
    from agent_k.platforms.local import LocalPlatform

    return LocalPlatform(settings.competitions_dir)
