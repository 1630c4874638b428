"""A table built-in split into its public and hidden parts in memory: materialising it would also train the
reference models, which tests of one script or one recipe do not need."""

from __future__ import annotations

from pathlib import Path

from agent_k.platforms.local import materialise
from agent_k.platforms.local.catalog import builtin
from agent_k.platforms.local.materialise import PreparedCompetition


def prepared_builtin(competition_id: str) -> PreparedCompetition:
    found = builtin(competition_id)
    assert found is not None and found.load is not None, f"{competition_id} is not a table built-in"
    return materialise.prepare(
        found.id, found.title, found.load(), target=found.target, metric=found.metric,
        targets=list(found.targets) or None, hidden=found.hidden,
    )  # fmt: skip


def boardless_builtin(competition_id: str, root: Path) -> Path:
    """A table built-in written under `root` as the platform writes it, with an empty board: for a test of the
    mission on large data, whose reference teams would take longer to train than the mission runs."""
    return materialise.write(prepared_builtin(competition_id), root, [])
