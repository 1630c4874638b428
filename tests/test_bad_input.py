"""Bad input at the edges (issue: trust boundary, point 5): every case is a clear 4xx or a one-line exit 2,
never a 500 or a traceback, and nothing is written."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_k.api.app import create_app
from agent_k.config import Settings
from agent_k.store.repository import Store
from tests.conftest import run_cli
from tests.support.local_server import serving

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def api(home: Path, database_url: str) -> Iterator[tuple[str, Store]]:
    """An API on 127.0.0.1 without a token, over SQLite and over PostgreSQL."""
    settings = Settings(home=home, database_url=database_url)
    store = Store.open(database_url)
    with serving(create_app(settings)) as port:
        yield f"http://127.0.0.1:{port}", store
    store.close()


def _nothing_written(store: Store) -> None:
    assert store.list_missions(limit=10) == []


@pytest.mark.parametrize("budget", ["NaN", "Infinity", "-Infinity", "1e400", "true", '"60"', "1e-300", "0.5", "604801"])
def test_a_time_budget_is_a_finite_number_between_its_bounds_or_a_422(api: tuple[str, Store], budget: str) -> None:
    base, store = api
    body = f'{{"competition": "penguins", "time_budget": {budget}}}'
    response = httpx.post(f"{base}/missions", content=body, headers=JSON)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["body", "time_budget"]
    _nothing_written(store)


@pytest.mark.parametrize("route", ["", "/events", "/artifacts/solution.py", "/cancel"])
def test_a_mission_id_with_a_nul_or_a_newline_is_a_422_on_every_route(api: tuple[str, Store], route: str) -> None:
    base, store = api
    for bad in ("m%00x", "m%0A", "m-1%0A"):
        url = f"{base}/missions/{bad}{route}"
        response = httpx.post(url, json={}) if route == "/cancel" else httpx.get(url)
        assert response.status_code == 422, (url, response.status_code, response.text)
    _nothing_written(store)


def test_bodies_and_their_lists_and_strings_are_capped(api: tuple[str, Store]) -> None:
    base, store = api
    huge = {"competition": "penguins", "keep_columns": ["x" * 100] * 50_000}  # 5 MB
    assert httpx.post(f"{base}/missions", json=huge).status_code == 413
    many = {"competition": "penguins", "keep_columns": ["x"] * 1001}
    assert httpx.post(f"{base}/missions", json=many).status_code == 422
    long = {"competition": "penguins", "keep_columns": ["x" * 257]}
    assert httpx.post(f"{base}/missions", json=long).status_code == 422
    assert httpx.post(f"{base}/missions", json={"competition": "penguins\n"}).status_code == 422
    _nothing_written(store)


def test_a_tokenless_server_answers_only_to_loopback_names(api: tuple[str, Store]) -> None:
    base, _ = api
    assert httpx.get(f"{base}/missions", headers={"Host": "attacker.example"}).status_code == 421
    assert httpx.get(f"{base}/missions", headers={"Host": "attacker.example:80"}).status_code == 421
    for host in ("localhost", "127.0.0.1:8000", "[::1]:8000"):
        assert httpx.get(f"{base}/missions", headers={"Host": host}).status_code == 200, host


def test_state_changing_requests_need_a_json_content_type_or_the_intent_header(
    api: tuple[str, Store], home: Path
) -> None:
    base, store = api
    store.create_mission("queued", competition="penguins", platform="local", mode="workflow", budget_s=60, options="{}")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for action in ("cancel", "resume", "approve", "reject"):
        assert httpx.post(f"{base}/missions/queued/{action}").status_code == 415
        assert httpx.post(f"{base}/missions/queued/{action}", content="a=1", headers=form).status_code == 415
    assert store.get_mission("queued").status == "queued"  # type: ignore[union-attr]
    assert httpx.post(f"{base}/missions/queued/cancel", headers={"X-Agent-K": "1"}).status_code == 200
    assert store.get_mission("queued").status == "cancelled"  # type: ignore[union-attr]


def test_cors_lets_an_allowed_origin_send_the_authorization_header(home: Path) -> None:
    settings = Settings(home=home, api_token="t0ken-for-cors", cors_origins=["http://localhost:3000"])
    with serving(create_app(settings)) as port:
        preflight = httpx.options(
            f"http://127.0.0.1:{port}/missions",
            headers={
                "Origin": "http://localhost:3000",
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "authorization",
            },
        )
    assert preflight.status_code == 200, preflight.text
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()


def test_an_empty_api_token_counts_as_no_token(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_K_API_TOKEN", "")
    assert Settings().api_token is None
    result = run_cli("serve", "--host", "0.0.0.0", "--port", "1")
    assert result.returncode == 2 and "without a token" in result.stderr


@pytest.mark.parametrize("budget", ["inf", "1e308", "nan", "0"])
def test_the_cli_bounds_the_time_budget_like_the_api(home: Path, budget: str) -> None:
    result = run_cli("run", "--competition", "penguins", "--time-budget", budget)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (home / "agent_k.db").exists()
    setting = run_cli("missions", "list", env={"AGENT_K_TIME_BUDGET": budget})
    assert setting.returncode == 2 and "AGENT_K_TIME_BUDGET" in setting.stderr


def test_ids_and_names_with_a_trailing_newline_are_refused(home: Path, tmp_path: Path) -> None:
    train = tmp_path / "train.csv"
    _table(train, ["x", "y"], [[i, i % 2] for i in range(40)])
    for args in (
        ("run", "--competition", "penguins", "--mission-id", "m-1\n"),
        ("run", "--competition", "penguins\n"),
        ("competitions", "add", "mine\n", "--train", str(train), "--target", "y", "--metric", "auc"),
    ):
        result = run_cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (home / "agent_k.db").exists() and not (home / "competitions" / "mine").exists()


def test_inputs_that_used_to_raise_tracebacks_are_one_line_exit_2(home: Path, tmp_path: Path) -> None:
    only_target, same = tmp_path / "only_target.csv", tmp_path / "same.csv"
    _table(only_target, ["y"], [[i % 2] for i in range(40)])
    _table(same, ["id", "x", "y"], [[i, i * 2, i % 2] for i in range(40)])
    cases = [
        (("competitions", "add", "only-target", "--train", str(only_target), "--target", "y", "--metric", "auc"), {}),
        (
            (
                "competitions",
                "add",
                "same",
                "--train",
                str(same),
                "--target",
                "y",
                "--id-column",
                "y",
                "--metric",
                "auc",
            ),
            {},
        ),
        (("run", "--competition", "penguins", "--executor", "tcp://x"), {}),
        (("missions", "list"), {"AGENT_K_DATABASE_URL": "postgresql+psycopg://u:p@host:notaport/db"}),
        (("missions", "list"), {"AGENT_K_DATABASE_URL": "nonsense"}),
    ]
    for args, env in cases:
        result = run_cli(*args, env=env)
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    competitions = home / "competitions"
    assert not (competitions / "only-target").exists() and not (competitions / "same").exists()
    assert not list(competitions.glob(".*only-target*")) and not list(competitions.glob(".locks/only-target*"))
    assert not (home / "agent_k.db").exists()


def _table(path: Path, header: list[str], rows: list[list[int]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def test_the_error_body_of_a_422_is_always_json(api: tuple[str, Store]) -> None:
    base, _ = api
    response = httpx.post(f"{base}/missions", content=b'{"competition": "penguins", "time_budget": NaN}', headers=JSON)
    assert response.status_code == 422
    json.loads(response.text)


def test_a_chunked_body_over_the_cap_is_a_413(api: tuple[str, Store]) -> None:
    """A body with no length is counted as it arrives: past 64 KB it is refused with 413, as a declared one is."""
    base, store = api

    def chunks() -> Iterator[bytes]:
        yield b'{"competition": "penguins", "keep_columns": ['
        for _ in range(2000):
            yield b'"' + b"x" * 100 + b'",'
        yield b'"x"]}'

    response = httpx.post(f"{base}/missions", content=chunks(), headers=JSON)
    assert response.status_code == 413, response.text
    assert response.json() == {"detail": "request body over 65536 bytes"}
    _nothing_written(store)


@pytest.mark.parametrize(
    "path", ["/ui/missions/a%00b", "/ui/missions/a%0A", "/ui/competitions/a%00b", "/competitions/a%00b"]
)
def test_every_page_and_route_checks_its_ids(api: tuple[str, Store], path: str) -> None:
    base, store = api
    response = httpx.get(f"{base}{path}")
    assert response.status_code == 422, (path, response.status_code, response.text[:300])
    _nothing_written(store)


def test_sign_in_keeps_only_a_path_of_this_server(api: tuple[str, Store]) -> None:
    base, _ = api
    for away in ("/%5Cevil.example", "/%09/evil.example", "//evil.example", "https://evil.example", "/%0A"):
        page = httpx.get(f"{base}/ui/login?next={away}").text
        assert 'name="next" type="hidden" value="/"' in page, away
    assert 'value="/ui/missions/m-1"' in httpx.get(f"{base}/ui/login?next=/ui/missions/m-1").text


def test_files_that_would_become_code_tables_or_links_out_are_one_line_exit_2(home: Path, tmp_path: Path) -> None:
    """JSON nested past what a table can be, and a `--data` folder with a link to a file outside it."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "]")
    outside = tmp_path / "secret.csv"
    outside.write_text("id,y\n1,1\n")
    folder = tmp_path / "download"
    folder.mkdir()
    _table(folder / "train.csv", ["id", "x", "y"], [[i, i * 2, i % 2] for i in range(40)])
    _table(folder / "sample_submission.csv", ["id", "y"], [[i, 0] for i in range(40, 50)])
    (folder / "test.csv").symlink_to(outside)
    for args, why in (
        (("competitions", "add", "deep", "--train", str(deep), "--target", "a", "--metric", "rmse"), "nested"),
        (("competitions", "add", "linked", "--data", str(folder), "--target", "y", "--metric", "auc"), "links outside"),
    ):
        result = run_cli(*args)
        assert result.returncode == 2 and why in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (home / "competitions" / "deep").exists() and not (home / "competitions" / "linked").exists()


def test_the_home_is_private_and_its_files_are_not_for_others(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    result = run_cli("missions", "list", env={"AGENT_K_HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert home.stat().st_mode & 0o777 == 0o700
    assert (home / "agent_k.db").stat().st_mode & 0o077 in (0, 0o040), "0600 or 0640"
    home.chmod(0o755)  # a home an older version left open is closed again
    assert run_cli("missions", "list", env={"AGENT_K_HOME": str(home)}).returncode == 0
    assert home.stat().st_mode & 0o777 == 0o700
