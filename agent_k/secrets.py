"""The secret values this process knows, and a scrubber that takes them out of any text we keep or send on
(events, the store, logs, model prompts): a candidate's error line above all, since its code is untrusted.

Secrets are: the API token, the database password, every environment variable whose name says key, token,
secret, password or credential (the value, and the file's content when the value names a small file, as
`KAGGLE_API_TOKEN` may), and the Kaggle credential files (`kaggle.json`, `access_token`, `access_token.txt`
in `$KAGGLE_CONFIG_DIR` or `~/.kaggle`).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_k.config import Settings

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
MIN_SECRET_LENGTH = 6
"""Shorter values would scrub ordinary words; no real key is this short."""
MAX_FILE_BYTES = 64 * 1024
MASK = "***"


@dataclass(frozen=True)
class Scrubber:
    values: tuple[str, ...] = ()
    """Longest first, so a secret that contains another is masked whole."""

    def __call__(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASK)
        return text

    def one_line(self, text: str | None, limit: int = 500) -> str | None:
        """The last non-empty line of `text`, scrubbed and cut to `limit` characters."""
        if text is None:
            return None
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return self(lines[-1] if lines else "")[:limit]


def _small_file(path: Path) -> str | None:
    try:
        if path.is_file() and path.stat().st_size <= MAX_FILE_BYTES:
            return path.read_text(errors="replace").strip()
    except OSError:
        return None
    return None


def _kaggle_files(env: Mapping[str, str]) -> list[str]:
    folder = Path(env.get("KAGGLE_CONFIG_DIR") or Path("~/.kaggle").expanduser())
    found = [text for name in ("access_token", "access_token.txt") if (text := _small_file(folder / name))]
    raw = _small_file(folder / "kaggle.json")
    if raw:
        try:
            key = json.loads(raw).get("key")
        except (ValueError, AttributeError):
            key = None
        if isinstance(key, str):
            found.append(key)
    return found


def collect(settings: Settings, env: Mapping[str, str] | None = None) -> Scrubber:
    """A scrubber for every secret `settings` and the environment hold."""
    env = os.environ if env is None else env
    found: set[str] = set()
    if settings.api_token is not None:
        found.add(settings.api_token.get_secret_value())
    if settings.database_url:
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            password = make_url(settings.database_url).password
        except ArgumentError:
            password = None
        if password:
            found.add(str(password))
    for name, value in env.items():
        if SECRET_NAME.search(name) and value:
            found.add(value)
            if len(value) < 4096 and (content := _small_file(Path(value))):
                found.add(content)
    found.update(_kaggle_files(env))
    usable = {value for value in found if len(value) >= MIN_SECRET_LENGTH}
    return Scrubber(tuple(sorted(usable, key=len, reverse=True)))


class _ScrubbingFilter(logging.Filter):
    def __init__(self, scrub: Scrubber) -> None:
        super().__init__()
        self.scrub = scrub

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if (clean := self.scrub(message)) != message:
            record.msg, record.args = clean, None
        return True


def scrub_logs(scrub: Scrubber) -> None:
    """Every record the root logger's handlers write loses the secret values first (servers and workers)."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(_ScrubbingFilter(scrub))
