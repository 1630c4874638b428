"""The deployment files name only commands and options the CLI has (no Docker engine is needed to check)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import typer
import yaml

from agent_k.cli import app

ROOT = Path(__file__).resolve().parent.parent


def _invocations(command: list[str]) -> list[list[str]]:
    """Every `agent-k …` run by a container command, through `sh -c "a && exec b"` too."""
    words = shlex.split(command[2]) if command[:2] == ["sh", "-c"] else command
    runs, current = [], None
    for word in [*words, "&&"]:
        if word in ("&&", ";", "||"):
            if current:
                runs.append(current)
            current = None
        elif word == "agent-k":
            current = []
        elif current is not None:
            current.append(word)
    return runs


def _parses(args: list[str]) -> dict[str, object]:
    """Resolve the subcommand and parse its options with the CLI's own parser, without running it; the parsed
    parameters. A usage error raises (exit code 2), as it would on the command line."""
    command = typer.main.get_command(app)
    context, name = typer.Context(command, info_name="agent-k"), "agent-k"
    while hasattr(command, "get_command"):  # a group; ours take no options of their own
        assert args, f"agent-k {name} needs a subcommand"
        name, *args = args
        sub = command.get_command(context, name)
        assert sub is not None, f"agent-k has no command {name!r}"
        command, context = sub, typer.Context(sub, info_name=name, parent=context)
    return command.make_context(name, list(args), parent=context.parent).params


def test_compose_runs_postgres_the_api_and_scalable_workers() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "api", "worker"}
    assert any(v.endswith(":/var/lib/postgresql/data") for v in services["postgres"]["volumes"])
    assert set(compose["volumes"]) >= {"postgres-data", "agent-k-data"}

    api = _invocations(services["api"]["command"])
    assert [run[:2] for run in api] == [["db", "upgrade"], ["serve", "--host"]]
    assert "AGENT_K_API_TOKEN" in services["api"]["environment"], "serve refuses 0.0.0.0 without a token"
    assert _invocations(services["worker"]["command"]) == [["worker"]]
    for name in ("api", "worker"):
        assert services[name]["environment"]["AGENT_K_DATABASE_URL"].startswith("postgresql+psycopg://")
        assert "agent-k-data:/data" in services[name]["volumes"]
    assert "ports" not in services["worker"] and "container_name" not in services["worker"], "--scale worker=3"
    upgrade, serve = (_parses(run) for run in api)
    assert upgrade == {}
    assert serve == {"host": "0.0.0.0", "port": 8000, "with_worker": False}, "workers run as their own service"
    assert _parses(["worker"])["poll"] == 1.0


def test_the_image_serves_the_api_and_checks_its_health() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^USER agentk$", dockerfile, re.MULTILINE), "the image runs as a non-root user"
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE).group(1))  # type: ignore[union-attr]
    assert cmd[0] == "agent-k"
    assert _parses(cmd[1:]) == {"host": "0.0.0.0", "port": 8000, "with_worker": False}
    assert "/healthz" in re.search(r"HEALTHCHECK .*\n.*", dockerfile).group(0)  # type: ignore[union-attr]
