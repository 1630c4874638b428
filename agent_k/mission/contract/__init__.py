"""Phase contracts: one typed declaration of the phases, their transitions, tools and budget shares, and the
analysis that checks it before a mission runs on it (docs/agents.md, "Phase contract")."""

from agent_k.mission.contract.analysis import Analysis, Finding, analyse
from agent_k.mission.contract.mission import MISSION_CONTRACT, REPAIR_PHASES
from agent_k.mission.contract.model import (
    END,
    ErrorStrategy,
    FindingCode,
    PhaseContract,
    PhaseSpec,
    Precondition,
    Suppression,
    ToolSpec,
)

__all__ = [
    "END",
    "MISSION_CONTRACT",
    "REPAIR_PHASES",
    "Analysis",
    "ErrorStrategy",
    "Finding",
    "FindingCode",
    "PhaseContract",
    "PhaseSpec",
    "Precondition",
    "Suppression",
    "ToolSpec",
    "analyse",
]
