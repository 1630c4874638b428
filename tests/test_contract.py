"""The phase contract (docs/architecture.md, "Modes and phase contracts"): every analysis finding, a suppressed one
printed with its reason, and every reason a tool is removed for."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_k.competition import Criteria, TaskType
from agent_k.competition.research import CVScheme, ResearchFindings, TargetProfile
from agent_k.mission.agents.toolbox import mission_tools
from agent_k.mission.agents.tools import PhaseTools, Removal, removal
from agent_k.mission.contract import (
    MISSION_CONTRACT,
    FindingCode,
    PhaseContract,
    PhaseSpec,
    Suppression,
    ToolSpec,
    analyse,
)
from agent_k.mission.launch import MissionSpec
from tests.conftest import run_cli


def _phases(*phases: tuple[str, tuple[str, ...]], workflow: bool = True) -> tuple[PhaseSpec, ...]:
    return tuple(PhaseSpec(name=name, next=nxt, deadline=1.0, workflow=workflow) for name, nxt in phases)


def _codes(contract: PhaseContract) -> list[tuple[FindingCode, str]]:
    return [(f.code, f.subject) for f in analyse(contract).findings]


def test_the_mission_contract_has_no_findings() -> None:
    assert analyse(MISSION_CONTRACT).ok
    assert {t.name for t in mission_tools().toolset().tools.values()} == {t.name for t in MISSION_CONTRACT.tools}


@pytest.mark.parametrize(
    ("contract", "expected"),
    [
        (
            PhaseContract(initial="scouting", phases=_phases(("research", ("end",)))),
            [(FindingCode.missing_initial_phase, "scouting"), (FindingCode.unreachable_phase, "research")],
        ),
        (
            PhaseContract(initial="a", phases=_phases(("a", ("b",)), ("b", ("a",)))),
            [
                (FindingCode.missing_terminal_phase, "end"),
                (FindingCode.cycle_without_exit, "a"),
                (FindingCode.cycle_without_exit, "b"),
            ],
        ),
        (
            PhaseContract(initial="a", phases=_phases(("a", ("end",)), ("orphan", ("end",)))),
            [(FindingCode.unreachable_phase, "orphan")],
        ),
        (
            PhaseContract(initial="a", phases=_phases(("a", ("b", "end")), ("b", ("b",)))),
            [(FindingCode.cycle_without_exit, "b")],
        ),
        (
            PhaseContract(initial="a", phases=_phases(("a", ("ghost", "end")))),
            [(FindingCode.unknown_transition, "a->ghost")],
        ),
        (
            PhaseContract(
                initial="a",
                phases=(*_phases(("a", ("b", "end"))), PhaseSpec(name="b", next=("end",), deadline=1, workflow=False)),
            ),
            [(FindingCode.dead_phase, "b")],
        ),
        (
            PhaseContract(
                initial="a", phases=_phases(("a", ("end",))), tools=(ToolSpec(name="peek", phases=("a", "z")),)
            ),
            [(FindingCode.tool_for_unknown_phase, "peek@z")],
        ),
    ],
    ids=["missing-initial", "no-terminal", "unreachable", "cycle-without-exit", "unknown-transition", "dead", "tool"],
)
def test_each_finding(contract: PhaseContract, expected: list[tuple[FindingCode, str]]) -> None:
    assert _codes(contract) == expected


def test_a_phase_with_an_agent_and_its_own_tool_is_not_dead() -> None:
    agent_only = PhaseSpec(name="b", next=("end",), deadline=1, workflow=False, agent="helper")
    contract = PhaseContract(
        initial="a", phases=(*_phases(("a", ("b",))), agent_only), tools=(ToolSpec(name="peek", phases=("b",)),)
    )
    assert analyse(contract).ok


def test_a_finding_is_suppressed_only_with_a_reason_and_the_reason_is_printed(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 10 characters"):
        Suppression(finding=FindingCode.unreachable_phase, subject="retired", reason="because")
    why = "kept for missions started before it was retired; they resume into it"
    contract = MISSION_CONTRACT.model_copy(
        update={
            "phases": (*MISSION_CONTRACT.phases, PhaseSpec(name="retired", next=("end",), deadline=1.0)),
            "suppress": (Suppression(finding=FindingCode.unreachable_phase, subject="retired", reason=why),),
        }
    )
    analysis = analyse(contract)
    assert analysis.findings == [] and [f.subject for f, _ in analysis.suppressed] == ["retired"]

    path = tmp_path / "contract.json"
    path.write_text(contract.model_dump_json())
    printed = run_cli("graph", "--contract", str(path))
    assert f"suppressed: unreachable_phase: retired cannot be reached from discovery (reason: {why})" in printed.stdout
    assert printed.returncode == 1 and "invalid: phase retired has no node" in printed.stderr

    path.write_text(contract.model_copy(update={"suppress": ()}).model_dump_json())
    unsuppressed = run_cli("graph", "--contract", str(path))
    assert unsuppressed.returncode == 1
    assert "invalid: unreachable_phase: retired cannot be reached from discovery" in unsuppressed.stderr
    path.write_text("{not json")
    bad = run_cli("graph", "--contract", str(path))
    assert bad.returncode == 2 and "cannot read the contract" in bad.stderr and "Traceback" not in bad.stderr


def test_every_removal_reason() -> None:
    state = MissionSpec(mission_id="m", criteria=Criteria(competition="penguins"), max_cost_usd=0.01).initial_state()
    tool = MISSION_CONTRACT.tool
    nobody: frozenset[str] = frozenset()

    def code(name: str, phase: str, operator: frozenset[str] = nobody) -> Removal | None:
        spec = tool(name)
        assert spec is not None
        why = removal(spec, phase, state, operator)
        return why[0] if why else None

    assert code("list_competitions", "research") is Removal.wrong_phase
    assert code("column_summaries", "research") is Removal.precondition_not_met  # nothing profiled yet
    assert code("try_solution", "prototype") is Removal.precondition_not_met
    assert code("mission_status", "research") is None
    assert code("mission_status", "research", frozenset({"mission_status"})) is Removal.manual_filter

    state.research_findings = _findings()
    assert code("try_solution", "prototype") is None
    state.budget.cost_usd = 0.02  # past --max-cost: what spends is forbidden, what reads is not
    assert code("try_solution", "prototype") is Removal.forbidden_in_state
    assert code("step_failure", "prototype") is None


def test_a_tool_the_contract_does_not_declare_cannot_be_registered() -> None:
    def shell(command: str) -> str:
        return command

    with pytest.raises(ValueError, match="tool shell is not declared in the phase contract"):
        PhaseTools().tool(shell)


def _findings() -> ResearchFindings:
    return ResearchFindings(
        n_train=10,
        n_test=5,
        columns=[],
        target=TargetProfile(task=TaskType.binary),
        id_like=[],
        leakage_suspects=[],
        leakage_details=[],
        drift=[],
        cv=CVScheme(kind="kfold", n_folds=5),
        model_families=["linear"],
    )
