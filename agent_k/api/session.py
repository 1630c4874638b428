"""Browser sessions for the dashboard: `EventSource` cannot send an `Authorization` header, so a page signs in
once with the API token and gets an HttpOnly, SameSite=Strict cookie. Both values below are derived from the
token (an HMAC), so they change when it does and reveal nothing of it; nothing is stored server-side."""

from __future__ import annotations

import hashlib
import hmac

from pydantic import SecretStr

SESSION_COOKIE = "agent_k_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _derive(token: SecretStr, purpose: str) -> str:
    return hmac.new(token.get_secret_value().encode(), purpose.encode(), hashlib.sha256).hexdigest()


def session_value(token: SecretStr) -> str:
    return _derive(token, "agent-k session v1")


def csrf_value(token: SecretStr) -> str:
    """What a page's state-changing requests must carry in `X-CSRF-Token` (a cross-site form cannot read it)."""
    return _derive(token, "agent-k csrf v1")


def matches(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())
