"""What the API refuses before any route runs: oversized bodies, other hosts' names on a tokenless loopback
server (DNS rebinding), and cross-site form posts to state-changing routes."""

from __future__ import annotations

import ipaddress

from fastapi import HTTPException, Request, status
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 64 * 1024
"""Far above any valid mission request; a larger body is refused with 413 before it is read whole."""
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "127.0.0.1", "::1"})
INTENT_HEADER = "x-agent-k"
"""A header a cross-site form cannot send: either it or a JSON content type marks a request as meant."""


def is_loopback_host(host: str) -> bool:
    """`Host` header values that name this machine's loopback: localhost, 127.x.y.z or ::1, with any port."""
    name = host.strip().lower()
    if name.startswith("["):  # [::1]:8000
        name = name[1 : name.find("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class RequestGuard:
    """Pure ASGI middleware: caps request bodies and, when the server has no token, accepts only loopback
    `Host` headers (a page on another site that rebinds its name to 127.0.0.1 is refused)."""

    def __init__(self, app: ASGIApp, *, loopback_only: bool) -> None:
        self.app = app
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self.loopback_only and not is_loopback_host(headers.get("host", "")):
            refusal = JSONResponse(
                {"detail": "this server has no API token, so it answers only to localhost names"},
                status_code=status.HTTP_421_MISDIRECTED_REQUEST,
            )
            await refusal(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
            await _too_large(scope, receive, send)
            return
        received, refused = 0, False

        async def capped_receive() -> Message:
            """A body without a length (chunked) is counted as it comes: past the cap, the 413 goes out at once
            and the app is told the client left, so whatever it answers then is dropped."""
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > MAX_BODY_BYTES:
                    refused = True
                    await _too_large(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def unless_refused(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, capped_receive, unless_refused)


async def _too_large(scope: Scope, receive: Receive, send: Send) -> None:
    response = JSONResponse(
        {"detail": f"request body over {MAX_BODY_BYTES} bytes"}, status_code=status.HTTP_413_CONTENT_TOO_LARGE
    )
    await response(scope, receive, send)


def require_intent(request: Request) -> None:
    """State-changing routes need `Content-Type: application/json` or an `X-Agent-K` header: a cross-site
    form or `fetch` without CORS can send neither, so a page elsewhere cannot act in the user's name."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json" and INTENT_HEADER not in request.headers:
        raise HTTPException(
            status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
            "send Content-Type: application/json (or an X-Agent-K header) with state-changing requests",
        )
