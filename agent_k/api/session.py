"""Browser sessions for the dashboard: `EventSource` cannot send an `Authorization` header, so a page signs in
once with the API token and gets an HttpOnly, SameSite=Strict cookie. Both values below are derived from the
token (an HMAC), so they change when it does and reveal nothing of it; nothing is stored server-side."""

from __future__ import annotations

import hashlib
import hmac
import re

from pydantic import SecretStr

SESSION_COOKIE = "agent_k_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME_ORIGIN_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@/%?#]*")
r"""Where signing in may send the browser: a path on this server, in plain URL characters only. Browsers read a
backslash as a slash and drop tabs and newlines, so `/\evil.example` and `/<TAB>/evil.example` would leave for
another origin; neither matches. `login.js` holds the same pattern."""


def _derive(token: SecretStr, purpose: str) -> str:
    return hmac.new(token.get_secret_value().encode(), purpose.encode(), hashlib.sha256).hexdigest()


def session_value(token: SecretStr) -> str:
    return _derive(token, "agent-k session v1")


def csrf_value(token: SecretStr) -> str:
    """What a page's state-changing requests must carry in `X-CSRF-Token` (a cross-site form cannot read it)."""
    return _derive(token, "agent-k csrf v1")


def matches(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def same_origin_path(target: str) -> bool:
    return SAME_ORIGIN_PATH.fullmatch(target) is not None
