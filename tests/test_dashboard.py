"""The dashboard in a real browser (Playwright driving Debian's chromium) against a real `agent-k serve` on
127.0.0.1, with real missions run by a real worker: live views built from the event stream, exactly once across
an API restart, approval from the page, the token's session cookie, and the offline report.

With AGENT_K_SCREENSHOTS=DIR the screenshots of each view are written there (docs/dashboard holds the last run's).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from agent_k.store.repository import Store
from tests.conftest import AGENT_K, run_cli
from tests.support.api_client import free_port, read_stream, running_api
from tests.support.browser import Watched

pytestmark = pytest.mark.slow
TOKEN = "dashboard-token-5b1e"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, competition_cache: Path) -> Path:
    import shutil

    home = tmp_path_factory.mktemp("dashboard-home")
    for name in ("wine", "diabetes"):
        shutil.copytree(competition_cache / name, home / "competitions" / name)
    return home


@pytest.fixture(scope="module")
def env(home: Path) -> dict[str, str]:
    return {
        "AGENT_K_HOME": str(home),
        "AGENT_K_WORKERS": "2",
        "AGENT_K_DATABASE_URL": f"sqlite:///{home / 'agent_k.db'}",
    }


@pytest.fixture(scope="module")
def worker(env: dict[str, str], home: Path) -> Iterator[subprocess.Popen[bytes]]:
    """One worker for the module's missions, apart from the API so that the API can restart under them."""
    with (home / "worker.log").open("w") as log:
        process = subprocess.Popen([AGENT_K, "worker", "--poll", "0.2"], env={**os.environ, **env}, stderr=log)
    yield process
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)


def _shots() -> Callable[[Any, str], None]:
    folder = os.environ.get("AGENT_K_SCREENSHOTS")

    def shoot(page: Any, name: str) -> None:
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)

    return shoot


def _post(base: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
    response = httpx.post(f"{base}/missions", json=body, headers=headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def _events(home: Path, mission_id: str) -> list[Any]:
    store = Store.open(f"sqlite:///{home / 'agent_k.db'}")
    try:
        return list(store.events_after(mission_id))
    finally:
        store.close()


def _monotone(values: list[float | None], *, maximize: bool) -> bool:
    seen = [v for v in values if v is not None]
    return all((b >= a) if maximize else (b <= a) for a, b in itertools.pairwise(seen))


def test_a_live_mission_page_through_an_api_restart_and_an_approval(
    browser: Any, env: dict[str, str], home: Path, worker: subprocess.Popen[bytes]
) -> None:
    shoot, port = _shots(), free_port()
    watched = Watched(browser)
    with contextlib.ExitStack() as apis:
        first = apis.enter_context(running_api(env, "--no-worker", port=port))
        body = {"competition": "wine", "time_budget": 45, "mode": "workflow", "require_approval": True}
        body["stop_early"] = True  # the page, not the budget, is the subject
        mission = _post(first.base, body)
        page = watched.page
        page.goto(f"{first.base}/")
        row = f"#missions tr[data-id='{mission['id']}']"
        watched.wait(f"document.querySelector(\"{row}[data-status='running']\") !== null")
        shoot(page, "missions")
        # The launch form's defaults: the quickest competition (wine: fewer rows than diabetes), every mode.
        assert page.eval_on_selector("select[name=competition]", "e => e.value") == "wine"
        modes = page.eval_on_selector_all("select[name=mode] option", "os => os.map((o) => o.value)")
        assert modes == ["auto", "workflow", "agent", "amphiflow"]

        page.goto(f"{first.base}/ui/missions/{mission['id']}")
        evolution = "document.querySelector('.timeline .bar.running[data-phase=evolution]')"
        watched.wait(f"{evolution} !== null")  # the longest phase: it is still running a moment later
        bars = "document.querySelectorAll('.timeline .bar[data-phase=evolution]')"
        width = f"[...{bars}].pop().getBoundingClientRect().width"
        before = page.evaluate(width)
        page.wait_for_timeout(1500)
        assert page.evaluate(width) > before, "the running phase's bar grows"

        first.process.send_signal(signal.SIGKILL)  # the API dies mid-mission; the worker goes on
        first.process.wait(timeout=10)
        second = apis.enter_context(running_api(env, "--no-worker", port=port))

        settled = "['awaiting_approval', 'failed', 'cancelled'].includes(window.AgentK.state.status)"
        watched.wait(settled, timeout_s=180)
        assert page.evaluate("window.AgentK.state.status") == "awaiting_approval", page.evaluate(
            "window.AgentK.state.failure"
        )
        assert page.is_visible("#banner") and not page.is_disabled("button[data-action=approve]")
        # While the API was down the browser logged its reconnect attempts; nothing else may have gone wrong.
        assert all(e.startswith("Failed to load resource: net::ERR_") for e in watched.errors), watched.errors
        watched.errors.clear()
        stored = [e.seq for e in _events(home, mission["id"])]
        shown = page.evaluate("window.AgentK.state.events.map((e) => e.seq)")
        assert shown == stored, "every event exactly once, in order, across the restart"
        assert page.evaluate("document.querySelectorAll('#log li').length") == len(stored)

        page.click("button[data-action=approve]")
        watched.wait("document.querySelector('#banner').hidden === true")
        watched.wait("window.AgentK.state.ended === true", timeout_s=180)
        ended = time.monotonic()
        page.wait_for_timeout(4000)
        assert len([t for t in watched.streams if t > ended]) <= 1, "no reconnect after the terminal event"
        assert page.evaluate("window.AgentK.state.status") == "succeeded"

        events = _events(home, mission["id"])
        evaluated = [e for e in events if e.type == "candidate.evaluated"]
        assert page.evaluate("window.AgentK.plotData.x.length") == len(evaluated) > 0
        assert _monotone(page.evaluate("window.AgentK.plotData.best"), maximize=True)
        assert page.evaluate("window.AgentK.state.events.length") == len(events)
        assert page.evaluate("document.querySelectorAll('#candidates tbody tr').length") == len(evaluated)
        assert page.evaluate("document.querySelectorAll('#candidates tr.best').length") == 1
        shoot(page, "mission")

        page.goto(f"{second.base}/")
        watched.wait(f"document.querySelector(\"{row}[data-status='succeeded']\") !== null")
        page.goto(f"{second.base}/ui/competitions/wine")
        assert page.locator("tr.ours").count() >= 1
        shoot(page, "competition")
        assert watched.errors == [] and watched.hosts == {"127.0.0.1"}
    watched.close()


def test_a_minimised_metric_plots_its_best_so_far_downwards(
    browser: Any, env: dict[str, str], home: Path, worker: subprocess.Popen[bytes]
) -> None:
    watched = Watched(browser)
    try:
        with running_api(env, "--no-worker") as api:
            body = {"competition": "diabetes", "time_budget": 15, "mode": "workflow", "stop_early": True}
            mission = _post(api.base, body)
            watched.page.goto(f"{api.base}/ui/missions/{mission['id']}")
            watched.wait("window.AgentK.state.ended === true", timeout_s=180)
            assert watched.page.evaluate("window.AgentK.state.maximize") is False
            best = watched.page.evaluate("window.AgentK.plotData.best")
            assert _monotone(best, maximize=False) and len([b for b in best if b is not None]) >= 2
            evaluated = [e for e in _events(home, mission["id"]) if e.type == "candidate.evaluated"]
            assert watched.page.evaluate("window.AgentK.plotData.x.length") == len(evaluated)
        assert watched.errors == [] and watched.hosts == {"127.0.0.1"}
    finally:
        watched.close()


def _status(base: str, mission_id: str) -> str:
    status: str = httpx.get(f"{base}/missions/{mission_id}").json()["status"]
    return status


def _wait_status(base: str, mission_id: str, wanted: set[str], timeout_s: float = 180) -> str:
    deadline = time.monotonic() + timeout_s
    while (status := _status(base, mission_id)) not in wanted:
        assert time.monotonic() < deadline, f"{mission_id} stayed {status}"
        time.sleep(0.2)
    return status


def test_a_cancelled_then_resumed_mission_streams_and_shows_its_last_ending(
    browser: Any, env: dict[str, str], home: Path, worker: subprocess.Popen[bytes]
) -> None:
    watched = Watched(browser)
    try:
        with running_api(env, "--no-worker") as api:
            body = {"competition": "wine", "time_budget": 30, "mode": "workflow", "stop_early": True}
            mission_id = _post(api.base, body)["id"]
            deadline = time.monotonic() + 120
            while "evolution.generation" not in {e.type for e in _events(home, mission_id)}:
                assert time.monotonic() < deadline, "it never reached Evolution"
                time.sleep(0.1)
            cancel = httpx.post(f"{api.base}/missions/{mission_id}/cancel", json={})
            assert cancel.status_code in (200, 202), cancel.text
            assert _wait_status(api.base, mission_id, {"cancelled", "succeeded"}) == "cancelled"
            resumed = httpx.post(f"{api.base}/missions/{mission_id}/resume", json={})
            assert resumed.status_code == 200, resumed.text
            assert _wait_status(api.base, mission_id, {"succeeded", "failed", "cancelled"}) == "succeeded"

            streamed = read_stream(f"{api.base}/missions/{mission_id}/events")
            types = [e["event"] for e in streamed]
            assert types.index("mission.cancelled") < len(types) - 1 and types[-1] == "mission.completed"
            assert [int(e["id"]) for e in streamed] == [e.seq for e in _events(home, mission_id)]
            cancelled = next(int(e["id"]) for e in streamed if e["event"] == "mission.cancelled")
            after = read_stream(f"{api.base}/missions/{mission_id}/events?after={cancelled - 1}")
            assert after[0]["event"] == "mission.cancelled" and after[-1]["event"] == "mission.completed"

            page = watched.page
            page.goto(f"{api.base}/ui/missions/{mission_id}")
            watched.wait("window.AgentK.state.ended === true && window.AgentK.state.status === 'succeeded'")
            ended = time.monotonic()
            links = "[...document.querySelectorAll('#result a')].map((a) => a.getAttribute('href'))"
            watched.wait(f"{links}.length === 2")
            hrefs = page.evaluate(links)
            assert [h.rsplit("/", 1)[-1] for h in hrefs] == ["solution.py", "submission.csv"]
            for href in hrefs:
                assert httpx.get(f"{api.base}{href}").status_code == 200
            assert page.evaluate("document.querySelector('#status').textContent").strip() == "succeeded"
            assert page.is_hidden("button[data-action=resume]") or page.is_disabled("button[data-action=resume]")
            segments = page.evaluate("window.AgentK.state.segments.map((s) => [s.phase, s.outcome])")
            evolution = [outcome for phase, outcome in segments if phase == "evolution"]
            assert evolution[0] in ("failed", "stopped") and evolution[-1] == "completed", segments
            assert segments[-1] == ["submission", "completed"], "the resumed run drew its own segments"
            page.wait_for_timeout(2000)
            assert len([t for t in watched.streams if t > ended]) == 0, "no reconnect after the last ending"

            # Replay on the page: every step, and the state one began from.
            steps = len(httpx.get(f"{api.base}/missions/{mission_id}/steps").json())
            watched.wait(f"window.AgentK.steps === {steps}")
            page.click("#steps tr[data-seq='1']")
            watched.wait("!document.querySelector('#step-state').hidden")
            assert '"current_phase": "discovery"' in page.text_content("#step-state")

            # A fork at Submission: the pages link parent and child.
            forked = httpx.post(f"{api.base}/missions/{mission_id}/fork", json={"from_phase": "submission"})
            assert forked.status_code == 201, forked.text
            child = forked.json()["id"]
            assert _wait_status(api.base, child, {"succeeded", "failed", "cancelled"}) == "succeeded"
            assert _events(home, child)[0].type == "mission.forked"
            page.goto(f"{api.base}/ui/missions/{mission_id}")
            assert page.get_attribute("a[data-lineage=child]", "href") == f"/ui/missions/{child}"
            page.goto(f"{api.base}/ui/missions/{child}")
            assert page.get_attribute("a[data-lineage=parent]", "href") == f"/ui/missions/{mission_id}"
            watched.wait("window.AgentK.state.ended === true && window.AgentK.state.status === 'succeeded'")
        assert watched.errors == [] and watched.hosts == {"127.0.0.1"}
    finally:
        watched.close()


def test_with_a_token_pages_and_streams_need_the_session(browser: Any, env: dict[str, str], home: Path) -> None:
    done = _events_of_a_finished_mission(home)
    with running_api({**env, "AGENT_K_API_TOKEN": TOKEN}, "--no-worker") as api:
        for path in ("/", f"/ui/missions/{done}", "/ui/competitions/wine"):
            refused = httpx.get(f"{api.base}{path}", follow_redirects=False)
            assert refused.status_code == 303 and refused.headers["location"].startswith("/ui/login")
        for path in (f"/missions/{done}/events", "/ui/api/missions", "/metrics", f"/missions/{done}"):
            assert httpx.get(f"{api.base}{path}").status_code == 401, path

        watched = Watched(browser)
        try:
            page = watched.page
            page.goto(f"{api.base}/ui/missions/{done}")
            assert "/ui/login" in page.url
            page.fill("input[name=token]", "wrong")
            page.click("button[type=submit]")
            watched.wait("!document.querySelector('#login-error').hidden")
            assert [e for e in watched.errors if "401" not in e] == []  # the refused sign-in, and only that
            watched.errors.clear()
            page.fill("input[name=token]", TOKEN)
            page.click("button[type=submit]")
            watched.wait("window.AgentK && window.AgentK.state && window.AgentK.state.ended === true")
            cookie = next(c for c in watched.context.cookies() if c["name"] == "agent_k_session")
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
            request = "{method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'}"
            forged = page.evaluate(f"fetch('/missions/{done}/cancel', {request}).then((r) => r.status)")
            assert forged == 403, "a state change with the cookie but no CSRF header is refused"
            assert [e for e in watched.errors if "403" not in e] == [] and watched.hosts == {"127.0.0.1"}
            for away in ("/\\evil.example", "/\t/evil.example", "//evil.example", "/%0a/evil.example"):
                # The page keeps only a path of this server; were one to slip past it, the script refuses it too.
                page.goto(f"{api.base}/ui/login?next={quote(away, safe='/%')}")
                assert page.eval_on_selector("input[name=next]", "e => e.value") == "/", away
                page.eval_on_selector("input[name=next]", "(e, v) => { e.value = v; }", away)
                page.fill("input[name=token]", TOKEN)
                page.click("button[type=submit]")
                watched.wait("!location.pathname.startsWith('/ui/login')")
                assert page.url.startswith(api.base), (away, page.url)
            assert watched.hosts == {"127.0.0.1"}, "the browser never left for another origin"
        finally:
            watched.close()


def _events_of_a_finished_mission(home: Path) -> str:
    store = Store.open(f"sqlite:///{home / 'agent_k.db'}")
    try:
        finished = [m for m in store.list_missions(limit=20) if m.status == "succeeded"]
    finally:
        store.close()
    assert finished, "the live test ran a mission first"
    return finished[-1].id


def test_the_report_renders_offline_from_disk(browser: Any, env: dict[str, str], home: Path, tmp_path: Path) -> None:
    mission_id = _events_of_a_finished_mission(home)
    written = run_cli("report", mission_id, "-o", str(tmp_path / "report.html"), env=env)
    assert written.returncode == 0, written.stderr
    watched = Watched(browser, offline=True)
    try:
        watched.page.goto((tmp_path / "report.html").as_uri())
        watched.wait("window.AgentK && window.AgentK.rendered > 0")
        evaluated = [e for e in _events(home, mission_id) if e.type == "candidate.evaluated"]
        assert watched.page.evaluate("window.AgentK.plotData.x.length") == len(evaluated)
        assert watched.page.evaluate("document.querySelectorAll('#plot canvas').length") >= 1
        assert watched.page.evaluate("document.querySelectorAll('.timeline .bar').length") >= 5
        assert watched.errors == [] and watched.hosts == set(), "nothing is fetched from anywhere"
        _shots()(watched.page, "report")
    finally:
        watched.close()
