"""Render the dashboard's templates. Every script and stylesheet is a file of this package (uPlot is vendored),
served from `/ui/static` or inlined into a report: nothing comes from a CDN, so pages work offline."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from agent_k.competition.registry import metric_named, metric_names
from agent_k.events.models import EVENT_TYPES
from agent_k.mission.phases import Phase
from agent_k.store.status import CONTROLS

STATIC = (
    "uplot.iife.min.js",
    "uplot.min.css",
    "dashboard.css",
    "mission.js",
    "missions.js",
    "login.js",
    "replay.js",
)


def _json_script(value: Any) -> Markup:
    """JSON safe inside a `<script type="application/json">` element (no `</script>` can end it early)."""
    text = json.dumps(value, separators=(",", ":"), default=str)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


@cache
def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("agent_k.dashboard", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["json_script"] = _json_script
    environment.globals["asset"] = asset
    return environment


@cache
def asset(name: str) -> str:
    """A static file's text, for inlining into a self-contained report."""
    if name not in STATIC:
        raise KeyError(name)
    return resources.files("agent_k.dashboard").joinpath("static", name).read_text()


def page(template: str, **context: Any) -> str:
    """A page; `inline=True` inlines every script and stylesheet (a report), else they are linked."""
    context.setdefault("inline", False)
    return _environment().get_template(template).render(**context)


def mission_meta(document: dict[str, Any]) -> dict[str, Any]:
    """What the mission page needs besides its events: the metric and its direction, the budget, the status, and
    the vocabularies it must not copy (the phases in their order, the event types, which status allows which
    control)."""
    state = document.get("state") or {}
    competition = state.get("selected_competition") or {}
    metric = competition.get("metric")
    return {
        "id": document["id"],
        "competition": document.get("competition"),
        "status": document["status"],
        "approval": document.get("approval"),
        "budget_s": document.get("budget_s"),
        "phases": [phase.value for phase in Phase],
        "event_types": list(EVENT_TYPES),
        "controls": {name: sorted(statuses) for name, statuses in CONTROLS.items()},
        "metric": metric,
        "maximize": metric_named(metric).maximize if metric in metric_names() else None,
        "result": document.get("result"),
        "parent_id": document.get("parent_id"),
        "forked_from_seq": document.get("forked_from_seq"),
        "children": document.get("children") or [],
    }
