"""Kaggle credentials: `KAGGLE_USERNAME`/`KAGGLE_KEY`, or `kaggle.json` in `KAGGLE_CONFIG_DIR` (`~/.kaggle`).

The key is a `SecretStr` from the moment it is read: it reaches the wire as HTTP Basic auth and nowhere else.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
from pydantic import SecretStr

from agent_k.platforms.base import PlatformError

log = logging.getLogger("agent_k.kaggle")


class CredentialsMissing(PlatformError):
    """No usable Kaggle credentials; the message names what is missing and where it was looked for."""


@dataclass(frozen=True)
class KaggleCredentials:
    username: str
    key: SecretStr
    source: str
    """Where they came from ("environment" or the file's path), for messages."""

    def auth(self) -> httpx.BasicAuth:
        return httpx.BasicAuth(self.username, self.key.get_secret_value())


@functools.cache
def _warn_if_shared(path: Path, mode: int) -> None:
    """Once per file and mode: a CLI run reads the credentials more than once (check, then open)."""
    if mode & 0o077:
        log.warning("%s is readable by other users; restrict it with: chmod 600 %s", path, path)


def config_file(env: Mapping[str, str]) -> Path:
    folder = env.get("KAGGLE_CONFIG_DIR") or str(Path("~/.kaggle").expanduser())
    return Path(folder) / "kaggle.json"


def load_credentials(env: Mapping[str, str] | None = None) -> KaggleCredentials:
    """The environment wins over the file; a file readable by others is used, with a warning."""
    env = os.environ if env is None else env
    username, key = env.get("KAGGLE_USERNAME"), env.get("KAGGLE_KEY")
    if username and key:
        return KaggleCredentials(username, SecretStr(key), "environment")
    path = config_file(env)
    if not path.is_file():
        given = "KAGGLE_USERNAME" if username else "KAGGLE_KEY" if key else None
        missing = "KAGGLE_KEY" if username else "KAGGLE_USERNAME" if key else "KAGGLE_USERNAME and KAGGLE_KEY"
        note = f" ({given} is set)" if given else ""
        raise CredentialsMissing(f"Kaggle credentials missing: set {missing}{note}, or create {path}")
    _warn_if_shared(path, path.stat().st_mode)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CredentialsMissing(f"cannot read Kaggle credentials from {path}: {type(exc).__name__}") from None
    if not isinstance(data, dict) or not data.get("username") or not data.get("key"):
        raise CredentialsMissing(f"{path} must hold a JSON object with 'username' and 'key'")
    return KaggleCredentials(str(data["username"]), SecretStr(str(data["key"])), str(path))
