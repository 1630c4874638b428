"""`KaggleAdapter`: the `PlatformAdapter` protocol over Kaggle's public competitions API.

Data is downloaded once per competition into a cache under AGENT_K_HOME (extracted safely, then arranged in
the local platform's layout), so a mission's Discovery looks the same on both platforms.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_k._blocking import run_blocking
from agent_k.competition import Competition, Criteria
from agent_k.competition.metric_names import metric_from_name
from agent_k.platforms.archive import safe_extract
from agent_k.platforms.base import (
    CompetitionNotFound,
    LeaderboardEntry,
    LeaderboardIncomplete,
    PlatformError,
    Submission,
    SubmissionQuotaRefused,
    SubmissionStatus,
    copy_public_files,
)
from agent_k.platforms.kaggle.client import KaggleAuthError, KaggleClient, OutcomeUnknown, refuses_for_quota
from agent_k.platforms.kaggle.layout import (
    UnsupportedCompetition,
    arrange,
    tag_names,
    task_hint,
)
from agent_k.platforms.submissions import find_by_key

_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,99}")
PAGE_SIZE = 200
"""Kaggle's largest page; smaller pages cut big leaderboards short (20 pages of 100 stop at 2,000 teams)."""
MAX_LIST_PAGES = 20
"""Listings (competitions, files, submissions) are short; leaderboards page by the competition's team count."""


class KaggleAdapter:
    name = "kaggle"

    def __init__(self, client: KaggleClient, cache: Path, *, max_data_bytes: int, team: str | None = None) -> None:
        self.client = client
        self.cache = cache
        self.max_data_bytes = max_data_bytes
        self._team = team
        self.skipped: dict[str, str] = {}
        """Competitions the last listing left out, and why."""

    async def team_name(self) -> str:
        """Our name on leaderboards when a submission does not carry its `teamName`: AGENT_K_KAGGLE_TEAM, else
        the account's username (asked of Kaggle once for an API token)."""
        if self._team is None:
            try:
                self._team = await self.client.username()
            except KaggleAuthError:
                raise
            except PlatformError as exc:
                raise PlatformError(f"{exc}; set AGENT_K_KAGGLE_TEAM to our team's name") from None
        return self._team

    # -- competitions ------------------------------------------------------------------------------

    async def list_competitions(self, criteria: Criteria | None = None) -> list[Competition]:
        """Competitions Kaggle finds for the criteria's words, those we can score only (their task is a hint)."""
        words = [criteria.competition] if criteria and criteria.competition else (criteria.keywords if criteria else [])
        body: dict[str, Any] = {"search": " ".join(words)}
        if words:
            body["sortBy"] = "COMPETITION_SORT_BY_RELEVANCE"
        found, self.skipped = [], {}
        async for item in self._pages("ListCompetitions", body, "competitions"):
            metric = metric_from_name(str(item.get("evaluationMetric", "")))
            reason = _unusable(item, metric)
            if reason is None and metric is not None:
                found.append(_listing(item, metric))
            else:
                self.skipped[_slug(item)] = reason or ""
        return found

    async def get_competition(self, competition_id: str) -> Competition:
        """The competition as its files describe it (downloading them on first use) plus Kaggle's live limits."""
        meta = await self.metadata(competition_id)
        if meta.get("submissionsDisabled") or meta.get("isKernelsSubmissionsOnly"):
            reason = _unusable(meta, metric_from_name(str(meta.get("evaluationMetric", ""))))
            raise UnsupportedCompetition(f"'{competition_id}' cannot be entered by a mission: {reason}")
        public = self.cache / competition_id / "public"
        if not (public / "competition.json").exists():
            await self._fetch(competition_id, meta, public)
        spec = Competition.model_validate_json((public / "competition.json").read_text())
        return spec.model_copy(update={"max_daily_submissions": meta.get("maxDailySubmissions") or None})

    async def data_files(self, competition_id: str) -> list[dict[str, Any]]:
        """Kaggle's file list: name, totalBytes, creationDate."""
        body = {"competitionName": competition_id}
        return [f async for f in self._pages("ListDataFiles", body, "files", competition=competition_id)]

    async def download_data(self, competition_id: str, dest: Path) -> list[Path]:
        public = self.cache / competition_id / "public"
        if not _SLUG.fullmatch(competition_id) or not (public / "competition.json").exists():
            await self.get_competition(competition_id)
        return copy_public_files(public, dest)

    async def metadata(self, competition_id: str) -> dict[str, Any]:
        """Kaggle's `ApiCompetition` record (title, evaluationMetric, deadline, maxDailySubmissions, …)."""
        if not _SLUG.fullmatch(competition_id):  # it names a cache folder too: no path tricks reach the disk
            raise CompetitionNotFound(competition_id, [])
        return await self.client.call("GetCompetition", {"competitionName": competition_id}, competition=competition_id)

    async def _fetch(self, competition_id: str, meta: dict[str, Any], public: Path) -> None:
        """Download, check and arrange the data in a private folder, then move it into the cache at once."""
        listed = sum(int(f.get("totalBytes") or 0) for f in await self.data_files(competition_id))
        if listed > self.max_data_bytes:
            raise PlatformError(
                f"the data of '{competition_id}' is {listed:,} bytes, over the {self.max_data_bytes:,}-byte cap "
                "(AGENT_K_KAGGLE_MAX_DATA_BYTES)"
            )
        work = self.cache / f".{competition_id}-{uuid.uuid4().hex[:8]}"
        work.mkdir(parents=True)
        try:
            archive = await self.client.download(
                "DownloadDataFiles",
                {"competitionName": competition_id},
                work / "data.zip",
                competition=competition_id,
                max_bytes=self.max_data_bytes,
            )
            await run_blocking(safe_extract, archive, work / "raw", max_bytes=self.max_data_bytes)
            await run_blocking(arrange, meta, competition_id, work / "raw", work / "public")
            public.parent.mkdir(parents=True, exist_ok=True)
            if not public.exists():  # another process may have won the race; its copy is as good
                (work / "public").rename(public)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    # -- submissions -------------------------------------------------------------------------------

    async def submit(self, competition_id: str, file: Path, message: str, idempotency_key: str) -> Submission:
        """Ask for an upload URL, upload the file, then create the submission (never created twice)."""
        upload = await self.client.call(
            "StartSubmissionUpload",
            {
                "competitionName": competition_id,
                "contentLength": file.stat().st_size,
                "lastModifiedEpochSeconds": int(file.stat().st_mtime),
                "fileName": file.name,
            },
            competition=competition_id,
        )
        await self.client.upload(str(upload["createUrl"]), file)
        body = {"competitionName": competition_id, "blobFileTokens": upload["token"], "submissionDescription": message}
        try:
            created = await self.client.call("CreateSubmission", body, competition=competition_id, idempotent=False)
        except OutcomeUnknown:
            adopted = find_by_key(await self.list_submissions(competition_id), idempotency_key)
            if adopted is None:
                raise
            return adopted
        if not created.get("ref"):
            said = str(created.get("message") or "").strip() or "its answer carried no submission reference"
            if refuses_for_quota(said):
                raise SubmissionQuotaRefused(f"Kaggle refused the submission for its daily quota: {said}")
            raise PlatformError(f"Kaggle did not create the submission on '{competition_id}': {said}")
        return Submission(
            id=str(created["ref"]),
            competition_id=competition_id,
            created_at=datetime.now(UTC),
            description=message,
            status=SubmissionStatus.pending,
        )

    async def get_submission(self, competition_id: str, submission_id: str) -> Submission:
        item = await self.client.call("GetSubmission", {"ref": int(submission_id)}, competition=competition_id)
        return _submission(competition_id, item)

    async def list_submissions(self, competition_id: str) -> list[Submission]:
        body = {"competitionName": competition_id, "sortBy": "SUBMISSION_SORT_BY_DATE", "group": "SUBMISSION_GROUP_ALL"}
        pages = self._pages("ListSubmissions", body, "submissions", competition=competition_id)
        return [_submission(competition_id, item) async for item in pages]

    async def leaderboard(self, competition_id: str) -> list[LeaderboardEntry]:
        """Every team on the public board and, once it is out, on the private one, each labelled by the board
        asked for (`overridePublic` for the public one, whatever the date).

        The private board counts as out when the deadline has passed and our own submissions carry private
        scores; before we have any, the deadline alone decides."""
        meta = await self.metadata(competition_id)
        teams = int(meta.get("teamCount") or 0)
        public = await self._board(competition_id, teams, override_public=True)
        deadline = _parse_time(meta.get("deadline"))
        private: dict[str, float | None] = {}
        if deadline is not None and deadline < datetime.now(UTC):
            ours = await self.list_submissions(competition_id)
            if not ours or any(s.private_score is not None for s in ours):
                private = await self._board(competition_id, teams, override_public=False)
        names = list(dict.fromkeys([*public, *private]))
        return [
            LeaderboardEntry(team=n, public_score=public.get(n), private_score=private.get(n), reference=False)
            for n in names
        ]

    async def _board(self, competition_id: str, teams: int, *, override_public: bool) -> dict[str, float | None]:
        """One board, every page of it; `LeaderboardIncomplete` rather than part of it."""
        board: dict[str, float | None] = {}
        body = {"competitionName": competition_id, "overridePublic": override_public}
        pages = -(-max(teams, 1) // PAGE_SIZE) + 1  # one spare: teams join while we read
        token = ""
        for _ in range(pages):
            page = await self.client.call(
                "GetLeaderboard", {**body, "pageSize": PAGE_SIZE, "pageToken": token}, competition=competition_id
            )
            for row in page.get("submissions") or []:
                board.setdefault(str(row.get("teamName", "")), _score(row.get("score")))
            token = str(page.get("nextPageToken") or "")
            if not token:
                return board
        kind = "public" if override_public else "private"
        raise LeaderboardIncomplete(
            f"the {kind} leaderboard of '{competition_id}' goes on past {len(board):,} teams "
            f"({pages} pages, for the {teams:,} teams Kaggle reports); no rank from part of it"
        )

    async def _pages(
        self, method: str, body: dict[str, Any], key: str, *, competition: str | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        token = ""
        for _ in range(MAX_LIST_PAGES):
            request = {**body, "pageSize": PAGE_SIZE, "pageToken": token}
            page = await self.client.call(method, request, competition=competition)
            for item in page.get(key) or []:
                yield item
            token = str(page.get("nextPageToken") or "")
            if not token:
                return


def _slug(item: dict[str, Any]) -> str:
    return str(item.get("ref", "")).rstrip("/").rsplit("/", 1)[-1]


def _unusable(item: dict[str, Any], metric: str | None) -> str | None:
    """Why a listed competition cannot be entered by a mission, or None."""
    if item.get("submissionsDisabled"):
        return "submissions are disabled"
    if item.get("isKernelsSubmissionsOnly"):
        return "code competition: submissions come from notebooks only"
    if metric is None:
        return f"scored by '{item.get('evaluationMetric') or 'an unnamed metric'}', which we cannot score the same way"
    return None


def _listing(item: dict[str, Any], metric: str) -> Competition:
    slug = _slug(item)
    return Competition(
        id=slug,
        title=str(item.get("title") or slug),
        description=str(item.get("description") or ""),
        task=task_hint(metric),
        metric=metric,
        target="",
        source="kaggle",
        tags=tag_names(item),
        url=f"https://www.kaggle.com/competitions/{slug}",
        max_daily_submissions=item.get("maxDailySubmissions") or None,
    )


def _submission(competition_id: str, item: dict[str, Any]) -> Submission:
    return Submission(
        id=str(item["ref"]),
        competition_id=competition_id,
        created_at=_parse_time(item.get("date")) or datetime.now(UTC),
        description=str(item.get("description") or ""),
        status=_status(str(item.get("status", ""))),
        public_score=_score(item.get("publicScore")),
        private_score=_score(item.get("privateScore")),
        error=str(item.get("errorDescription") or "") or None,
        team=str(item.get("teamName") or "") or None,
    )


def _status(value: str) -> SubmissionStatus:
    """Kaggle's enum names (`COMPLETE`, `SUBMISSION_STATUS_ERROR`, …) in our three states."""
    for status in (SubmissionStatus.complete, SubmissionStatus.error):
        if status.value in value.lower():
            return status
    return SubmissionStatus.pending


def _score(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
