"""The platform protocol every competition source implements, and the models it speaks."""

from __future__ import annotations

import os
import shutil
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from agent_k.competition import Competition, Criteria
from agent_k.competition.models import MEDIA_FOLDER


class SubmissionStatus(StrEnum):
    pending = "pending"
    complete = "complete"
    error = "error"


class Submission(BaseModel):
    id: str
    competition_id: str
    created_at: datetime
    description: str = ""
    status: SubmissionStatus
    public_score: float | None = None
    private_score: float | None = None
    error: str | None = None
    team: str | None = None
    """The team the platform credited it to, as named on the leaderboard."""


class LeaderboardEntry(BaseModel):
    team: str
    public_score: float | None
    private_score: float | None
    reference: bool = True
    train_rows: int | None = None
    """The training rows a reference team learnt from."""
    build_s: float | None = None
    """A reference team's time to train and predict, when its board was built."""
    note: str | None = None
    """What the entry stands for where that is not one submission (a team's best of several)."""


PUBLIC_FILES = ("train.csv", "test.csv", "sample_submission.csv", "description.md", "competition.json")
"""The public folder every platform hands a mission (hidden labels are never among them)."""


def copy_public_files(public: Path, dest: Path) -> list[Path]:
    """The public files, and a media competition's `media/` folder (its files linked where the disk allows)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in PUBLIC_FILES:
        shutil.copyfile(public / name, dest / name)
    copied = [dest / name for name in PUBLIC_FILES]
    if (public / MEDIA_FOLDER).is_dir():
        shutil.rmtree(dest / MEDIA_FOLDER, ignore_errors=True)
        shutil.copytree(public / MEDIA_FOLDER, dest / MEDIA_FOLDER, copy_function=link_or_copy)
        copied.append(dest / MEDIA_FOLDER)
    return copied


def link_or_copy(source: str, dest: str) -> None:
    """A hard link (the files are read-only from here on), else a copy (another disk)."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copyfile(source, dest)


class PlatformError(Exception):
    """A platform refused or failed a request; the message is safe to show a user."""


class CredentialsMissing(PlatformError):
    """The platform needs credentials this machine lacks; the message names what is missing and where it was
    looked for. A user's input error, not the platform's failure."""


class CompetitionNotFound(PlatformError):
    def __init__(self, competition_id: str, suggestions: list[str]) -> None:
        hint = f"; did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown competition '{competition_id}'{hint}")
        self.competition_id = competition_id
        self.suggestions = suggestions


class CompetitionUnsupported(PlatformError):
    """The competition exists but cannot be entered here (its media extra is not installed, say)."""


class SubmissionQuotaRefused(PlatformError):
    """The platform itself refused a submission for its daily quota (ours may not know every submission the
    team made today); the message carries the platform's own words."""


class LeaderboardIncomplete(PlatformError):
    """The platform would not show the whole leaderboard: a rank on part of it would be wrong, so there is none."""


@runtime_checkable
class PlatformAdapter(Protocol):
    name: str

    async def team_name(self) -> str:
        """Our team's name on the leaderboard, when a submission does not say it."""
        ...

    async def list_competitions(self, criteria: Criteria | None = None) -> list[Competition]: ...

    async def get_competition(self, competition_id: str) -> Competition: ...

    async def download_data(self, competition_id: str, dest: Path) -> list[Path]: ...

    async def submit(self, competition_id: str, file: Path, message: str, idempotency_key: str) -> Submission:
        """Raises `InvalidSubmission` when the platform checks the file at once and it does not fit."""
        ...

    async def get_submission(self, competition_id: str, submission_id: str) -> Submission: ...

    async def list_submissions(self, competition_id: str) -> list[Submission]: ...

    async def leaderboard(self, competition_id: str) -> list[LeaderboardEntry]: ...
