"""The competition of a folder an agent is handed (`agent-k run --data DIR --out FILE`, as MLE-bench hands its
agents `/home/data`), and the mission's submission written back as that folder's own sample lays it out.

A folder that is one of MLE-bench's prepared competitions, where the mlebench platform is configured, is that
competition (graded and ranked by MLE-bench's rules). Any other folder is entered on the local platform as a user's
folder is (`competitions add --data`), once: its metric from `--metric`, else from the Evaluation section of its
`description.md` through the metrics' Kaggle names.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agent_k.competition.metric_names import metrics_in_description
from agent_k.config import Settings
from agent_k.platforms.layouts.submission_format import SubmissionFormat
from agent_k.platforms.local.platform import LocalPlatform
from agent_k.platforms.mlebench.files import competition_of
from agent_k.platforms.targets import CompetitionInputError

_GENERIC = {"public", "data", "prepared", "input", "home", "raw"}
"""Folder names that say nothing of the competition (`/home/data`, `<id>/prepared/public`)."""


@dataclass(frozen=True)
class FolderCompetition:
    platform: str
    competition_id: str
    entered: LocalPlatform
    """The local platform the folder was entered on, which keeps its own sample submission."""

    def submission_format(self) -> SubmissionFormat | None:
        return self.entered.submission_format(self.competition_id)


def folder_competition(settings: Settings, folder: Path, metric: str | None) -> FolderCompetition:
    """The competition of `folder`, entered here on first use; `CompetitionInputError` says in one line why a folder
    cannot be one."""
    if not folder.is_dir():
        raise CompetitionInputError(f"folder not found: {folder}")
    if settings.mlebench_data is not None and (found := competition_of(folder, settings.mlebench_data)) is not None:
        if metric is not None:
            raise CompetitionInputError(f"'{found}' is MLE-bench's: its grader decides the metric, not --metric")
        from agent_k.platforms.mlebench.adapter import MlebenchPlatform

        return FolderCompetition(MlebenchPlatform.name, found, MlebenchPlatform.of(settings).local)
    local = LocalPlatform(settings.competitions_dir)
    name = _name_for(folder)
    if name not in local.known_ids():
        _enter(local, folder, name, metric or metric_of_folder(folder))
    return FolderCompetition(local.name, name, local)


def metric_of_folder(folder: Path) -> str:
    """The one metric the folder's `description.md` names in its Evaluation section."""
    description = folder / "description.md"
    if not description.is_file():
        raise CompetitionInputError(f"{folder} has no description.md to read the metric from: name it with --metric")
    named = metrics_in_description(description.read_text(errors="replace"))
    if len(named) != 1:
        said = f"names {', '.join(named)}" if named else "names no metric AGENT-K computes the same way"
        raise CompetitionInputError(f"the Evaluation section of {description} {said}: name one with --metric")
    return named[0]


def _enter(local: LocalPlatform, folder: Path, name: str, metric: str) -> None:
    from agent_k.platforms.local.materialise import Hints
    from agent_k.platforms.local.user_files import from_folder, hidden_rows

    local.root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=local.root, prefix=".unzipped-") as scratch:
        tables = from_folder(folder, name, [], solution=None, scratch=Path(scratch))
        local.add(name, tables, metric=metric, hidden=hidden_rows("auto", None, Hints(), tables))


def _name_for(folder: Path) -> str:
    """A competition id for the folder: its telling name, and a digest of where it is and what it holds (so a
    changed folder is entered afresh)."""
    folder = folder.resolve()
    words = next((p.name for p in (folder, *folder.parents) if p.name and p.name.lower() not in _GENERIC), "folder")
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")[:48] or "folder"
    listing = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file())
    digest = hashlib.sha256(repr((str(folder), listing)).encode()).hexdigest()[:10]
    return f"{slug}-{digest}"


def write_submission(source: Path, out: Path, submission: SubmissionFormat | None) -> None:
    """The mission's submission at `out`, as the folder's sample lays it out; whole or not at all. `ValueError` or
    `OSError` says why it could not be written."""
    import pandas as pd

    frame = pd.read_csv(source)
    written = submission.written_back(frame) if submission is not None else frame
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    try:
        written.to_csv(partial, index=False)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
