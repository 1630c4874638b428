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
from tests.local_server import serving

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


@pytest.mark.parametrize("budget", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_non_finite_time_budget_is_a_422(api: tuple[str, Store], budget: str) -> None:
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
