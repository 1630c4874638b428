"""`MlebenchPlatform`: MLE-bench's prepared competitions, entered from what an agent sees, graded on all the
answers by the metric the competition's grader uses, and ranked on its real Kaggle leaderboard.

A competition is entered once, as a user's folder is (`agent_k.platforms.layouts`), into a local platform of its
own under the home: the answers are its hidden labels, all private (MLE-bench grades every test row at once;
there is no public score), and its board is `leaderboard.csv` instead of reference teams. A submission is graded
by the competition's own `grade.py` where the checkout is installed (`grader`), else by our declaration of the
same metric; a standing is then a place among the competition's real Kaggle teams, with MLE-bench's medal rules
(`agent_k.platforms.ranking`).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from agent_k._blocking import run_blocking
from agent_k.competition import Competition, Criteria, Metric, metric_named
from agent_k.platforms.base import LeaderboardEntry, PlatformError, Submission
from agent_k.platforms.layouts.submission_format import SubmissionFormat
from agent_k.platforms.local.platform import LocalPlatform
from agent_k.platforms.local.user_files import from_folder
from agent_k.platforms.mlebench.files import CompetitionFiles, competition_files, known_ids
from agent_k.platforms.mlebench.grader import GRADER_NAME, grade_with_checkout
from agent_k.platforms.targets import CompetitionInputError

if TYPE_CHECKING:
    from agent_k.config import Settings


class MlebenchPlatform:
    name = "mlebench"

    def __init__(self, data: Path, repo: Path, home: Path, python: Path | None = None) -> None:
        self.data, self.repo, self.python = data, repo, python
        self.local = LocalPlatform(home / "competitions")
        self.grades = home / "grades"
        """A JSON file per competition: each submission's grade by its `grade.py`, where one graded it."""
        self.team = self.local.team

    @classmethod
    def of(cls, settings: Settings) -> MlebenchPlatform:
        """The platform the settings configure (the declaration checks first that they do)."""
        if settings.mlebench_data is None or settings.mlebench_repo is None:
            raise PlatformError("the mlebench platform needs AGENT_K_MLEBENCH_DATA and AGENT_K_MLEBENCH_REPO")
        return cls(settings.mlebench_data, settings.mlebench_repo, settings.home / "mlebench", settings.mlebench_python)

    def files(self, competition_id: str) -> CompetitionFiles:
        return competition_files(self.data, self.repo, competition_id)

    def ensure(self, competition_id: str) -> Competition:
        """The competition, entered from its public folder on first use (once, under a lock)."""
        files = self.files(competition_id)
        self._check_direction(files, metric_named(files.metric()[0]))
        if competition_id not in self.local.known_ids():
            with self.local.lock(f"mlebench-{competition_id}"):
                if competition_id not in self.local.known_ids():
                    self._enter(files)
        return self.local.ensure(competition_id)

    def _enter(self, files: CompetitionFiles) -> None:
        metric, top_k = files.metric()
        self.local.root.mkdir(parents=True, exist_ok=True)
        try:
            with tempfile.TemporaryDirectory(dir=self.local.root, prefix=".unzipped-") as scratch:
                tables = from_folder(files.public, files.id, [], solution=files.answers, scratch=Path(scratch))
                self.local.add(files.id, tables, metric=metric, top_k=top_k, references=False, public_share=0.0)
        except CompetitionInputError as exc:
            raise PlatformError(f"'{files.id}': {exc}") from None

    def _check_direction(self, files: CompetitionFiles, metric: Metric) -> None:
        """MLE-bench reads the direction off the board (lower is better when its first score is below its last):
        ranking by a metric that disagrees would put every place upside down."""
        scores = files.board()["score"].dropna()
        lower_first = bool(scores.iloc[0] < scores.iloc[-1])
        if len(scores) > 1 and scores.iloc[0] != scores.iloc[-1] and lower_first == metric.maximize:
            better = "higher" if metric.maximize else "lower"
            raise PlatformError(f"'{files.id}': its leaderboard ranks {'lower' if lower_first else 'higher'} scores "
                                f"first, but {metric.name} is better {better}")  # fmt: skip

    def submission_format(self, competition_id: str) -> SubmissionFormat | None:
        return self.local.submission_format(competition_id)

    # -- PlatformAdapter ---------------------------------------------------------------------------

    async def team_name(self) -> str:
        return self.team

    async def list_competitions(self, criteria: Criteria | None = None) -> list[Competition]:
        """The prepared competitions whose grader is a metric of ours: an entered one as it was entered, another
        from its config alone (its task a hint, as a Kaggle listing's), without reading its files."""
        return await run_blocking(self._listed)

    def _listed(self) -> list[Competition]:
        listed = []
        for competition_id in known_ids(self.data):
            if competition_id in self.local.known_ids():
                listed.append(self.local.catalog_entry(competition_id))
                continue
            try:
                files = self.files(competition_id)
                metric, _ = files.metric()
            except PlatformError:
                continue  # a competition AGENT-K cannot enter is not offered
            usual = metric_named(metric).usual_task
            listed.append(Competition(id=competition_id, title=files.title, task=usual, metric=metric, target="",
                                      source="mlebench"))  # fmt: skip
        return listed

    async def get_competition(self, competition_id: str) -> Competition:
        return await run_blocking(self.ensure, competition_id)

    async def download_data(self, competition_id: str, dest: Path) -> list[Path]:
        await self.get_competition(competition_id)
        return await self.local.download_data(competition_id, dest)

    async def submit(self, competition_id: str, file: Path, message: str, idempotency_key: str) -> Submission:
        await self.get_competition(competition_id)
        submission = await self.local.submit(competition_id, file, message, idempotency_key)
        if submission.private_score is not None:
            await run_blocking(self._grade, competition_id, submission.id, file)
        return _graded(submission, self._grades_of(competition_id))

    async def get_submission(self, competition_id: str, submission_id: str) -> Submission:
        return _graded(await self.local.get_submission(competition_id, submission_id), self._grades_of(competition_id))

    async def list_submissions(self, competition_id: str) -> list[Submission]:
        grades = self._grades_of(competition_id)  # read once for them all
        return [_graded(s, grades) for s in await self.local.list_submissions(competition_id)]

    def _grade(self, competition_id: str, submission_id: str, file: Path) -> None:
        """Grade the submission with the competition's `grade.py`, once, where the checkout runs it."""
        if submission_id in self._grades_of(competition_id):
            return
        files = self.files(competition_id)
        grade_fn = str((files.config.get("grader") or {}).get("grade_fn") or "")
        grade = grade_with_checkout(grade_fn, file, files.answers, self.repo, self.python)
        if grade is None:
            return
        with self.local.lock(f"mlebench-grades-{competition_id}"):
            grades = {**self._grades_of(competition_id), submission_id: {"score": grade.score, "reason": grade.reason}}
            path = self.grades / f"{competition_id}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            temporary.write_text(json.dumps(grades))
            temporary.replace(path)

    def _grades_of(self, competition_id: str) -> dict[str, dict[str, float | str | None]]:
        path = self.grades / f"{competition_id}.json"
        return json.loads(path.read_text()) if path.is_file() else {}

    async def leaderboard(self, competition_id: str) -> list[LeaderboardEntry]:
        """The competition's Kaggle teams by their private scores, and ours by its best graded submission."""
        spec = await self.get_competition(competition_id)
        board = await run_blocking(self.files(competition_id).board)
        # MLE-bench keeps Kaggle's team ids, not their names
        teams = [f"team {t}" for t in board["teamId"]] if "teamId" in board.columns else None
        teams = teams or [f"place {n}" for n in range(1, len(board) + 1)]
        entries = [
            LeaderboardEntry(team=str(team), public_score=None, private_score=float(score))
            for team, score in zip(teams, board["score"], strict=True)
            if score == score  # a team without a score is not ranked
        ]
        graded = [s for s in await self.list_submissions(competition_id) if s.private_score is not None]
        if graded:
            best = spec.scored_by.ranked(graded, lambda s: s.private_score)[0]
            by = GRADER_NAME if best.id in self._grades_of(competition_id) else f"AGENT-K's {spec.metric}"
            entries.append(
                LeaderboardEntry(
                    team=self.team,
                    public_score=None,
                    private_score=best.private_score,
                    reference=False,
                    note=f"the team's best graded submission of {len(graded)}, graded by {by}",
                )
            )
        return entries


GRADE_DECIMALS = 5
"""MLE-bench's `Grader.__call__` rounds a score to 5 decimals before it is ranked."""


def _graded(submission: Submission, grades: dict[str, dict[str, float | str | None]]) -> Submission:
    """The submission with its score as MLE-bench's grader reports it: its `grade.py`'s where that ran (`grades`),
    else ours to the grader's 5 decimals."""
    grade = grades.get(submission.id)
    if grade is not None:
        score, reason = grade["score"], grade["reason"]
        update = {"private_score": score, "error": None if score is not None else f"{GRADER_NAME}: {reason}"}
        return submission.model_copy(update=update)
    if submission.private_score is None:
        return submission
    return submission.model_copy(update={"private_score": round(submission.private_score, GRADE_DECIMALS)})
