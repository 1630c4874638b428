"""Kaggle's public API over httpx: RPC calls (`POST {base}/v1/<service>/<Method>`, JSON in and out), retried on
429 and 5xx with exponential backoff and jitter, honouring `Retry-After`, and errors a user can act on."""

from __future__ import annotations

import email.utils
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from agent_k.platforms.base import CompetitionNotFound, PlatformError
from agent_k.platforms.kaggle.credentials import KaggleCredentials

SERVICE = "competitions.CompetitionApiService"
RULES_URL = "https://www.kaggle.com/competitions/{competition}/rules"


class KaggleAuthError(PlatformError):
    """HTTP 401: the username or key is wrong."""


class RulesNotAccepted(PlatformError):
    """HTTP 403 on a competition: its rules have not been accepted on kaggle.com."""


class OutcomeUnknown(PlatformError):
    """A request that must not be repeated blindly (a submission) failed after it may have been processed."""


class _Transient(PlatformError):
    def __init__(self, message: str, *, retry_after: float | None = None, unprocessed: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unprocessed = unprocessed
        """True when the server certainly did nothing (429, no connection), so even a submission may be retried."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6
    initial_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 300.0
    """A longer `Retry-After` is reported instead of slept through."""


class KaggleClient:
    def __init__(
        self,
        http: httpx.AsyncClient,
        credentials: KaggleCredentials,
        base_url: str,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.http = http
        self.credentials = credentials
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()

    async def call(
        self, method: str, body: dict[str, Any], *, competition: str | None = None, idempotent: bool = True
    ) -> dict[str, Any]:
        """One RPC; a non-idempotent one is retried only when the server certainly did not process it."""
        try:
            async for attempt in self._retrying(idempotent):
                with attempt:
                    response = await self._send(method, body)
                    self._check(response, method, competition)
                    data: dict[str, Any] = response.json() if response.content else {}
                    return data
        except _Transient as exc:
            if idempotent or exc.unprocessed:
                raise
            raise OutcomeUnknown(f"{exc}; it may or may not have been done") from None
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def download(
        self, method: str, body: dict[str, Any], dest: Path, *, competition: str, max_bytes: int
    ) -> Path:
        """Stream a file (following Kaggle's redirect to storage) to `dest`, via a `.partial` file."""
        partial = dest.with_name(dest.name + ".partial")
        async for attempt in self._retrying(idempotent=True):
            with attempt:
                await self._stream_to(partial, method, body, competition, max_bytes)
        partial.rename(dest)
        return dest

    async def upload(self, url: str, file: Path) -> None:
        """PUT the file to the signed upload URL Kaggle handed out (it carries its own authorisation)."""
        async for attempt in self._retrying(idempotent=True):
            with attempt:
                try:
                    response = await self.http.put(url, content=file.read_bytes())
                except httpx.TransportError as exc:
                    raise _Transient(f"uploading the submission failed: {type(exc).__name__}") from None
                self._check(response, "upload", None)

    # -- internals ---------------------------------------------------------------------------------

    async def _send(self, method: str, body: dict[str, Any]) -> httpx.Response:
        try:
            return await self.http.post(self._url(method), json=body, auth=self.credentials.auth())
        except httpx.TransportError as exc:
            unsent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
            raise _Transient(f"cannot reach Kaggle ({type(exc).__name__})", unprocessed=unsent) from None

    async def _stream_to(self, partial: Path, method: str, body: dict[str, Any], competition: str, cap: int) -> None:
        request = self.http.build_request("POST", self._url(method), json=body, timeout=httpx.Timeout(60.0))
        try:
            response = await self.http.send(request, auth=self.credentials.auth(), follow_redirects=True, stream=True)
            try:
                if response.status_code >= 400:
                    await response.aread()
                    self._check(response, method, competition)
                received = 0
                with partial.open("wb") as out:
                    async for chunk in response.aiter_bytes(1 << 20):
                        received += len(chunk)
                        if received > cap:
                            raise PlatformError(f"the data of '{competition}' is larger than the {cap:,}-byte cap")
                        out.write(chunk)
            finally:
                await response.aclose()
        except httpx.TransportError as exc:
            raise _Transient(f"downloading '{competition}' failed: {type(exc).__name__}") from None

    def _url(self, method: str) -> str:
        return f"{self.base_url}/v1/{SERVICE}/{method}"

    def _retrying(self, idempotent: bool) -> AsyncRetrying:
        def retryable(exc: BaseException) -> bool:
            return isinstance(exc, _Transient) and (idempotent or exc.unprocessed)

        return AsyncRetrying(
            stop=stop_after_attempt(self.retry.attempts),
            wait=self._wait,
            retry=retry_if_exception(retryable),
            reraise=True,
        )

    def _wait(self, state: RetryCallState) -> float:
        backoff = wait_exponential_jitter(
            multiplier=self.retry.initial_s, max=self.retry.max_backoff_s, jitter=self.retry.initial_s
        )(state)
        error = state.outcome.exception() if state.outcome else None
        retry_after = getattr(error, "retry_after", None)
        return backoff if retry_after is None else max(retry_after, backoff)

    def _check(self, response: httpx.Response, method: str, competition: str | None) -> None:
        code = response.status_code
        if code < 400:
            return
        detail = _detail(response)
        if code == 429 or code >= 500:
            retry_after = _retry_after(response.headers.get("retry-after"))
            if retry_after is not None and retry_after > self.retry.max_retry_after_s:
                raise PlatformError(f"Kaggle asks to wait {retry_after:.0f} s before retrying {method} (HTTP {code})")
            reason = "is rate-limiting requests" if code == 429 else f"answered HTTP {code}"
            raise _Transient(f"Kaggle {reason} to {method}", retry_after=retry_after, unprocessed=code == 429)
        if code == 401:
            raise KaggleAuthError(
                f"Kaggle rejected the credentials from {self.credentials.source} (HTTP 401): "
                "check KAGGLE_USERNAME and KAGGLE_KEY"
            )
        if code == 403 and competition:
            url = RULES_URL.format(competition=competition)
            raise RulesNotAccepted(
                f"Kaggle refused {method} on '{competition}' (HTTP 403): accept the competition rules at {url}"
            )
        if code == 404 and competition:
            raise CompetitionNotFound(competition, [])
        raise PlatformError(f"Kaggle {method} failed: HTTP {code}{': ' + detail if detail else ''}")


def _detail(response: httpx.Response) -> str:
    try:
        payload = response.json()
        text = str(payload.get("message", "")) if isinstance(payload, dict) else ""
    except ValueError:
        text = response.text
    return " ".join(text.split())[:200]


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a `Retry-After` header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
