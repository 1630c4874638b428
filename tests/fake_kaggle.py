"""A fake Kaggle API: a real FastAPI app on 127.0.0.1 speaking the endpoints `KaggleAdapter` uses.

Every call is `POST /v1/competitions.CompetitionApiService/<Method>` with a camelCase JSON body and HTTP Basic
auth, as kagglesdk sends it. Shapes (the subset AGENT-K reads):

  ListCompetitions   {search, pageSize, pageToken}   -> {competitions: [ApiCompetition], nextPageToken}
  GetCompetition     {competitionName}               -> ApiCompetition
                        {ref, title, description, evaluationMetric, deadline, maxDailySubmissions, teamCount, tags}
  ListDataFiles      {competitionName}               -> {files: [{name, totalBytes, creationDate}], nextPageToken}
                        (sizes as stored, so a zip bomb is only caught while it is extracted)
  DownloadDataFiles  {competitionName}               -> 302 to the zip in storage (another origin)
  StartSubmissionUpload {competitionName, contentLength, lastModifiedEpochSeconds, fileName} -> {token, createUrl}
  PUT createUrl      the file's bytes                -> 200
  CreateSubmission   {competitionName, blobFileTokens, submissionDescription} -> {message, ref}
  GetSubmission      {ref}                           -> ApiSubmission {ref, date, description, fileName, status,
                                                         publicScore, privateScore, errorDescription, teamName}
  ListSubmissions    {competitionName, pageSize, pageToken} -> {submissions: [ApiSubmission], nextPageToken}
  GetLeaderboard     {competitionName, pageSize, pageToken}
                        -> {submissions: [{teamId, teamName, submissionDate, score}], nextPageToken}

Errors are `{"code": N, "message": ...}` with status N. Competitions and their scoring come from a
`LocalPlatform` (real data, hidden labels); storage is served as `http://localhost:PORT` so that the API
(`http://127.0.0.1:PORT`) and storage are different origins, as on kaggle.com.
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

KAGGLE_METRIC_NAMES = {
    "auc": "Area Under Receiver Operating Characteristic Curve",
    "accuracy": "Categorization Accuracy",
    "rmse": "Root Mean Squared Error",
    "mae": "Mean Absolute Error",
    "logloss": "Log Loss",
    "r2": "R2 Score",
}


@dataclass
class Fault:
    method: str
    status: int
    times: int
    retry_after: str | None = None


@dataclass
class FakeKaggle:
    local: LocalPlatform
    competitions: tuple[str, ...]
    username: str = "agentk-user"
    key: str = "fake-kaggle-key-5f2c9a"
    team: str = "Agent K Team"
    """The team Kaggle credits our submissions to: not the username, as for most real accounts."""
    unaccepted_rules: set[str] = field(default_factory=set)
    archives: dict[str, bytes] = field(default_factory=dict)
    """Replacement zips per competition (path traversal, bombs)."""
    pending_polls: int = 2
    """GetSubmission answers PENDING this many times per submission before the score."""
    faults: list[Fault] = field(default_factory=list)
    calls: list[tuple[float, str]] = field(default_factory=list)
    storage_authorization: list[str | None] = field(default_factory=list)
    submissions: list[dict[str, Any]] = field(default_factory=list)
    uploads: dict[str, bytes] = field(default_factory=dict)
    _polls: dict[int, int] = field(default_factory=dict)

    def fail(self, method: str, status: int, *, times: int = 1, retry_after: str | None = None) -> None:
        self.faults.append(Fault(method, status, times, retry_after))

    def seed_submission(self, competition: str, description: str, *, status: str = "COMPLETE") -> None:
        """An earlier submission of ours (e.g. from another tool) that counts towards today's quota."""
        self.submissions.append(self._record(competition, description, status, public=None, private=None))

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/competitions.CompetitionApiService/{method}")
        async def rpc(method: str, request: Request) -> Response:
            self.calls.append((time.monotonic(), method))
            if request.headers.get("authorization") != self._basic():
                return _error(401, "Unauthenticated")
            fault = next((f for f in self.faults if f.method == method and f.times > 0), None)
            if fault is not None:
                fault.times -= 1
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                return _error(fault.status, "injected fault", headers)
            body = await request.json()
            handler = getattr(self, f"_{method}", None)
            if handler is None:
                return _error(404, f"no method {method}")
            name = body.get("competitionName")
            if name is not None and name not in self.competitions:
                return _error(404, "Competition not found")
            result: Response | dict[str, Any] = await handler(body, request)
            return result if isinstance(result, Response) else JSONResponse(result)

        @app.get("/storage/data/{competition}.zip")
        async def data(competition: str, request: Request) -> Response:
            self.storage_authorization.append(request.headers.get("authorization"))
            return Response(self._zip(competition), media_type="application/zip")

        @app.put("/storage/upload/{token}")
        async def upload(token: str, request: Request) -> Response:
            self.storage_authorization.append(request.headers.get("authorization"))
            self.uploads[token] = await request.body()
            return Response(status_code=200)

        return app

    # -- the RPC methods ---------------------------------------------------------------------------

    async def _ListCompetitions(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        words = str(body.get("search") or "").lower().split()
        found = [self._competition(c) for c in self.competitions if all(w in c for w in words)]
        return {"competitions": found, "nextPageToken": ""}

    async def _GetCompetition(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        return self._competition(body["competitionName"])

    async def _ListDataFiles(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        with zipfile.ZipFile(io.BytesIO(self._zip(body["competitionName"]))) as zf:
            files = [{"name": i.filename, "totalBytes": i.compress_size, "creationDate": _now()} for i in zf.infolist()]
        return {"files": files, "nextPageToken": ""}

    async def _DownloadDataFiles(self, body: dict[str, Any], request: Request) -> Response:
        name = body["competitionName"]
        if name in self.unaccepted_rules:
            return _error(403, "You must accept this competition's rules before you'll be able to download files.")
        return RedirectResponse(self._storage(request, f"/storage/data/{name}.zip"), status_code=302)

    async def _StartSubmissionUpload(self, body: dict[str, Any], request: Request) -> Response | dict[str, Any]:
        if body["competitionName"] in self.unaccepted_rules:
            return _error(403, "You must accept this competition's rules before you can submit.")
        token = uuid.uuid4().hex
        return {"token": token, "createUrl": self._storage(request, f"/storage/upload/{token}")}

    async def _CreateSubmission(self, body: dict[str, Any], request: Request) -> Response | dict[str, Any]:
        name, content = body["competitionName"], self.uploads.get(body["blobFileTokens"])
        if content is None:
            return _error(400, "Unknown blob file token")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "submission.csv"
            path.write_bytes(content)
            try:
                scored = await self.local.submit(name, path, body["submissionDescription"], uuid.uuid4().hex)
                record = self._record(name, body["submissionDescription"], "COMPLETE", scored.public_score, None)
            except InvalidSubmission as exc:
                record = self._record(name, body["submissionDescription"], "ERROR", None, None, error=str(exc))
        self.submissions.append(record)
        return {"message": "Successfully submitted", "ref": record["ref"]}

    async def _GetSubmission(self, body: dict[str, Any], request: Request) -> Response | dict[str, Any]:
        record = next((s for s in self.submissions if s["ref"] == body["ref"]), None)
        if record is None:
            return _error(404, "Submission not found")
        polls = self._polls[record["ref"]] = self._polls.get(record["ref"], 0) + 1
        return record if polls > self.pending_polls else {**record, "status": "PENDING", "publicScore": ""}

    async def _ListSubmissions(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        mine = [s for s in reversed(self.submissions) if s["competition"] == body["competitionName"]]
        return {"submissions": mine, "nextPageToken": ""}

    async def _GetLeaderboard(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        name = body["competitionName"]
        spec = await self.local.get_competition(name)
        rows = [(e.team, e.public_score) for e in await self.local.leaderboard(name) if e.reference]
        ours = [float(s["publicScore"]) for s in self.submissions if s["competition"] == name and s["publicScore"]]
        if ours:
            rows.append((self.team, max(ours) if spec.maximize else min(ours)))
        rows.sort(key=lambda r: -(r[1] or 0.0) if spec.maximize else (r[1] or 0.0))
        board = [
            {"teamId": i + 1, "teamName": team, "submissionDate": _now(), "score": f"{score:.5f}"}
            for i, (team, score) in enumerate(rows)
        ]
        return {"submissions": board, "nextPageToken": ""}

    # -- helpers -----------------------------------------------------------------------------------

    def _basic(self) -> str:
        return "Basic " + base64.b64encode(f"{self.username}:{self.key}".encode()).decode()

    def _competition(self, name: str) -> dict[str, Any]:
        spec = self.local.catalog_entry(name) if name in self.local.known_ids() else None
        metric = KAGGLE_METRIC_NAMES[spec.metric] if spec else "Categorization Accuracy"
        return {
            "id": abs(hash(name)) % 100_000,
            "ref": f"https://www.kaggle.com/competitions/{name}",
            "title": spec.title if spec else name,
            "description": spec.description if spec else "",
            "evaluationMetric": metric,
            "deadline": (datetime.now(UTC) + timedelta(days=30)).isoformat(),
            "maxDailySubmissions": 5,
            "teamCount": 14,
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
            "date": _now(),
            "description": description,
            "fileName": "submission.csv",
            "status": status,
            "publicScore": "" if public is None else f"{public:.5f}",
            "privateScore": "" if private is None else f"{private:.5f}",
            "errorDescription": error,
            "teamName": self.team,
        }

    @staticmethod
    def _storage(request: Request, path: str) -> str:
        return f"http://localhost:{request.url.port}{path}"


def _error(code: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=code, headers=headers)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
