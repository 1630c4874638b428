"""Errors of agent mode that phases handle without importing pydantic-ai."""


class AgentFailed(Exception):
    """`--mode agent`: the phase's agent failed and fallback is off."""
