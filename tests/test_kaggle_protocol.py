"""The Kaggle adapter against the service as it behaves today: API tokens, the signed storage redirect, resumable
uploads, public and private boards, boards of thousands of teams, errors inside 200 answers, creations without a
reference, and listings (each fails on an adapter that does not handle it)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_k.competition import Criteria
from agent_k.platforms.base import CompetitionNotFound, LeaderboardIncomplete, PlatformError, SubmissionQuotaRefused
from agent_k.platforms.kaggle import (
    CredentialsMissing,
    KaggleAdapter,
    KaggleAuthError,
    KaggleClient,
    RetryPolicy,
    RulesNotAccepted,
    load_credentials,
)
from agent_k.platforms.kaggle.layout import UnsupportedCompetition
from agent_k.platforms.local import LocalPlatform
from tests.support.fake_kaggle import FakeKaggle
from tests.support.local_server import serving


@pytest.fixture
def fake(competition_cache: Path, tmp_path: Path) -> FakeKaggle:
    root = tmp_path / "kaggle-side"
    for name in ("penguins", "titanic"):
        shutil.copytree(competition_cache / name, root / name)
    return FakeKaggle(LocalPlatform(root), ("penguins", "titanic"), pending_polls=0)


@pytest.fixture
def url(fake: FakeKaggle) -> Iterator[str]:
    with serving(fake.app()) as port:
        yield f"http://127.0.0.1:{port}"


def _adapter(
    fake: FakeKaggle, url: str, http: httpx.AsyncClient, cache: Path, *, token: str | None = None
) -> KaggleAdapter:
    env = {"KAGGLE_API_TOKEN": token} if token else {"KAGGLE_USERNAME": fake.username, "KAGGLE_KEY": fake.key}
    client = KaggleClient(http, load_credentials(env), url, RetryPolicy(initial_s=0.05, max_backoff_s=0.2))
    return KaggleAdapter(client, cache, max_data_bytes=2**26)


def _run(fake: FakeKaggle, url: str, tmp_path: Path, scenario, *, token: bool = False) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with httpx.AsyncClient() as http:
            await scenario(_adapter(fake, url, http, tmp_path / "cache", token=fake.token if token else None))

    asyncio.run(main())


def _sample(fake: FakeKaggle, tmp_path: Path) -> Path:
    file = tmp_path / "submission.csv"
    shutil.copyfile(fake.local.root / "penguins" / "public" / "sample_submission.csv", file)
    return file


# -- 1. credentials --------------------------------------------------------------------------------


def test_api_tokens_come_first_in_the_official_order(tmp_path: Path) -> None:
    legacy = {"KAGGLE_USERNAME": "ada", "KAGGLE_KEY": "legacy-key", "KAGGLE_CONFIG_DIR": str(tmp_path)}
    (tmp_path / "kaggle.json").write_text('{"username": "bob", "key": "file-key"}')
    assert load_credentials(legacy).kind == "key" and load_credentials(legacy).username == "ada"

    (tmp_path / "access_token.txt").write_text("KGAT_from_txt\n")
    (tmp_path / "access_token.txt").chmod(0o600)
    found = load_credentials(legacy)
    assert (found.kind, found.secret.get_secret_value(), found.username) == ("token", "KGAT_from_txt", None)
    (tmp_path / "access_token").write_text("KGAT_from_file")
    (tmp_path / "access_token").chmod(0o600)
    assert load_credentials(legacy).secret.get_secret_value() == "KGAT_from_file"
    assert load_credentials(legacy).source == str(tmp_path / "access_token")

    held = tmp_path / "elsewhere"
    held.write_text("KGAT_in_a_named_file")
    assert (
        load_credentials({**legacy, "KAGGLE_API_TOKEN": str(held)}).secret.get_secret_value() == "KGAT_in_a_named_file"
    )
    direct = load_credentials({**legacy, "KAGGLE_API_TOKEN": "KGAT_itself"})
    assert (direct.secret.get_secret_value(), direct.source) == ("KGAT_itself", "KAGGLE_API_TOKEN")
    assert "KGAT_itself" not in repr(direct) and "KGAT_itself" not in str(direct)

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CredentialsMissing, match=r"set KAGGLE_API_TOKEN .*kaggle\.com/settings"):
        load_credentials({"KAGGLE_CONFIG_DIR": str(empty)})


def test_a_bearer_token_is_sent_and_the_team_comes_from_introspection(
    fake: FakeKaggle, url: str, tmp_path: Path
) -> None:
    async def scenario(kaggle: KaggleAdapter) -> None:
        assert [c.id for c in await kaggle.list_competitions()] == ["penguins", "titanic"]
        assert await kaggle.team_name() == fake.username

    _run(fake, url, tmp_path, scenario, token=True)
    assert fake.auth_kinds == {"bearer"}
    assert [m for _, m in fake.calls].count("IntrospectToken") == 1

    async def wrong(http: httpx.AsyncClient) -> None:
        kaggle = _adapter(fake, url, http, tmp_path, token="KGAT_revoked")
        with pytest.raises(KaggleAuthError, match="from KAGGLE_API_TOKEN \\(HTTP 401\\): check the API token") as e:
            await kaggle.list_competitions()
        assert "KGAT_revoked" not in str(e.value)

    async def main() -> None:
        async with httpx.AsyncClient() as http:
            await wrong(http)

    asyncio.run(main())


# -- 2. the download's redirect --------------------------------------------------------------------


def test_the_download_fetches_the_signed_url_fresh_and_storage_refusals_are_not_rules(
    fake: FakeKaggle, url: str, tmp_path: Path
) -> None:
    async def scenario(kaggle: KaggleAdapter) -> None:
        spec = await kaggle.get_competition("penguins")
        assert spec.target == "species"
        fake.storage_expired = True
        with pytest.raises(PlatformError, match="storage refused the download of 'titanic' \\(HTTP 403\\)") as refused:
            await kaggle.get_competition("titanic")
        assert not isinstance(refused.value, RulesNotAccepted)
        fake.storage_expired = False
        fake.fail("DownloadDataFiles", 403)  # an RPC 403 that says nothing of rules
        with pytest.raises(PlatformError, match="HTTP 403: injected fault") as other:
            await kaggle.get_competition("titanic")
        assert not isinstance(other.value, RulesNotAccepted)
        fake.unaccepted_rules.add("titanic")
        with pytest.raises(RulesNotAccepted, match="accept the competition rules at"):
            await kaggle.get_competition("titanic")

    for token in (False, True):
        fake.storage_authorization.clear()
        fake.unaccepted_rules.clear()
        shutil.rmtree(tmp_path / "cache", ignore_errors=True)
        _run(fake, url, tmp_path, scenario, token=token)
        assert fake.storage_authorization and set(fake.storage_authorization) == {None}


# -- 3. resumable uploads --------------------------------------------------------------------------


def test_an_interrupted_upload_is_resumed_before_the_submission_is_created(
    fake: FakeKaggle, url: str, tmp_path: Path
) -> None:
    file = _sample(fake, tmp_path)
    fake.interrupt_uploads = 1

    async def scenario(kaggle: KaggleAdapter) -> None:
        submitted = await kaggle.submit("penguins", file, "AGENT-K [key:u1]", "u1")
        assert submitted.id == str(fake.submissions[0]["ref"])

    _run(fake, url, tmp_path, scenario)
    assert fake.upload_statuses[0] == 308 and fake.upload_statuses[-1] == 200
    (upload,) = fake.uploads.values()
    assert bytes(upload.received) == file.read_bytes()
    assert fake.submissions[0]["status"] == "COMPLETE"


# -- 4 and 5. the boards ---------------------------------------------------------------------------


def test_public_and_private_boards_are_each_asked_for_and_labelled_by_what_was_asked(
    fake: FakeKaggle, url: str, tmp_path: Path
) -> None:
    file = _sample(fake, tmp_path)
    local_board = asyncio.run(fake.local.leaderboard("penguins"))
    references = {e.team: e for e in local_board if e.reference}

    async def live(kaggle: KaggleAdapter) -> None:
        await kaggle.submit("penguins", file, "AGENT-K [key:b1]", "b1")
        board = {e.team: e for e in await kaggle.leaderboard("penguins")}
        assert all(e.private_score is None for e in board.values())
        for team, entry in references.items():
            assert board[team].public_score == pytest.approx(entry.public_score, abs=1e-5)

    _run(fake, url, tmp_path, live)
    fake.private_released = True
    fake.submissions[0]["privateScore"] = f"{fake.submissions[0]['hiddenPrivateScore']:.5f}"
    fake.bodies.clear()

    async def final(kaggle: KaggleAdapter) -> None:
        board = {e.team: e for e in await kaggle.leaderboard("penguins")}
        for team, entry in references.items():
            assert board[team].public_score == pytest.approx(entry.public_score, abs=1e-5)
            assert board[team].private_score == pytest.approx(entry.private_score, abs=1e-5)
        ours = board[fake.team]
        assert ours.private_score == pytest.approx(float(fake.submissions[0]["hiddenPrivateScore"]), abs=1e-5)

    _run(fake, url, tmp_path, final)
    asked = [b.get("overridePublic") for m, b in fake.bodies if m == "GetLeaderboard"]
    assert asked == [True, False]


def test_a_board_of_thousands_of_teams_is_read_to_the_end_or_not_ranked(
    fake: FakeKaggle, url: str, tmp_path: Path
) -> None:
    fake.extra_teams = 2_500
    references = [e for e in asyncio.run(fake.local.leaderboard("penguins")) if e.reference]

    async def whole(kaggle: KaggleAdapter) -> None:
        board = await kaggle.leaderboard("penguins")
        assert len(board) == 2_500 + len(references) and len({e.team for e in board}) == len(board)

    _run(fake, url, tmp_path, whole)
    pages = [b for m, b in fake.bodies if m == "GetLeaderboard"]
    assert {b["pageSize"] for b in pages} == {200} and len(pages) == 13

    fake.team_count = 300  # Kaggle says 300 teams, the board goes on: rank on part of it would be wrong

    async def partial(kaggle: KaggleAdapter) -> None:
        with pytest.raises(LeaderboardIncomplete, match="goes on past 600 teams"):
            await kaggle.leaderboard("penguins")

    _run(fake, url, tmp_path, partial)


# -- 6, 7 and 8. errors in 200 answers, creations without a reference, listings --------------------


def test_an_error_inside_a_200_answer_is_an_error(fake: FakeKaggle, url: str, tmp_path: Path) -> None:
    fake.fail("GetCompetition", 404, in_body=True)
    fake.fail("ListCompetitions", 503, in_body=True)
    fake.fail("ListDataFiles", 401, in_body=True)

    async def scenario(kaggle: KaggleAdapter) -> None:
        with pytest.raises(CompetitionNotFound):
            await kaggle.metadata("penguins")
        assert await kaggle.list_competitions()  # retried like a 503 status
        with pytest.raises(KaggleAuthError):
            await kaggle.data_files("penguins")

    _run(fake, url, tmp_path, scenario)
    assert [m for _, m in fake.calls].count("ListCompetitions") == 2


def test_a_creation_answer_without_a_reference_reads_as_kaggles_message(
    fake: FakeKaggle, url: str, tmp_path: Path
) -> None:
    """Kaggle answers 200 with a message and no reference: its words say why, and a refusal for the daily
    quota is told apart (nothing to retry before the quota resets)."""
    file = _sample(fake, tmp_path)

    async def scenario(kaggle: KaggleAdapter) -> None:
        fake.refuse_creation = "Your team has used its daily Submission allowance (5) today"
        with pytest.raises(SubmissionQuotaRefused, match="refused the submission for its daily quota: Your team has"):
            await kaggle.submit("penguins", file, "AGENT-K [key:r1]", "r1")
        fake.refuse_creation = "Submissions are closed for maintenance"
        with pytest.raises(PlatformError, match="did not create the submission on 'penguins': Submissions are closed"):
            await kaggle.submit("penguins", file, "AGENT-K [key:r1]", "r1")

    _run(fake, url, tmp_path, scenario)
    assert fake.submissions == []


def test_listings_sort_by_relevance_and_say_why_a_competition_is_left_out(
    fake: FakeKaggle, url: str, tmp_path: Path
) -> None:
    fake.submissions_disabled.add("titanic")

    async def scenario(kaggle: KaggleAdapter) -> None:
        assert [c.id for c in await kaggle.list_competitions()] == ["penguins"]
        assert kaggle.skipped == {"titanic": "submissions are disabled"}
        assert [c.id for c in await kaggle.list_competitions(Criteria(keywords=["pengu"]))] == ["penguins"]
        with pytest.raises(UnsupportedCompetition, match=r"'titanic' cannot be entered .*submissions are disabled"):
            await kaggle.get_competition("titanic")

    _run(fake, url, tmp_path, scenario)
    listed = [b for m, b in fake.bodies if m == "ListCompetitions"]
    assert "sortBy" not in listed[0] and listed[1]["sortBy"] == "COMPETITION_SORT_BY_RELEVANCE"
