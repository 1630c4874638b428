"""Submission: validate the best candidate's file, submit it exactly once, then record scores, rank and medal."""

from __future__ import annotations

import asyncio
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import httpx
import pandas as pd
from pydantic_graph import End

from agent_k._failpoints import failpoint
from agent_k.competition import Competition, InvalidSubmission, Scores
from agent_k.events.models import GalleryItem, Log, MediaGallery, SubmissionCreated, SubmissionScored
from agent_k.mission.candidates import candidate_dir
from agent_k.mission.nodes.base import PhaseContext, PhaseNode
from agent_k.mission.phases import Phase
from agent_k.mission.recovery import Step, StepError, run_step
from agent_k.mission.state import MissionResult
from agent_k.ml.evaluate import OOF, CompetitionData, read_predictions
from agent_k.ml.gallery import mistakes, previews
from agent_k.ml.recipes import Prior
from agent_k.platforms.base import (
    LeaderboardIncomplete,
    PlatformError,
    Submission,
    SubmissionQuotaRefused,
    SubmissionStatus,
)
from agent_k.platforms.ranking import submission_standing
from agent_k.platforms.submissions import (
    QuotaExhausted,
    check_quota,
    daily_limit,
    description,
    find_by_key,
    wait_for_score,
)
from agent_k.sandbox import MAX_FILE_MB, UntrustedOutput, read_regular
from agent_k.store.status import FailureReason

UPLOAD = Step(Phase.submission, "upload", "submit the validated file exactly once and get it scored")
FILE_BYTES = MAX_FILE_MB * 2**20
SCORE_WAIT_SHARE = 0.06
"""Scoring may be waited for until 106% of the budget (the contract allows 110%)."""


def idempotency_key(mission_id: str, file: Path) -> str:
    """The mission and what it submits: a re-run of the mission finds its own submission, and two missions that
    happen to write the same file each submit theirs."""
    return f"{mission_id}:{hashlib.sha256(file.read_bytes()).hexdigest()[:32]}"


@dataclass
class SubmissionNode(PhaseNode):
    phase = Phase.submission

    async def run(self, ctx: PhaseContext) -> End[MissionResult]:
        state, deps = ctx.state, ctx.deps
        competition = state.selected_competition
        best_key = state.evolution_state.best_candidate_key
        assert competition is not None and state.data_dir is not None
        if best_key is None:
            return self.fail(ctx, FailureReason.no_candidate, "nothing to submit")
        if best_key == Prior().key and not state.notes:
            why = state.prior_reason or "no model beat it"
            state.notes.append(f"submitted the training prior (class frequencies or the mean), not a model: {why}")
        solution, submission_file = deps.mission_dir / "solution.py", deps.mission_dir / "submission.csv"
        state.solution_path, state.submission_path = str(solution), str(submission_file)
        try:
            key = await _final_files(
                state.mission_id,
                candidate_dir(deps.mission_dir, best_key),
                deps.mission_dir,
                competition,
                state.data_dir,
                ours=best_key == Prior().key,
            )
        except InvalidSubmission as exc:
            return self.fail(ctx, FailureReason.invalid_submission, str(exc))
        if competition.media is not None:
            await self._show_mistakes(ctx, candidate_dir(deps.mission_dir, best_key))

        async def upload() -> tuple[Submission, bool]:
            try:
                return await self._submit_once(ctx, competition, submission_file, key)
            except SubmissionQuotaRefused:
                raise  # retrying cannot help before the quota resets
            except (PlatformError, httpx.HTTPError) as exc:
                raise StepError(FailureReason.submission_failed, f"{deps.platform.name}: {exc}") from exc

        try:
            uploaded = await run_step(state, deps, UPLOAD, upload)
        except (QuotaExhausted, SubmissionQuotaRefused) as exc:
            detail = f"{exc}; the file is ready at {submission_file}; then: agent-k resume {state.mission_id}"
            return self.fail(ctx, FailureReason.submission_quota_exhausted, detail)
        except StepError as failed:
            return self.fail(ctx, failed.reason, failed.detail)
        assert uploaded is not None  # an upload cannot be ignored
        submitted, adopted = uploaded
        state.final_submission_id = submitted.id
        await self.emit(ctx, SubmissionCreated(submission_id=submitted.id, idempotency_key=key, adopted=adopted))

        wait_s = max(0.0, (1 + SCORE_WAIT_SHARE) * deps.budget.total_s - deps.budget.elapsed())
        submitted = await wait_for_score(deps.platform, submitted, timeout_s=wait_s)
        if submitted.status is SubmissionStatus.error:
            await asyncio.to_thread(deps.store.update_submission, state.mission_id, key, status="error")
            reason = f"{deps.platform.name} rejected submission {submitted.id}: {submitted.error}"
            return self.fail(ctx, FailureReason.submission_error, reason)
        state.scores = Scores(public_score=submitted.public_score, private_score=submitted.private_score)
        if submitted.status is SubmissionStatus.pending:
            await self.emit(ctx, Log(message=f"submission {submitted.id} is still being scored after {wait_s:.0f} s"))
        else:
            await self._rank(ctx, competition, submitted)
        await asyncio.to_thread(
            deps.store.update_submission,
            state.mission_id,
            key,
            status="scored" if submitted.status is SubmissionStatus.complete else "submitted",
            public_score=submitted.public_score,
            private_score=submitted.private_score,
        )
        scores = state.scores.model_copy(update={"cv_score": state.evolution_state.best_score})
        await self.emit(ctx, SubmissionScored(submission_id=submitted.id, **scores.model_dump()))
        return End(MissionResult.from_state(state))

    async def _submit_once(
        self, ctx: PhaseContext, competition: Competition, file: Path, key: str
    ) -> tuple[Submission, bool]:
        """Record the intent first; after a crash, adopt the platform's copy instead of submitting again."""
        state, deps = ctx.state, ctx.deps
        store = deps.store
        record = await asyncio.to_thread(
            store.record_submission_intent,
            state.mission_id,
            competition=competition.id,
            platform=deps.platform.name,
            key=key,
        )
        if record.platform_submission_id:
            return await deps.platform.get_submission(competition.id, record.platform_submission_id), True
        existing = await deps.platform.list_submissions(competition.id)
        adopted = find_by_key(existing, key)
        if adopted is not None:
            await asyncio.to_thread(
                store.update_submission, state.mission_id, key, platform_submission_id=adopted.id, status="submitted"
            )
            return adopted, True
        limit = daily_limit(deps.platform.name, deps.settings.daily_submissions, competition.max_daily_submissions)
        check_quota(existing, limit)
        failpoint("submission.before_submit")
        submitted = await deps.platform.submit(competition.id, file, description(state.mission_id, key), key)
        failpoint("submission.after_submit")
        await asyncio.to_thread(
            store.update_submission, state.mission_id, key, platform_submission_id=submitted.id, status="submitted"
        )
        return submitted, False

    async def _show_mistakes(self, ctx: PhaseContext, folder: Path) -> None:
        """A media competition's page shows the chosen candidate's most confident out-of-fold mistakes."""
        competition, data_dir = ctx.state.selected_competition, ctx.state.data_dir
        assert competition is not None and data_dir is not None

        def pick() -> list[GalleryItem]:
            try:
                oof = pd.read_csv(io.BytesIO(read_regular(folder / OOF, MAX_FILE_MB * 1024 * 1024)))
                train = pd.read_csv(Path(data_dir) / "train.csv")
            except (OSError, ValueError, UntrustedOutput):
                return []  # the blend or the prior keeps no out-of-fold file: nothing to show
            return mistakes(competition, train, oof, previews(ctx.deps.mission_dir / "features"))

        items = await asyncio.to_thread(pick)
        if items:
            await self.emit(ctx, MediaGallery(kind="mistakes", items=items))

    async def _rank(self, ctx: PhaseContext, competition: Competition, submitted: Submission) -> None:
        """Rank, percentile and medal of this mission's own submission against the board's other teams (never the
        team's best, which another mission may have made: docs/architecture.md, "Standings")."""
        state, platform = ctx.state, ctx.deps.platform
        team = submitted.team or await platform.team_name()
        try:
            board = await platform.leaderboard(competition.id)
        except LeaderboardIncomplete as exc:
            await self.emit(ctx, Log(message=f"no rank: {exc}"))
            return
        place = submission_standing(board, team, submitted, competition.scored_by)
        if place is None:
            await self.emit(ctx, Log(message=f"no rank: submission {submitted.id} has no score yet"))
            return
        state.scores = state.scores.model_copy(update=place.model_dump())


async def _final_files(
    mission_id: str, source: Path, mission_dir: Path, competition: Competition, data_dir: str, *, ours: bool
) -> str:
    """Copy the best candidate's solution and submission into the mission folder, check the submission
    against the test ids (read by a reader process: the candidate's folder is untrusted, unless `ours`: the
    training prior's, which the runner wrote), and return its idempotency key. Raises `InvalidSubmission`."""
    solution, submission = mission_dir / "solution.py", mission_dir / "submission.csv"
    data = await asyncio.to_thread(CompetitionData.load, competition, Path(data_dir))
    try:
        solution.write_bytes(read_regular(source / "solution.py", FILE_BYTES))
        submission.write_bytes(read_regular(source / "submission.csv", data.submission_shape().max_bytes))
        await read_predictions(data, submission, data.test_ids, ours=ours)
    except UntrustedOutput as exc:
        raise InvalidSubmission(str(exc)) from None
    return idempotency_key(mission_id, submission)
