"""Agent mode: pydantic-ai agents with phase-scoped tools. Nothing here is built at import time."""

from agent_k.agents.errors import AgentFailed
from agent_k.agents.models import ModelUnavailable, build_model

__all__ = ["AgentFailed", "ModelUnavailable", "build_model"]
