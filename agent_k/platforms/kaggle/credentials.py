"""Kaggle credentials, looked for in the official client's order:

1. an API token (Kaggle's settings page issues these now): `KAGGLE_API_TOKEN`, the token itself or the path of a
   file holding it, then `access_token` or `access_token.txt` in `KAGGLE_CONFIG_DIR` (`~/.kaggle`); sent as
   `Authorization: Bearer`;
2. a legacy key: `KAGGLE_USERNAME` and `KAGGLE_KEY`, then `kaggle.json`; sent as HTTP Basic auth.

The secret is a `SecretStr` from the moment it is read: it reaches the wire in the auth header and nowhere else.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx
from pydantic import SecretStr

from agent_k.platforms.base import CredentialsMissing

log = logging.getLogger("agent_k.kaggle")

TOKEN_FILES = ("access_token", "access_token.txt")


class _BearerAuth(httpx.Auth):
    def __init__(self, token: SecretStr) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token.get_secret_value()}"
        yield request


@dataclass(frozen=True)
class KaggleCredentials:
    kind: Literal["token", "key"]
    secret: SecretStr
    source: str
    """Where they came from ("KAGGLE_API_TOKEN", "environment" or a file's path), for messages."""
    username: str | None = None
    """Known for a key; for a token Kaggle tells it (`IntrospectToken`)."""

    def auth(self) -> httpx.Auth:
        if self.kind == "token":
            return _BearerAuth(self.secret)
        return httpx.BasicAuth(self.username or "", self.secret.get_secret_value())

    @property
    def what(self) -> str:
        """What a user should check when Kaggle rejects them."""
        return "the API token" if self.kind == "token" else "the username and key"


@functools.cache
def _warn_if_shared(path: Path, mode: int) -> None:
    """Once per file and mode: a CLI run reads the credentials more than once (check, then open)."""
    if mode & 0o077:
        log.warning("%s is readable by other users; restrict it with: chmod 600 %s", path, path)


def config_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("KAGGLE_CONFIG_DIR") or str(Path("~/.kaggle").expanduser()))


def config_file(env: Mapping[str, str]) -> Path:
    return config_dir(env) / "kaggle.json"


def load_credentials(env: Mapping[str, str] | None = None) -> KaggleCredentials:
    """The first credentials found in the official order; a file readable by others is used, with a warning."""
    env = os.environ if env is None else env
    token = _token(env)
    if token is not None:
        return token
    username, key = env.get("KAGGLE_USERNAME"), env.get("KAGGLE_KEY")
    if username and key:
        return KaggleCredentials("key", SecretStr(key), "environment", username)
    path = config_file(env)
    if not path.is_file():
        given = "KAGGLE_USERNAME" if username else "KAGGLE_KEY" if key else None
        if given:
            missing = "KAGGLE_KEY" if username else "KAGGLE_USERNAME"
            raise CredentialsMissing(f"Kaggle credentials missing: set {missing} ({given} is set), or create {path}")
        raise CredentialsMissing(
            "Kaggle credentials missing: set KAGGLE_API_TOKEN (an API token from kaggle.com/settings), "
            f"or save it in {path.with_name(TOKEN_FILES[0])}; a legacy key in KAGGLE_USERNAME and KAGGLE_KEY "
            f"or {path} works too"
        )
    try:
        data = json.loads(_read_private(path))
    except ValueError:
        raise CredentialsMissing(f"cannot read Kaggle credentials from {path}: it is not JSON") from None
    if not isinstance(data, dict) or not data.get("username") or not data.get("key"):
        raise CredentialsMissing(f"{path} must hold a JSON object with 'username' and 'key'")
    return KaggleCredentials("key", SecretStr(str(data["key"])), str(path), str(data["username"]))


def _token(env: Mapping[str, str]) -> KaggleCredentials | None:
    value = (env.get("KAGGLE_API_TOKEN") or "").strip()
    if value:
        path = Path(value).expanduser()
        if len(value) < 4096 and path.is_file():
            return _token_from(path)
        return KaggleCredentials("token", SecretStr(value), "KAGGLE_API_TOKEN")
    for name in TOKEN_FILES:
        path = config_dir(env) / name
        if path.is_file():
            return _token_from(path)
    return None


def _token_from(path: Path) -> KaggleCredentials:
    token = _read_private(path).strip()
    if not token:
        raise CredentialsMissing(f"{path} is empty: save the API token from kaggle.com/settings in it")
    return KaggleCredentials("token", SecretStr(token), str(path))


def _read_private(path: Path) -> str:
    _warn_if_shared(path, path.stat().st_mode)
    try:
        return path.read_text()
    except (OSError, ValueError) as exc:
        raise CredentialsMissing(f"cannot read Kaggle credentials from {path}: {type(exc).__name__}") from None
