"""Agent mode: pydantic-ai agents with phase-scoped tools, one per phase that has choices to make.

The phase nodes call these, and load them (and pydantic-ai) only when a phase runs its agent (`runs_agent`): a
workflow mission never imports pydantic-ai. Nothing here is built at import time.
"""

from agent_k.mission.agents.errors import AgentFailed
from agent_k.mission.phases import Mode, Phase
from agent_k.mission.state import MissionState

__all__ = ["AgentFailed", "runs_agent"]


def runs_agent(state: MissionState, phase: Phase) -> bool:
    """Whether `phase` starts with its agent (the agent may still fall back to the workflow)."""
    return state.phase_modes.get(phase) == Mode.agent.value and phase not in state.budget.allowance_spent
