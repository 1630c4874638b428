"""The five phases of a mission and the modes a phase can run in (plain enums: the CLI offers them cheaply)."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    discovery = "discovery"
    research = "research"
    prototype = "prototype"
    evolution = "evolution"
    submission = "submission"


class Mode(StrEnum):
    auto = "auto"
    workflow = "workflow"
    agent = "agent"
    amphiflow = "amphiflow"
    """Workflow first in every phase; a failed step gets a scoped repair by an agent."""
