"""Kaggle's public API over httpx: RPC calls (`POST {base}/v1/<service>/<Method>`, JSON in and out), retried on
429 and 5xx with exponential backoff and jitter, honouring `Retry-After`, and errors a user can act on."""

from __future__ import annotations

import asyncio
import email.utils
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from agent_k.platforms.base import CompetitionNotFound, PlatformError, SubmissionQuotaRefused
from agent_k.platforms.kaggle.credentials import KaggleCredentials

SERVICE = "competitions.CompetitionApiService"
RULES_URL = "https://www.kaggle.com/competitions/{competition}/rules"


class KaggleAuthError(PlatformError):
    """HTTP 401: the token, or the username and key, are wrong."""


class RulesNotAccepted(PlatformError):
    """HTTP 403 from an RPC that says the competition's rules have not been accepted on kaggle.com."""


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
        self,
        method: str,
        body: dict[str, Any],
        *,
        competition: str | None = None,
        idempotent: bool = True,
        service: str = SERVICE,
    ) -> dict[str, Any]:
        """One RPC; a non-idempotent one is retried only when the server certainly did not process it."""
        try:
            async for attempt in self._retrying(idempotent):
                with attempt:
                    response = await self._send(self._url(method, service), body)
                    data = _json(response)
                    self._check(response.status_code, data, response, method, competition)
                    return data
        except _Transient as exc:
            if idempotent or exc.unprocessed:
                raise
            raise OutcomeUnknown(f"{exc}; it may or may not have been done") from None
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def download(
        self, method: str, body: dict[str, Any], dest: Path, *, competition: str, max_bytes: int
    ) -> Path:
        """Stream a file to `dest` via a `.partial` file. The RPC answers with a redirect to a signed storage URL,
        which is fetched fresh: no credentials and no body headers, which the URL's signature would not cover."""
        partial = dest.with_name(dest.name + ".partial")
        async for attempt in self._retrying(idempotent=True):
            with attempt:
                response = await self._send(self._url(method), body)
                location = response.headers.get("location") if response.is_redirect else None
                if location is None:
                    data = _json(response)
                    self._check(response.status_code, data, response, method, competition)
                    raise PlatformError(f"Kaggle {method} answered HTTP {response.status_code} without a file")
                await self._stream_to(partial, location, competition, max_bytes)
        partial.rename(dest)
        return dest

    async def upload(self, url: str, file: Path) -> None:
        """PUT the file to the signed, resumable upload URL Kaggle handed out (it carries its own authorisation).

        Done only on 200 or 201. A 308 (resume incomplete), a 503 or a lost connection is resumed from what
        storage says it holds, as Kaggle's own client does; anything else is an error."""
        content, size = file.read_bytes(), file.stat().st_size
        offset = 0
        for attempt in range(self.retry.attempts):
            if attempt:
                await asyncio.sleep(min(self.retry.max_backoff_s, self.retry.initial_s * 2 ** (attempt - 1)))
                offset = await self._uploaded(url, size)
                if offset == size:
                    return
            headers = {"Content-Range": f"bytes {offset}-{size - 1}/{size}"} if offset else {}
            try:
                response = await self.http.put(url, content=content[offset:], headers=headers)
            except httpx.TransportError:
                continue
            if response.status_code in (200, 201):
                return
            if response.status_code not in (308, 503):
                raise PlatformError(f"uploading the submission failed: HTTP {response.status_code}")
        raise PlatformError(f"uploading the submission did not complete after {self.retry.attempts} attempts")

    async def username(self) -> str:
        """The account behind the credentials: given with a key, asked of Kaggle (`IntrospectToken`) for a token."""
        if self.credentials.username:
            return self.credentials.username
        token = {"token": self.credentials.secret.get_secret_value()}
        found = await self.call("IntrospectToken", token, service="security.OAuthService")
        if not found.get("active"):
            raise KaggleAuthError(
                f"Kaggle says the API token from {self.credentials.source} is not active (expired or revoked): "
                "create a new one at https://www.kaggle.com/settings"
            )
        name = str(found.get("username") or "")
        if not name:
            raise PlatformError("Kaggle did not say whose API token this is: set AGENT_K_KAGGLE_TEAM")
        return name

    # -- internals ---------------------------------------------------------------------------------

    async def _uploaded(self, url: str, size: int) -> int:
        """How many bytes storage holds, asked the resumable-upload way (`Content-Range: bytes */size`)."""
        try:
            response = await self.http.put(url, headers={"Content-Range": f"bytes */{size}"})
        except httpx.TransportError:
            return 0
        if response.status_code in (200, 201):
            return size
        if response.status_code == 404:  # the upload expired: start again
            return 0
        if response.status_code != 308:
            raise PlatformError(f"uploading the submission failed: HTTP {response.status_code} on resume")
        held = re.fullmatch(r"bytes=0-(\d+)", response.headers.get("range", ""))
        return int(held.group(1)) + 1 if held else 0

    async def _send(self, url: str, body: dict[str, Any]) -> httpx.Response:
        try:
            return await self.http.post(url, json=body, auth=self.credentials.auth(), follow_redirects=False)
        except httpx.TransportError as exc:
            unsent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
            raise _Transient(f"cannot reach Kaggle ({type(exc).__name__})", unprocessed=unsent) from None

    async def _stream_to(self, partial: Path, url: str, competition: str, cap: int) -> None:
        request = httpx.Request("GET", url)  # built fresh: the client's auth and the POST's headers stay behind
        try:
            response = await self.http.send(request, auth=None, follow_redirects=True, stream=True)
            try:
                if response.status_code >= 400:
                    await response.aread()
                    if response.status_code == 429 or response.status_code >= 500:
                        raise _Transient(f"storage answered HTTP {response.status_code} to the download")
                    raise PlatformError(
                        f"storage refused the download of '{competition}' (HTTP {response.status_code}); "
                        "the signed URL Kaggle handed out may have expired: try again"
                    )
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

    def _url(self, method: str, service: str = SERVICE) -> str:
        return f"{self.base_url}/v1/{service}/{method}"

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

    def _check(
        self, status: int, data: dict[str, Any], response: httpx.Response, method: str, competition: str | None
    ) -> None:
        """Raise for an error status, or for an error inside a 200 body (`code >= 400`, as Kaggle's client does)."""
        code = data.get("code") if isinstance(data.get("code"), int) else None
        if status < 400 and (code is None or code < 400):
            return
        code = status if status >= 400 else int(code or status)
        detail = " ".join(str(data.get("message") or response.text[:200]).split())[:200]
        if code == 429 or code >= 500:
            retry_after = _retry_after(response.headers.get("retry-after"))
            if retry_after is not None and retry_after > self.retry.max_retry_after_s:
                raise PlatformError(f"Kaggle asks to wait {retry_after:.0f} s before retrying {method} (HTTP {code})")
            reason = "is rate-limiting requests" if code == 429 else f"answered HTTP {code}"
            raise _Transient(f"Kaggle {reason} to {method}", retry_after=retry_after, unprocessed=code == 429)
        if code == 401:
            raise KaggleAuthError(
                f"Kaggle rejected the credentials from {self.credentials.source} (HTTP 401): "
                f"check {self.credentials.what}"
            )
        if code == 403 and competition and "rules" in detail.lower():
            url = RULES_URL.format(competition=competition)
            raise RulesNotAccepted(
                f"Kaggle refused {method} on '{competition}' (HTTP 403): accept the competition rules at {url}"
            )
        if code == 404 and competition:
            raise CompetitionNotFound(competition, [])
        if method == "CreateSubmission" and refuses_for_quota(detail):
            raise SubmissionQuotaRefused(f"Kaggle refused the submission for its daily quota: {detail}")
        raise PlatformError(f"Kaggle {method} failed: HTTP {code}{': ' + detail if detail else ''}")


QUOTA_WORDS = re.compile(r"daily|allowance|quota|submission limit|too many submissions", re.IGNORECASE)


def refuses_for_quota(message: str) -> bool:
    """Whether Kaggle's words refuse a submission for the team's daily limit ("Your team has used its daily
    Submission allowance (5) today, please try again tomorrow UTC")."""
    return bool(QUOTA_WORDS.search(message))


def _json(response: httpx.Response) -> dict[str, Any]:
    """The body as a JSON object; {} when it is empty or not JSON (an HTML error page, say)."""
    try:
        payload = response.json() if response.content else {}
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


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
