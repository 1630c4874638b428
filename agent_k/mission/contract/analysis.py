"""Analyse a phase contract before anything runs on it: what would make a mission stall, loop or never start."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_k.mission.contract.model import END, FindingCode, PhaseContract, Suppression


@dataclass(frozen=True)
class Finding:
    code: FindingCode
    subject: str
    message: str

    def __str__(self) -> str:
        return f"{self.code.value}: {self.message}"


@dataclass
class Analysis:
    findings: list[Finding] = field(default_factory=list)
    """Unsuppressed findings: any of them makes the contract unusable."""
    suppressed: list[tuple[Finding, Suppression]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def suppressed_lines(self) -> list[str]:
        """Each suppressed finding with its written reason, as `agent-k graph` and a mission's start say them."""
        return [f"suppressed: {finding} (reason: {why.reason})" for finding, why in self.suppressed]


def analyse(contract: PhaseContract) -> Analysis:
    names = [p.name for p in contract.phases]
    edges = {p.name: [t for t in p.next if t != END] for p in contract.phases}
    found: list[Finding] = []
    if contract.initial not in names:
        found.append(Finding(FindingCode.missing_initial_phase, contract.initial, f"no phase '{contract.initial}'"))
    if not any(END in p.next for p in contract.phases):
        found.append(Finding(FindingCode.missing_terminal_phase, END, "no phase can end the mission"))
    for phase in contract.phases:
        for target in phase.next:
            if target != END and target not in names:
                message = f"{phase.name} may go to '{target}', which is not a phase"
                found.append(Finding(FindingCode.unknown_transition, f"{phase.name}->{target}", message))
    reachable = _closure(contract.initial, edges) if contract.initial in names else set()
    for phase in contract.phases:
        if phase.name not in reachable:
            message = f"{phase.name} cannot be reached from {contract.initial}"
            found.append(Finding(FindingCode.unreachable_phase, phase.name, message))
        if not any(END in contract.phase(p).next for p in _closure(phase.name, edges) if p in names):
            message = f"{phase.name} cannot reach the end: a cycle (or dead end) with no exit"
            found.append(Finding(FindingCode.cycle_without_exit, phase.name, message))
        has_tools = any(t.phases and phase.name in t.phases for t in contract.tools)
        if not phase.workflow and not (phase.agent and has_tools):
            message = f"{phase.name} has no workflow path and no agent with a tool of its own"
            found.append(Finding(FindingCode.dead_phase, phase.name, message))
    for tool in contract.tools:
        for unknown in sorted(set(tool.phases) - set(names)):
            message = f"tool {tool.name} is declared for '{unknown}', which is not a phase"
            found.append(Finding(FindingCode.tool_for_unknown_phase, f"{tool.name}@{unknown}", message))
    return _apply_suppressions(found, contract.suppress)


def _apply_suppressions(found: list[Finding], suppressions: tuple[Suppression, ...]) -> Analysis:
    analysis = Analysis()
    for finding in found:
        why = next((s for s in suppressions if (s.finding, s.subject) == (finding.code, finding.subject)), None)
        if why is None:
            analysis.findings.append(finding)
        else:
            analysis.suppressed.append((finding, why))
    return analysis


def _closure(start: str, edges: dict[str, list[str]]) -> set[str]:
    seen, stack = {start}, [start]
    while stack:
        for target in edges.get(stack.pop(), []):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen
