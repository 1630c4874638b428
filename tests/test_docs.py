"""The docs name every event type and every CLI command, so they cannot silently fall behind the code."""

from __future__ import annotations

import typing
from pathlib import Path

from typer.main import get_command

from agent_k.cli import app
from agent_k.events.models import EventData

DOCS = Path(__file__).parent.parent / "docs"


def test_every_event_type_is_documented() -> None:
    union = typing.get_args(EventData)[0]
    types = [model.model_fields["type"].default for model in typing.get_args(union)]
    documented = (DOCS / "events.md").read_text()
    assert len(types) == 32
    missing = [t for t in types if f"| `{t}` |" not in documented]
    assert missing == []


def test_every_command_is_documented() -> None:
    cli = get_command(app)
    documented = (DOCS / "cli.md").read_text()
    names = []
    for name, command in cli.commands.items():  # type: ignore[attr-defined]
        sub = getattr(command, "commands", None)
        names += [f"agent-k {name} {s}" for s in sub] if sub else [f"agent-k {name}"]
    missing = [n for n in names if f"`{n}" not in documented]
    assert missing == []


def test_every_mode_strategy_finding_removal_and_tool_is_documented() -> None:
    from agent_k.mission.agents.tools import Removal
    from agent_k.mission.contract import MISSION_CONTRACT, ErrorStrategy, FindingCode
    from agent_k.mission.phases import Mode

    documented = (DOCS / "agents.md").read_text()
    names = [
        *(m.value for m in Mode),
        *(s.value for s in ErrorStrategy),
        *(f.value for f in FindingCode),
        *(r.value for r in Removal),
        *(t.name for t in MISSION_CONTRACT.tools),
    ]
    missing = [n for n in names if f"`{n}`" not in documented]
    assert missing == []


def test_every_refused_system_call_is_documented_with_its_reason() -> None:
    from agent_k.sandbox.seccomp import CLONE3, REFUSED

    documented = (DOCS / "security.md").read_text()
    missing = [name for name in [*REFUSED, CLONE3] if f"`{name}`" not in documented]
    assert missing == []
