"""The mission's own phase contract: the single declaration the graph check, the budget clock, the agents'
tool narrowing and `agent-k graph` all read."""

from __future__ import annotations

from agent_k.mission.contract.model import (
    END,
    ErrorStrategy,
    PhaseContract,
    PhaseSpec,
    Precondition,
    ToolSpec,
)

REPAIR_PHASES = ("prototype", "submission")
"""Phases whose failed steps the repair agent can take on (amphiflow, or auto with a model)."""

MISSION_CONTRACT = PhaseContract(
    initial="discovery",
    phases=(
        PhaseSpec(name="discovery", next=("research", END), deadline=0.05, agent="lobbyist"),
        PhaseSpec(name="research", next=("prototype", END), deadline=0.15, agent="scientist"),
        PhaseSpec(name="prototype", next=("evolution", END), deadline=0.35, strategy=ErrorStrategy.repair),
        PhaseSpec(
            name="evolution",
            next=("evolution", "submission", END),
            deadline=0.96,
            agent="evolver",
            strategy=ErrorStrategy.ignore,
        ),
        PhaseSpec(name="submission", next=(END,), deadline=1.0, strategy=ErrorStrategy.retry),
    ),
    tools=(
        ToolSpec(name="mission_status"),
        ToolSpec(name="list_competitions", phases=("discovery",)),
        ToolSpec(name="inspect_competition", phases=("discovery",)),
        ToolSpec(name="column_summaries", phases=("research", "evolution"), requires=(Precondition.data_profiled,)),
        ToolSpec(name="column_details", phases=("research", "evolution"), requires=(Precondition.data_profiled,)),
        ToolSpec(name="target_stats", phases=("research",), requires=(Precondition.data_profiled,)),
        ToolSpec(name="leakage_checks", phases=("research",), requires=(Precondition.data_profiled,)),
        ToolSpec(name="drift", phases=("research",), requires=(Precondition.data_profiled,)),
        ToolSpec(name="validation_scheme", phases=("research",), requires=(Precondition.data_profiled,)),
        ToolSpec(name="data_shape", phases=("research", "evolution"), requires=(Precondition.data_profiled,)),
        ToolSpec(name="findings_summary", phases=("evolution",), requires=(Precondition.data_profiled,)),
        ToolSpec(name="finding_details", phases=("evolution",), requires=(Precondition.data_profiled,)),
        ToolSpec(name="candidates_so_far", phases=("evolution",), requires=(Precondition.candidates_exist,)),
        ToolSpec(name="candidate_details", phases=("evolution",), requires=(Precondition.candidates_exist,)),
        ToolSpec(name="read_data_file", phases=REPAIR_PHASES),
        ToolSpec(name="step_failure", phases=REPAIR_PHASES),
        ToolSpec(
            name="try_solution",
            phases=("prototype", "submission"),
            kind="action",
            spends=True,
            requires=(Precondition.data_profiled,),
        ),
    ),
)
