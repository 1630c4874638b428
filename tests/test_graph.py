"""Graph validation (DESIGN §2): one entry, everything reachable, everything can reach End."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic_graph import End

from agent_k.mission.graph import END, GraphValidationError, build_graph, successors, validate
from agent_k.mission.nodes import (
    PHASE_NODES,
    DiscoveryNode,
    EvolutionNode,
    PhaseNode,
    PrototypeNode,
    ResearchNode,
    SubmissionNode,
)
from agent_k.mission.nodes.base import PhaseContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionResult
from tests.conftest import run_cli


@dataclass
class OrphanNode(PhaseNode):
    """Declared in the graph but nothing leads to it."""

    phase = Phase.research

    async def run(self, ctx: PhaseContext) -> End[MissionResult]:
        raise AssertionError("never runs")


@dataclass
class LoopNode(PhaseNode):
    """Only ever returns itself: a cycle with no exit."""

    phase = Phase.evolution

    async def run(self, ctx: PhaseContext) -> LoopNode:
        raise AssertionError("never runs")


@dataclass
class EntryToLoop(PhaseNode):
    phase = Phase.discovery

    async def run(self, ctx: PhaseContext) -> LoopNode | End[MissionResult]:
        raise AssertionError("never runs")


def test_the_mission_graph_is_valid_with_the_declared_edges() -> None:
    result = validate(PHASE_NODES)
    assert result.ok, result.problems
    assert result.edges == {
        "DiscoveryNode": [END, "ResearchNode"],
        "ResearchNode": [END, "PrototypeNode"],
        "PrototypeNode": [END, "EvolutionNode"],
        "EvolutionNode": [END, "EvolutionNode", "SubmissionNode"],
        "SubmissionNode": [END],
    }


def test_a_missing_phase_is_reported() -> None:
    result = validate((DiscoveryNode, PrototypeNode, EvolutionNode, SubmissionNode))
    assert "phase ResearchNode (a successor of DiscoveryNode) is missing" in result.problems
    with pytest.raises(GraphValidationError, match="ResearchNode"):
        build_graph((DiscoveryNode, PrototypeNode, EvolutionNode, SubmissionNode))


def test_an_unreachable_phase_is_reported() -> None:
    result = validate((*PHASE_NODES, OrphanNode))
    assert "phase OrphanNode is unreachable from DiscoveryNode" in result.problems
    assert any("exactly one entry phase" in p for p in result.problems)


def test_a_cycle_without_exit_is_reported() -> None:
    result = validate((EntryToLoop, LoopNode), entry=EntryToLoop)
    assert result.problems == ["phase LoopNode cannot reach End (a cycle without an exit)"]


def test_successors_come_from_the_return_annotation() -> None:
    assert successors(EvolutionNode) == {"EvolutionNode", "SubmissionNode", END}
    assert successors(ResearchNode) == {"PrototypeNode", END}


def test_graph_command_prints_mermaid_and_validation() -> None:
    result = run_cli("graph")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("---\ntitle: AGENT-K mission\n---\nstateDiagram-v2")
    for node in ("DiscoveryNode", "ResearchNode", "PrototypeNode", "EvolutionNode", "SubmissionNode"):
        assert node in result.stdout
    assert "EvolutionNode --> decision" in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("valid: 5 phases")
