"""`LocalPlatform`: Kaggle-style competitions on local disk, with hidden labels and real scoring."""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import json
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k._blocking import run_blocking
from agent_k.competition import Competition, Criteria, metric_named, metric_scoring
from agent_k.competition.columns import time_of
from agent_k.competition.submission_format import read_submission
from agent_k.media import missing_extra
from agent_k.platforms.base import (
    CompetitionNotFound,
    CompetitionUnsupported,
    LeaderboardEntry,
    PlatformError,
    Submission,
    SubmissionStatus,
    copy_public_files,
)
from agent_k.platforms.layouts.submission_format import SubmissionFormat
from agent_k.platforms.local import materialise
from agent_k.platforms.local.board import BOARD_VERSION, board_version, read_board, write_board
from agent_k.platforms.local.catalog import BUILTINS, builtin
from agent_k.platforms.local.materialise import FORMAT_FOLDER, PUBLIC_FRACTION, Hints
from agent_k.platforms.local.splits import RANDOM, TEST_FRACTION, HiddenRows
from agent_k.platforms.local.user_files import UserTables
from agent_k.platforms.targets import CompetitionInputError

_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


class LocalPlatform:
    """The embedded platform. Built-in competitions are materialised on first use."""

    name = "local"
    team = "agent-k"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.models = root.parent / "models"
        """Where the image network's exports are kept: beside the competitions, in the home (`models_dir`)."""

    # -- catalogue ---------------------------------------------------------------------------------

    def known_ids(self) -> list[str]:
        custom = [p.parent.parent.name for p in self.root.glob("*/public/competition.json")]
        return sorted(set(BUILTINS) | set(custom))

    def check_known(self, competition_id: str) -> None:
        """Raise `CompetitionNotFound` (with close names) without materialising anything."""
        known = self.known_ids()
        found = builtin(competition_id)
        if competition_id not in known and found is None:
            raise CompetitionNotFound(competition_id, difflib.get_close_matches(competition_id, known, n=3))
        media = found.media if found else self._media_kind(competition_id)
        if media is not None and (problem := missing_extra(media)) is not None:
            raise CompetitionUnsupported(f"'{competition_id}': {problem}")

    def _media_kind(self, competition_id: str) -> str | None:
        spec_path = self._folder(competition_id) / "public" / "competition.json"
        with contextlib.suppress(OSError, ValueError):
            media = Competition.model_validate_json(spec_path.read_text()).media
            return media.kind if media else None
        return None

    def _folder(self, competition_id: str) -> Path:
        return self.root / competition_id

    def ensure(self, competition_id: str) -> Competition:
        """Return the competition, materialising a built-in one (once, under a lock) if needed."""
        self.check_known(competition_id)
        spec_path = self._folder(competition_id) / "public" / "competition.json"
        if not spec_path.exists() or self._stale_board(competition_id):
            with self.lock(competition_id):
                if not spec_path.exists():
                    self._materialise_builtin(competition_id)
                elif self._stale_board(competition_id):
                    self._rebuild_board(competition_id)
        return Competition.model_validate_json(spec_path.read_text())

    def _board_path(self, competition_id: str) -> Path:
        return self._folder(competition_id) / "private" / "leaderboard.json"

    def _stale_board(self, competition_id: str) -> bool:
        """A built-in's board that older references built (on fewer rows, without the practitioner's entries)."""
        path = self._board_path(competition_id)
        return builtin(competition_id) is not None and path.exists() and board_version(path) < BOARD_VERSION

    def _rebuild_board(self, competition_id: str) -> None:
        """Train today's reference teams on the competition's files as they are; its submissions stay."""
        found = builtin(competition_id)
        assert found is not None, "only a built-in's board is rebuilt"
        from agent_k.platforms.local.references import reference_entries

        prepared = materialise.load(self._folder(competition_id))
        teams = reference_entries(prepared, found.hidden.time, models=self.models)
        write_board(self._board_path(competition_id), teams)

    def _materialise_builtin(self, competition_id: str) -> None:
        found = builtin(competition_id)
        assert found is not None, "checked by check_known"
        from agent_k.platforms.local.references import reference_entries

        with tempfile.TemporaryDirectory(dir=self.root, prefix=f".media-{competition_id}-") as scratch:
            files: dict[str, Path] = {}
            if found.write_media is not None:
                table = found.write_media(Path(scratch))
                files = {path: Path(scratch) / path for path in table["path"]}
            else:
                assert found.load is not None
                table = found.load()
            prepared = materialise.prepare(
                found.id,
                found.title,
                table,
                target=found.target,
                metric=found.metric,
                id_column="id" if found.media else None,
                description=found.description,
                source=found.source,
                tags=found.tags,
                targets=list(found.targets) or None,
                hidden=found.hidden,
                media=found.media,
                files=files,
            )
            leaderboard = reference_entries(prepared, found.hidden.time, models=self.models)
            materialise.write(prepared, self.root, leaderboard)

    def add(
        self,
        competition_id: str,
        tables: UserTables,
        *,
        metric: str,
        top_k: int | None = None,
        hidden: HiddenRows = RANDOM,
        hints: Hints = Hints(),
        references: bool = True,
        public_share: float = PUBLIC_FRACTION,
    ) -> Competition:
        """Create a competition from the user's tables; on any error nothing is written. `references`: train the
        reference teams for its board (a platform with a board of its own does not); `public_share`: of the hidden
        rows, those a public score is computed on."""
        if not _SLUG.fullmatch(competition_id):
            raise CompetitionInputError(f"invalid name {competition_id!r}: use lowercase letters, digits and dashes")
        if competition_id in self.known_ids():
            raise CompetitionInputError(f"competition '{competition_id}' already exists")
        from agent_k.platforms.local.references import reference_entries

        several = metric_named(metric).over_columns
        if several is not None and len(tables.targets) > 1:  # AUC over several labels: their mean AUC
            metric = several
        tables = tables.for_metric(metric)

        prepared = materialise.prepare(
            competition_id,
            competition_id.replace("-", " ").title(),
            tables.train,
            target=tables.targets[0],
            targets=tables.targets,
            metric=metric,
            id_column=tables.id_column,
            test=tables.test,
            solution=tables.solution,
            source=tables.source,
            description=tables.description,
            tags=("custom",),
            top_k=top_k or (tables.listed if metric_named(metric).top_k else None),  # else what the sample lists
            hidden=hidden,
            hints=hints,
            train_only=tables.train_only,
            media=tables.media,
            files=tables.files,
            public_share=public_share,
        )
        time = hidden.time
        if time is None and hints.time_column is not None and tables.test is not None:  # the user's test: future?
            time = {**time_of(prepared.train, hints.time_column), "keys": list(hints.series_keys)}
        # before the lock: a failure here leaves nothing behind
        leaderboard = reference_entries(prepared, time, models=self.models) if references else []
        with self.lock(competition_id):
            if self._folder(competition_id).exists():
                raise CompetitionInputError(f"competition '{competition_id}' already exists")
            materialise.write(prepared, self.root, leaderboard, tables.submission_format)
        return prepared.spec

    def submission_format(self, competition_id: str) -> SubmissionFormat | None:
        """The own sample submission of the folder a competition was added from, where it was."""
        return SubmissionFormat.load(self._folder(competition_id) / FORMAT_FOLDER)

    def catalog_entry(self, competition_id: str) -> Competition:
        """A spec for listing: the materialised one, or one from the catalogue without touching disk."""
        spec_path = self._folder(competition_id) / "public" / "competition.json"
        if spec_path.exists():
            return Competition.model_validate_json(spec_path.read_text())
        b = builtin(competition_id)
        assert b is not None, "only known competitions are listed"
        return Competition(
            id=b.id,
            title=b.title,
            description=b.description,
            task=b.task,
            metric=b.metric,
            target=b.target,
            n_train=round(b.rows * (1 - TEST_FRACTION)),
            n_test=round(b.rows * TEST_FRACTION),
            source=b.source,
            tags=list(b.tags),
        )

    @contextlib.contextmanager
    def lock(self, competition_id: str) -> Iterator[None]:
        locks = self.root / ".locks"  # kept apart: the lock files outlive their holders, by design of flock
        locks.mkdir(parents=True, exist_ok=True)
        with (locks / f"{competition_id}.lock").open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # -- PlatformAdapter ---------------------------------------------------------------------------

    async def list_competitions(self, criteria: Criteria | None = None) -> list[Competition]:
        return [self.catalog_entry(cid) for cid in self.known_ids()]

    async def get_competition(self, competition_id: str) -> Competition:
        return await run_blocking(self.ensure, competition_id)

    async def download_data(self, competition_id: str, dest: Path) -> list[Path]:
        await self.get_competition(competition_id)
        return copy_public_files(self._folder(competition_id) / "public", dest)

    async def submit(self, competition_id: str, file: Path, message: str, idempotency_key: str) -> Submission:
        spec = await self.get_competition(competition_id)
        return await run_blocking(self._submit, spec, file, message, idempotency_key)

    def _submit(self, spec: Competition, file: Path, message: str, key: str) -> Submission:
        test_ids = pd.read_csv(self._folder(spec.id) / "public" / "test.csv", usecols=[spec.id_column])
        predictions = read_submission(file, spec, test_ids[spec.id_column])
        with self.lock(spec.id):
            for existing in self._submissions(spec.id):
                if existing.get("idempotency_key") == key:
                    return Submission.model_validate(existing["submission"])
            public, private = self._score(spec, predictions)
            submission = Submission(
                id=f"sub-{uuid.uuid4().hex[:12]}",
                competition_id=spec.id,
                created_at=datetime.now(UTC),
                description=message,
                status=SubmissionStatus.complete,
                public_score=public,
                private_score=private,
            )
            folder = self._folder(spec.id) / "submissions"
            staging = folder / f".staging-{submission.id}"
            staging.mkdir(parents=True)
            shutil.copyfile(file, staging / "submission.csv")
            record = {"idempotency_key": key, "team": self.team, "submission": submission.model_dump(mode="json")}
            (staging / "meta.json").write_text(json.dumps(record, indent=2))
            staging.rename(folder / submission.id)
        return submission

    def score_file(self, spec: Competition, file: Path) -> tuple[float | None, float | None]:
        """A submission file's public and private scores, without submitting it (benchmarks compare files)."""
        test_ids = pd.read_csv(self._folder(spec.id) / "public" / "test.csv", usecols=[spec.id_column])
        return self._score(spec, read_submission(file, spec, test_ids[spec.id_column]))

    def _score(self, spec: Competition, predictions: pd.DataFrame) -> tuple[float | None, float | None]:
        solution_path = self._folder(spec.id) / "private" / "solution.csv"
        if not solution_path.exists():
            return None, None
        solution = pd.read_csv(solution_path).set_index(spec.id_column).loc[predictions.index]
        public = (solution["Usage"] == "Public").to_numpy()
        y = (solution[spec.target_columns] if spec.targets else solution[spec.target]).reset_index(drop=True)
        frame = predictions.reset_index(drop=True)
        return (
            metric_scoring.score(spec, y[public], frame[public]) if public.any() else None,
            metric_scoring.score(spec, y[~public], frame[~public]) if (~public).any() else None,
        )

    def _submissions(self, competition_id: str) -> list[dict[str, Any]]:
        folder = self._folder(competition_id) / "submissions"
        records = [json.loads(p.read_text()) for p in folder.glob("sub-*/meta.json")]
        return sorted(records, key=lambda r: str(r["submission"]["created_at"]))

    async def get_submission(self, competition_id: str, submission_id: str) -> Submission:
        for submission in await self.list_submissions(competition_id):
            if submission.id == submission_id:
                return submission
        raise PlatformError(f"no submission '{submission_id}' in '{competition_id}'")

    async def list_submissions(self, competition_id: str) -> list[Submission]:
        self.check_known(competition_id)
        return [Submission.model_validate(r["submission"]) for r in self._submissions(competition_id)]

    async def team_name(self) -> str:
        return self.team

    async def leaderboard(self, competition_id: str) -> list[LeaderboardEntry]:
        """The reference teams, and our team as Kaggle lists a team: by its best public submission (which a
        mission's own standing never is: `agent_k.platforms.ranking.submission_standing`)."""
        spec = await self.get_competition(competition_id)
        entries = read_board(self._board_path(competition_id))
        ours = [s for s in await self.list_submissions(competition_id) if s.public_score is not None]
        if ours:
            best = spec.scored_by.ranked(ours, lambda s: s.public_score)[0]
            entries.append(
                LeaderboardEntry(
                    team=self.team,
                    public_score=best.public_score,
                    private_score=best.private_score,
                    reference=False,
                    note=f"the team's best public submission of {len(ours)}",
                )
            )
        return entries
