"""A fake Kaggle API: a real FastAPI app on 127.0.0.1 speaking the endpoints `KaggleAdapter` uses, and behaving
as the real service does where a client can go wrong.

Every call is `POST /v1/<service>/<Method>` with a camelCase JSON body, as kagglesdk sends it, authorised by an
API token (`Authorization: Bearer KGAT_…`) or a legacy key (HTTP Basic). Shapes (the subset AGENT-K reads):

  security.OAuthService/IntrospectToken {token}      -> {active, username, userId, scope}
  ListCompetitions   {search, sortBy, pageSize, pageToken} -> {competitions: [ApiCompetition], nextPageToken}
  GetCompetition     {competitionName}               -> ApiCompetition
                        {ref, title, description, evaluationMetric, deadline, maxDailySubmissions, teamCount, tags,
                         submissionsDisabled}
  ListDataFiles      {competitionName}               -> {files: [{name, totalBytes, creationDate}], nextPageToken}
                        (sizes as stored, so a zip bomb is only caught while it is extracted)
  DownloadDataFiles  {competitionName}               -> 302 to a signed storage URL (another origin), which
                        answers 403 to a request carrying `Content-Type` or `Authorization` (the signature
                        covers the headers), as signed storage URLs do
  StartSubmissionUpload {competitionName, contentLength, lastModifiedEpochSeconds, fileName} -> {token, createUrl}
  PUT createUrl      a resumable upload: 200 when whole; can answer `308 Resume Incomplete` with `Range: bytes=0-N`
                        once; `Content-Range: bytes */SIZE` asks what it holds, `bytes A-B/SIZE` resumes
  CreateSubmission   {competitionName, blobFileTokens, submissionDescription} -> {message, ref}
                        (400 on an upload that is not whole; `ref` omitted when it refuses)
  GetSubmission      {ref}                           -> ApiSubmission {ref, date, description, fileName, status,
                                                         publicScore, privateScore, errorDescription, teamName}
  ListSubmissions    {competitionName, pageSize, pageToken} -> {submissions: [ApiSubmission], nextPageToken}
  GetLeaderboard     {competitionName, overridePublic, pageSize (at most 200), pageToken}
                        -> {submissions: [{teamId, teamName, submissionDate, score}], nextPageToken}
                        (the private board by default once it is released; the public one with overridePublic)

Errors are `{"code": N, "message": ...}` with status N, or, as Kaggle sometimes does, inside a 200 answer.
Competitions and their scoring come from a `LocalPlatform` (real data, hidden labels); storage is served as
`http://localhost:PORT` so that the API (`http://127.0.0.1:PORT`) and storage are different origins, as on
kaggle.com.
"""

from __future__ import annotations

import base64
import io
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse

from agent_k.competition import InvalidSubmission
from agent_k.platforms.local import LocalPlatform
from tests.support import fake_kaggle_wire as wire
from tests.support.fake_kaggle_wire import KAGGLE_METRIC_NAMES, PAGE_LIMIT, Fault, Upload


@dataclass
class FakeKaggle:
    local: LocalPlatform
    competitions: tuple[str, ...]
    username: str = "agentk-user"
    key: str = "fake-kaggle-key-5f2c9a"
    token: str = "KGAT_fake0d5b8e61c2a94f7e"
    team: str = "Agent K Team"
    """The team Kaggle credits our submissions to: not the username, as for most real accounts."""
    report_team: bool = True
    """False: submissions carry no `teamName`, and the board shows a solo account's username."""
    unaccepted_rules: set[str] = field(default_factory=set)
    submissions_disabled: set[str] = field(default_factory=set)
    private_released: bool = False
    """The deadline has passed and the private board is out."""
    extra_teams: int = 0
    """Other teams on the board beyond the competition's reference ones (big competitions)."""
    team_count: int | None = None
    """`teamCount` as GetCompetition reports it (default: the board's real size)."""
    interrupt_uploads: int = 0
    """Uploads that stop halfway with 308 Resume Incomplete."""
    daily_limit: int | None = None
    """Submissions a team may make per UTC day; past it, CreateSubmission answers 400 as Kaggle does."""
    refuse_creation: str | None = None
    """CreateSubmission answers 200 with this message and no `ref` (and creates nothing)."""
    storage_expired: bool = False
    archives: dict[str, bytes] = field(default_factory=dict)
    """Replacement zips per competition (path traversal, bombs, Kaggle's own layouts)."""
    metrics: dict[str, str] = field(default_factory=dict)
    """`evaluationMetric` per competition, as Kaggle words it, for those not on the local platform."""
    pending_polls: int = 2
    """GetSubmission answers PENDING this many times per submission before the score."""
    faults: list[Fault] = field(default_factory=list)
    calls: list[tuple[float, str]] = field(default_factory=list)
    bodies: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    auth_kinds: set[str] = field(default_factory=set)
    storage_authorization: list[str | None] = field(default_factory=list)
    submissions: list[dict[str, Any]] = field(default_factory=list)
    uploads: dict[str, Upload] = field(default_factory=dict)
    upload_statuses: list[int] = field(default_factory=list)
    _polls: dict[int, int] = field(default_factory=dict)

    def fail(
        self, method: str, status: int, *, times: int = 1, retry_after: str | None = None, in_body: bool = False
    ) -> None:
        self.faults.append(Fault(method, status, times, retry_after, in_body))

    def seed_submission(self, competition: str, description: str, *, status: str = "COMPLETE") -> None:
        """An earlier submission of ours (e.g. from another tool) that counts towards today's quota."""
        self.submissions.append(self._record(competition, description, status, public=None, private=None))

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/security.OAuthService/IntrospectToken")
        async def introspect(request: Request) -> Response:
            self.calls.append((time.monotonic(), "IntrospectToken"))
            if self._caller(request) is None:
                return wire.error(401, "Unauthenticated")
            body = await request.json()
            active = body.get("token") == self.token
            return JSONResponse({"active": active, "username": self.username if active else "", "userId": 7})

        @app.post("/v1/competitions.CompetitionApiService/{method}")
        async def rpc(method: str, request: Request) -> Response:
            self.calls.append((time.monotonic(), method))
            if self._caller(request) is None:
                return wire.error(401, "Unauthenticated")
            fault = next((f for f in self.faults if f.method == method and f.times > 0), None)
            if fault is not None:
                fault.times -= 1
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                if fault.in_body:
                    return JSONResponse({"code": fault.status, "message": "injected fault"}, headers=headers)
                return wire.error(fault.status, "injected fault", headers)
            body = await request.json()
            self.bodies.append((method, body))
            handler = getattr(self, f"_{method}", None)
            if handler is None:
                return wire.error(404, f"no method {method}")
            name = body.get("competitionName")
            if name is not None and name not in self.competitions:
                return wire.error(404, "Competition not found")
            result: Response | dict[str, Any] = await handler(body, request)
            return result if isinstance(result, Response) else JSONResponse(result)

        @app.get("/storage/data/{competition}.zip")
        async def data(competition: str, request: Request) -> Response:
            self.storage_authorization.append(request.headers.get("authorization"))
            if self.storage_expired or wire.unsigned_headers(request):
                return wire.storage_denied()
            return Response(self._zip(competition), media_type="application/zip")

        @app.put("/storage/upload/{token}")
        async def upload(token: str, request: Request) -> Response:
            self.storage_authorization.append(request.headers.get("authorization"))
            response = await self._upload(token, request)
            self.upload_statuses.append(response.status_code)
            return response

        return app

    def _caller(self, request: Request) -> str | None:
        """Who is calling: the token's or the key's owner, or None when the header is neither."""
        header = request.headers.get("authorization")
        if header == f"Bearer {self.token}":
            self.auth_kinds.add("bearer")
            return self.username
        if header == "Basic " + base64.b64encode(f"{self.username}:{self.key}".encode()).decode():
            self.auth_kinds.add("basic")
            return self.username
        return None

    async def _upload(self, token: str, request: Request) -> Response:
        """Google's resumable-upload protocol, as Kaggle's upload URLs speak it."""
        upload = self.uploads.get(token)
        if upload is None:
            return Response(status_code=404)
        if wire.unsigned_headers(request, allow_content_type=True):
            return wire.storage_denied()
        content_range = request.headers.get("content-range", "")
        chunk = await request.body()
        if content_range.startswith("bytes */"):
            return self._upload_state(upload)
        if content_range:
            start = int(content_range.removeprefix("bytes ").split("-")[0])
            if start != len(upload.received):
                return Response(status_code=400)
        else:
            upload.received.clear()
        if self.interrupt_uploads > 0:
            self.interrupt_uploads -= 1
            upload.received.extend(chunk[: max(1, len(chunk) // 2)])
            return self._upload_state(upload)
        upload.received.extend(chunk)
        return self._upload_state(upload)

    @staticmethod
    def _upload_state(upload: Upload) -> Response:
        if len(upload.received) == upload.size:
            return Response(status_code=200)
        headers = {"Range": f"bytes=0-{len(upload.received) - 1}"} if upload.received else {}
        return Response(status_code=308, headers=headers)

    # -- the RPC methods ---------------------------------------------------------------------------

    async def _ListCompetitions(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        words = str(body.get("search") or "").lower().split()
        found = [self._competition(c) for c in self.competitions if all(w in c for w in words)]
        return {"competitions": found, "nextPageToken": ""}

    async def _GetCompetition(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        return self._competition(body["competitionName"])

    async def _ListDataFiles(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        with zipfile.ZipFile(io.BytesIO(self._zip(body["competitionName"]))) as zf:
            found = zf.infolist()
        files = [{"name": i.filename, "totalBytes": i.compress_size, "creationDate": wire.now()} for i in found]
        return {"files": files, "nextPageToken": ""}

    async def _DownloadDataFiles(self, body: dict[str, Any], request: Request) -> Response:
        name = body["competitionName"]
        if name in self.unaccepted_rules:
            return wire.error(403, "You must accept this competition's rules before you'll be able to download files.")
        return RedirectResponse(self._storage(request, f"/storage/data/{name}.zip"), status_code=302)

    async def _StartSubmissionUpload(self, body: dict[str, Any], request: Request) -> Response | dict[str, Any]:
        if body["competitionName"] in self.unaccepted_rules:
            return wire.error(403, "You must accept this competition's rules before you can submit.")
        token = uuid.uuid4().hex
        self.uploads[token] = Upload(body["competitionName"], int(body["contentLength"]))
        return {"token": token, "createUrl": self._storage(request, f"/storage/upload/{token}")}

    async def _CreateSubmission(self, body: dict[str, Any], request: Request) -> Response | dict[str, Any]:
        name, upload = body["competitionName"], self.uploads.get(body["blobFileTokens"])
        if upload is None:
            return wire.error(400, "Unknown blob file token")
        if len(upload.received) != upload.size:
            return wire.error(400, f"The upload is incomplete: {len(upload.received)} of {upload.size} bytes")
        if self.refuse_creation is not None:
            return {"message": self.refuse_creation}
        if name in self.submissions_disabled:
            return wire.error(400, "Submissions are disabled for this competition")
        today = wire.now()[:10]
        made = [s for s in self.submissions if s["competition"] == name and str(s["date"]).startswith(today)]
        if self.daily_limit is not None and len(made) >= self.daily_limit:
            hours = 24 - datetime.now(UTC).hour - datetime.now(UTC).minute / 60
            return wire.error(
                400,
                f"Your team has used its daily Submission allowance ({self.daily_limit}) today, "
                f"please try again tomorrow UTC ({hours:.1f} hours from now).",
            )
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "submission.csv"
            path.write_bytes(bytes(upload.received))
            description = body["submissionDescription"]
            try:
                scored = await self.local.submit(name, path, description, uuid.uuid4().hex)
                private = scored.private_score if self.private_released else None
                record = self._record(name, description, "COMPLETE", scored.public_score, private)
                record["hiddenPrivateScore"] = scored.private_score
            except InvalidSubmission as exc:
                record = self._record(name, description, "ERROR", None, None, error=str(exc))
        self.submissions.append(record)
        return {"message": "Successfully submitted", "ref": record["ref"]}

    async def _GetSubmission(self, body: dict[str, Any], request: Request) -> Response | dict[str, Any]:
        record = next((s for s in self.submissions if s["ref"] == body["ref"]), None)
        if record is None:
            return wire.error(404, "Submission not found")
        polls = self._polls[record["ref"]] = self._polls.get(record["ref"], 0) + 1
        shown = wire.shown(record)
        return shown if polls > self.pending_polls else {**shown, "status": "PENDING", "publicScore": ""}

    async def _ListSubmissions(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        mine = [wire.shown(s) for s in reversed(self.submissions) if s["competition"] == body["competitionName"]]
        return {"submissions": mine, "nextPageToken": ""}

    async def _GetLeaderboard(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        board = await self._board(
            body["competitionName"], private=self.private_released and not body.get("overridePublic")
        )
        start = int(body.get("pageToken") or 0)
        size = min(int(body.get("pageSize") or 20), PAGE_LIMIT)
        rows = [
            {"teamId": i + 1, "teamName": team, "submissionDate": wire.now(), "score": f"{score:.5f}"}
            for i, (team, score) in enumerate(board[start : start + size], start)
        ]
        more = start + size < len(board)
        return {"submissions": rows, "nextPageToken": str(start + size) if more else ""}

    async def _board(self, name: str, *, private: bool) -> list[tuple[str, float]]:
        """The reference teams, the extra ones (all below them) and ours, best first."""
        spec = await self.local.get_competition(name)
        sign = 1.0 if spec.maximize else -1.0
        rows = [
            (e.team, score)
            for e in await self.local.leaderboard(name)
            if e.reference and (score := e.private_score if private else e.public_score) is not None
        ]
        worst = min((sign * score for _, score in rows), default=0.0)
        rows += [(f"team-{i:05d}", sign * (worst - 1e-4 * (i + 1))) for i in range(self.extra_teams)]
        field_name = "hiddenPrivateScore" if private else "publicScore"
        ours = [float(s[field_name]) for s in self.submissions if s["competition"] == name and s.get(field_name)]
        if ours:
            rows.append((self.team if self.report_team else self.username, max(sign * o for o in ours) * sign))
        return sorted(rows, key=lambda r: -sign * r[1])

    # -- helpers -----------------------------------------------------------------------------------

    def _competition(self, name: str) -> dict[str, Any]:
        spec = self.local.catalog_entry(name) if name in self.local.known_ids() else None
        metric = KAGGLE_METRIC_NAMES[spec.metric] if spec else self.metrics.get(name, "Categorization Accuracy")
        return {
            "id": abs(hash(name)) % 100_000,
            "ref": f"https://www.kaggle.com/competitions/{name}",
            "title": spec.title if spec else name,
            "description": spec.description if spec else "",
            "evaluationMetric": metric,
            "deadline": (datetime.now(UTC) + timedelta(days=-3 if self.private_released else 30)).isoformat(),
            "maxDailySubmissions": 5,
            "teamCount": self.team_count if self.team_count is not None else 13 + self.extra_teams,
            "submissionsDisabled": name in self.submissions_disabled,
            "userHasEntered": name not in self.unaccepted_rules,
            "tags": [{"name": "tabular"}],
        }

    def _zip(self, name: str) -> bytes:
        if name in self.archives:
            return self.archives[name]
        public = self.local.root / name / "public"
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for file in ("train.csv", "test.csv", "sample_submission.csv"):
                zf.write(public / file, file)
        return buffer.getvalue()

    def _record(
        self, name: str, description: str, status: str, public: float | None, private: float | None, error: str = ""
    ) -> dict[str, Any]:
        return {
            "ref": 40_000_000 + len(self.submissions) + 1,
            "competition": name,
            "date": wire.now(),
            "description": description,
            "fileName": "submission.csv",
            "status": status,
            "publicScore": "" if public is None else f"{public:.5f}",
            "privateScore": "" if private is None else f"{private:.5f}",
            "errorDescription": error,
            **({"teamName": self.team} if self.report_team else {}),
        }

    @staticmethod
    def _storage(request: Request, path: str) -> str:
        return f"http://localhost:{request.url.port}{path}"
