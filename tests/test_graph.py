"""Graph validation (docs/architecture.md, "The graph"): the phase contract is analysed, and every node agrees
with it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic_graph import End

from agent_k.mission.contract import MISSION_CONTRACT, PhaseContract, PhaseSpec
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


def test_a_phase_without_a_node_is_reported() -> None:
    result = validate((DiscoveryNode, PrototypeNode, EvolutionNode, SubmissionNode))
    assert "phase research has no node" in result.problems
    assert "DiscoveryNode returns ['ResearchNode'], which are not nodes of the graph" in result.problems
    with pytest.raises(GraphValidationError, match="research has no node"):
        build_graph((DiscoveryNode, PrototypeNode, EvolutionNode, SubmissionNode))


def test_a_node_returning_more_than_its_contract_allows_is_reported() -> None:
    """The contract is the source: a node whose annotation adds a transition fails validation."""
    strict = MISSION_CONTRACT.model_copy(
        update={
            "phases": tuple(
                p if p.name != "evolution" else p.model_copy(update={"next": ("submission", "end")})
                for p in MISSION_CONTRACT.phases
            )
        }
    )
    result = validate(PHASE_NODES, strict)
    allowed = "the contract allows evolution ['end', 'submission']"
    assert result.problems == [f"EvolutionNode returns ['end', 'evolution', 'submission'] but {allowed}"]


def test_an_unreachable_node_phase_is_reported_through_the_contract() -> None:
    result = validate(
        (EntryToLoop, LoopNode), _contract(("discovery", ("evolution", "end")), ("evolution", ("evolution",)))
    )
    assert result.problems == ["cycle_without_exit: evolution cannot reach the end: a cycle (or dead end) with no exit"]


def _contract(*phases: tuple[str, tuple[str, ...]]) -> PhaseContract:
    return PhaseContract(
        initial=phases[0][0], phases=tuple(PhaseSpec(name=n, next=nxt, deadline=1.0) for n, nxt in phases)
    )


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
    assert "phase evolution: -> evolution | submission | end; ends by 96% of the budget; agent evolver" in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("valid: 5 phases, entry discovery")
