"""A mission through a local OpenAI-compatible server, with pydantic-ai's OpenAI model and OPENAI_BASE_URL:
agent mode when the server answers, workflow fallback in every agent phase when it fails. The API key never
shows up in what the mission records or prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.support.fake_openai import FakeOpenAI, serving

pytestmark = pytest.mark.slow

KEY = "sk-agentk-test-SECRET-4b1d"


def _run(home: Path, fake: FakeOpenAI, mission_id: str, *options: str) -> tuple[dict[str, object], str]:
    """A mission of 30 s (`--stop-early` ends it sooner): Evolution asks the model only for a generation that fits
    in its window after the blend's and the pick's reserves, and 20 s left none on a machine busy with other tests."""
    with serving(fake) as base_url:
        env = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": KEY, "AGENT_K_MODEL": "openai-chat:gpt-4o-mini"}
        args = ["-c", "penguins", "--time-budget", "30", "--mission-id", mission_id, "--json", "--stop-early"]
        args.extend(options)
        run = run_cli("run", *args, env=env)
    assert run.returncode == 0, run.stderr
    shown = run_cli("missions", "show", mission_id, "--json")
    assert shown.returncode == 0
    return json.loads(shown.stdout), run.stdout + run.stderr + shown.stdout


def _assert_no_key(home: Path, printed: str) -> None:
    assert KEY not in printed
    for path in home.rglob("*"):
        if path.is_file() and path.stat().st_size < 50_000_000:
            assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"


def test_agent_mode_through_a_local_openai_compatible_server(home: Path) -> None:
    """Research and the first Evolution generation use the model; then `--max-cost` is reached (each exchange
    costs $0.000072 at gpt-4o-mini prices) and the rest of Evolution runs as workflow. The budget leaves room for a
    second generation even on a machine busy with other tests."""
    fake = FakeOpenAI()
    document, printed = _run(home, fake, "via-openai", "--max-cost", "0.0001")
    assert document["status"] == "succeeded"
    history = {r["phase"]: r for r in document["phase_history"]}  # type: ignore[attr-defined]
    assert history["discovery"]["mode"] == "workflow", "the competition is named: nothing to choose"
    assert history["research"]["mode"] == "agent" and history["research"]["fallback"] is None
    assert history["evolution"]["fallback"].startswith("cost limit reached")
    state = document["state"]
    assert "scripted" in state["research_findings"]["notes"]  # type: ignore[index]
    budget = state["budget"]  # type: ignore[index]
    assert budget["llm_tokens"] == {"research": 300, "evolution": 300}
    assert budget["cost_usd"] == pytest.approx(0.000144, rel=0.01)
    assert fake.authorizations == {f"Bearer {KEY}"}, "the provider read the key from the environment"
    assert any("candidates_so_far" in json.dumps(r.get("tools")) for r in fake.requests)
    _assert_no_key(home, printed)


def test_a_failing_server_makes_every_agent_phase_fall_back(home: Path) -> None:
    fake = FakeOpenAI(fail=True)
    document, printed = _run(home, fake, "via-broken-openai")
    assert document["status"] == "succeeded"
    history = document["phase_history"]
    fell_back = {r["phase"]: r["fallback"] for r in history if r.get("fallback")}  # type: ignore[attr-defined]
    assert set(fell_back) == {"research", "evolution"}
    assert all(reason.endswith("HTTP 500 from gpt-4o-mini") for reason in fell_back.values()), fell_back
    assert all(r["mode"] == "workflow" for r in history)  # type: ignore[attr-defined]
    assert fake.requests, "the server was asked"
    for phase in ("research", "evolution"):  # the terminal says so, with the reason, not only the store
        assert f"{phase}: the agent fell back to the workflow: " in printed, printed
    assert "HTTP 500 from gpt-4o-mini" in printed
    _assert_no_key(home, printed)
