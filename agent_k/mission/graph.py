"""Build the mission graph (pydantic-graph 2.x), validate it, and know each phase's allowed successors."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, get_args, get_origin, get_type_hints

from pydantic_graph import End, Graph, GraphBuilder, StepContext

from agent_k.mission.context import GraphContext
from agent_k.mission.contract import END as CONTRACT_END
from agent_k.mission.contract import MISSION_CONTRACT, Analysis, PhaseContract, analyse
from agent_k.mission.nodes import PHASE_NODES, PhaseNode
from agent_k.mission.state import MissionResult, MissionState

END = "End"
# mypy cannot read pydantic-graph's `infer_variance` TypeVars, so the graph types stay unparameterised here.
MissionGraph = Graph


class GraphValidationError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@cache
def successors(node_type: type[PhaseNode]) -> frozenset[str]:
    """Node ids (or END) that `node_type.run` may return, read from its return annotation."""
    hint = get_type_hints(node_type.run)["return"]
    options = get_args(hint) if get_origin(hint) is not None and get_origin(hint) is not End else (hint,)
    names = set()
    for option in options:
        origin = get_origin(option) or option
        names.add(END if origin is End else origin.get_node_id())
    return frozenset(names)


@dataclass
class Validation:
    nodes: list[str]
    edges: dict[str, list[str]]
    problems: list[str] = field(default_factory=list)
    analysis: Analysis = field(default_factory=Analysis)

    @property
    def ok(self) -> bool:
        return not self.problems


def validate(phases: Sequence[type[PhaseNode]], contract: PhaseContract = MISSION_CONTRACT) -> Validation:
    """The contract's analysis, and every node agreeing with it: one node per phase, and each node's return
    annotation (the graph's edges) naming only transitions the contract declares for its phase."""
    edges = {p.get_node_id(): sorted(successors(p)) for p in phases}
    analysis = analyse(contract)
    result = Validation(list(edges), edges, [str(finding) for finding in analysis.findings], analysis)
    by_phase = {p.phase.value: p for p in phases}
    declared = {p.name for p in contract.phases}
    for phase in contract.phases:
        node = by_phase.get(phase.name)
        if node is None:
            result.problems.append(f"phase {phase.name} has no node")
            continue
        names = {target.phase.value for target in phases if target.get_node_id() in successors(node)}
        names |= {CONTRACT_END} if END in successors(node) else set()
        unknown = {s for s in successors(node) if s != END and s not in edges}
        if unknown:
            result.problems.append(f"{node.get_node_id()} returns {sorted(unknown)}, which are not nodes of the graph")
        if not names <= set(phase.next):
            allowed = f"the contract allows {phase.name} {sorted(phase.next)}"
            result.problems.append(f"{node.get_node_id()} returns {sorted(names)} but {allowed}")
    for name, node in by_phase.items():
        if name not in declared:
            result.problems.append(f"{node.get_node_id()} runs phase {name}, which the contract does not declare")
    return result


def build_graph(
    phases: Sequence[type[PhaseNode]] = PHASE_NODES, contract: PhaseContract = MISSION_CONTRACT
) -> MissionGraph:
    """Validate the phases, then build the graph with the resume router in front of them.

    The router step returns its input (the node to run first), so one graph starts a new mission at
    Discovery or resumes one at any phase.
    """
    validation = validate(phases, contract)
    if not validation.ok:
        raise GraphValidationError(validation.problems)
    builder = GraphBuilder(
        name="mission",
        state_type=MissionState,
        deps_type=GraphContext,
        input_type=PhaseNode,
        output_type=MissionResult,
        auto_instrument=False,
    )

    @builder.step(node_id="resume_router")
    async def resume_router(ctx: StepContext) -> Any:
        return ctx.inputs

    decision = builder.decision(node_id="resume_at")
    for phase in phases:
        decision = decision.branch(builder.match_node(phase))
    builder.add(
        builder.edge_from(builder.start_node).to(resume_router),
        builder.edge_from(resume_router).to(decision),
        *(builder.node(phase) for phase in phases),
    )
    return builder.build()


def graph_fingerprint(phases: Sequence[type[PhaseNode]] = PHASE_NODES) -> str:
    """A short digest of the graph's nodes and edges: two codes with the same one run the same graph."""
    edges = {p.get_node_id(): sorted(successors(p)) for p in phases}
    return hashlib.sha256(json.dumps(edges, sort_keys=True).encode()).hexdigest()[:16]


def node_types(phases: Sequence[type[PhaseNode]] = PHASE_NODES) -> dict[str, type[PhaseNode]]:
    return {p.get_node_id(): p for p in phases}
