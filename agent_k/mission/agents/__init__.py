"""Agent mode: pydantic-ai agents with phase-scoped tools, one per phase that has choices to make.

The phase nodes call these; nothing here is built at import time.
"""

from agent_k.mission.agents.errors import AgentFailed
from agent_k.mission.agents.evolver import evolver_proposals
from agent_k.mission.agents.lobbyist import lobbyist_ranking
from agent_k.mission.agents.scientist import ResearchPlan, scientist_plan

__all__ = ["AgentFailed", "ResearchPlan", "evolver_proposals", "lobbyist_ranking", "scientist_plan"]
