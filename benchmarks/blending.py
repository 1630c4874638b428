"""Weighted blend or stacking? Both built from the same missions' pools, scored on the hidden private rows.

For each finished mission of a home: its blend pool (the best candidate of each niche, and the best one's seeds),
their out-of-fold and test predictions, then
- the best single candidate of the pool;
- the weighted blend (greedy ensemble selection on the out-of-fold predictions, its weights applied to the test
  predictions: `agent_k.ml.ensemble`), submitted where its CV beats the best single one;
- the stack the mission makes (`agent_k.ml.stacking`: a linear model on the out-of-fold predictions of the members
  ensemble selection chose, else of the pool's best seven, fitted inside the folds for its CV, then on every row);
- the same stack over the whole pool.
Each is written as a submission and scored by the local platform. Missions come from `--home` (e.g. one that
`ml_quality.py --home` kept), or are run here first with `--competitions`.

    python benchmarks/blending.py --home HOME
    python benchmarks/blending.py --competitions penguins wine diabetes --budget 60 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from ml_quality import run_mission

from agent_k.competition import TaskType
from agent_k.mission.blending import blend_pool, member_predictions
from agent_k.mission.candidates import ArchivedCandidate
from agent_k.mission.state import MissionState
from agent_k.ml.ensemble import MAX_MEMBERS, Blend, blend_test, select_blend
from agent_k.ml.evaluate import CompetitionData, OutOfFold, decision_rule, fold_scores, submission_frame
from agent_k.ml.stacking import can_stack, stack
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store


def stacked(data: CompetitionData, oofs: dict[str, OutOfFold], tests: dict[str, pd.DataFrame]) -> Blend | None:
    """The stack of these members (`agent_k.ml.stacking`), as a blend."""
    made = stack(data, oofs)
    if made is None:
        return None
    stacker, oof, scores = made
    return Blend(tuple(oofs), (1.0,) * len(oofs), scores, oof, stacker)


def private(platform: LocalPlatform, data: CompetitionData, oof: OutOfFold, test: pd.DataFrame, tmp: Path) -> float:
    path = tmp / "submission.csv"
    submission_frame(data, test, decision_rule(data, oof)).to_csv(path, index=False)
    score = platform.score_file(data.spec, path)[1]
    assert score is not None
    return score


def compare(home: Path, mission_id: str, tmp: Path) -> dict[str, Any] | None:
    store = Store.open(f"sqlite:///{home / 'agent_k.db'}")
    snapshot = store.last_snapshot(mission_id)
    assert snapshot is not None
    state = MissionState.model_validate_json(snapshot.state_json)
    candidates = [ArchivedCandidate.from_row(r, home / "missions" / mission_id) for r in store.candidates(mission_id)]
    store.close()
    if state.selected_competition is None:
        return None
    data, oofs, tests = asyncio.run(member_predictions(state, blend_pool(candidates, state)))
    if len(oofs) < 2:
        return None
    platform = LocalPlatform(home / "competitions")
    spec = data.spec
    singles = {k: float(np.mean(fold_scores(data, o))) for k, o in oofs.items()}
    best = max(singles, key=lambda k: singles[k] if spec.maximize else -singles[k])
    row: dict[str, Any] = {"competition": spec.id, "mission": mission_id, "pool": len(oofs)}
    row["single_cv"], row["single"] = singles[best], private(platform, data, oofs[best], tests[best], tmp)
    regression = spec.task in (TaskType.regression, TaskType.multioutput)
    blend = select_blend(data, oofs)
    if blend is not None:
        row["blend_cv"], row["blend"] = (
            blend.cv_mean,
            private(platform, data, blend.oof, blend_test(blend, tests, regression), tmp),
        )
    if can_stack(data, state.research_findings.cv.kind if state.research_findings else "forward"):
        chosen = list(blend.keys) if blend else list(oofs)[:MAX_MEMBERS]  # as the mission stacks
        for name, keys in (("stack", chosen), ("stack_pool", list(oofs))):
            made = stacked(data, {k: oofs[k] for k in keys}, tests)
            if made is not None:
                row[f"{name}_cv"] = made.cv_mean
                row[name] = private(platform, data, made.oof, blend_test(made, tests, regression), tmp)
    row["maximize"] = spec.maximize
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path)
    parser.add_argument("--competitions", nargs="*", default=[])
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp) / "home"
        for _ in range(args.runs):
            for competition in args.competitions:
                LocalPlatform(home / "competitions").ensure(competition)
                run_mission(home, competition, args.budget)
        store = Store.open(f"sqlite:///{home / 'agent_k.db'}")
        missions = [m.id for m in store.list_missions(status="succeeded", limit=1000)]
        store.close()
        rows = [row for m in missions if (row := compare(home, m, Path(tmp))) is not None]
    tally = {"caruana": 0, "stack": 0, "tie": 0}
    for row in rows:
        print(json.dumps(row), flush=True)
        if "stack" not in row:
            continue
        sign = 1 if row["maximize"] else -1
        weighted_kept = "blend" in row and sign * row["blend_cv"] > sign * row["single_cv"]
        caruana, stacked = row["blend"] if weighted_kept else row["single"], row["stack"]
        tally["tie" if stacked == caruana else "stack" if sign * stacked > sign * caruana else "caruana"] += 1
    print(f"\nprivate score, the stack against the weighted blend where it beats the best CV: {tally}")


if __name__ == "__main__":
    main()
