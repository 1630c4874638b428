"""A runner process under attack, for `test_hostile_root.py`: `python -m tests.support.hostile_runner HOME WORK`.

It evaluates each attack of `tests.support.hostile_attacks` as the Evolver's script on penguins' first fold (the real
path: `evaluate_solution` → the harness → the sandbox), then six 131,072-column headers with an honest script
queued behind them, and prints one JSON line: what each run returned, when the honest script's turn came and
when it started, and this process's peak resident memory. Run as its own process so that a stalled thread or a
swollen heap is this process's, measured, and not the test's.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from pathlib import Path

from agent_k.competition import Competition, CVScheme
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest
from agent_k.ml.recipes import Script
from agent_k.ml.requests import evaluate_solution
from agent_k.sandbox import Limits
from tests.support.hostile_attacks import ATTACKS, HEADER_FLOOD, HONEST, PRELUDE, reports

CV = CVScheme(kind="stratified_kfold", n_folds=3)
QUEUE_PARALLEL = 6


async def _one(data: CompetitionData, code: str, workdir: Path) -> dict[str, object]:
    started = time.monotonic()
    script = Script(source=PRELUDE + code, note="hostile")
    evaluation = await evaluate_solution(EvaluationRequest(script, data, CV, workdir, Limits(timeout_s=60), folds=1))
    log = workdir / "fold0" / "stdout.log"
    return {
        "status": str(evaluation.status),
        "error": evaluation.error,
        "cv": evaluation.cv_mean,
        "seconds": round(time.monotonic() - started, 2),
        "found": reports(log.read_bytes().decode(errors="replace") if log.exists() else ""),
    }


async def _queue(data: CompetitionData, work: Path) -> dict[str, object]:
    """Six hostile headers take every slot; the honest script waits for one. Its turn is when it gets a slot,
    its start is what it reports from inside the sandbox."""
    slots = asyncio.Semaphore(QUEUE_PARALLEL)
    turn: dict[str, float] = {}

    async def queued(name: str, code: str) -> dict[str, object]:
        async with slots:
            turn[name] = time.time()
            return await _one(data, code, work / name)

    names = [*(f"header-{i}" for i in range(QUEUE_PARALLEL)), "honest"]
    results = await asyncio.gather(*(queued(n, HONEST if n == "honest" else HEADER_FLOOD) for n in names))
    outcome = dict(zip(names, results, strict=True))
    honest = outcome["honest"]
    started = honest["found"].get("started") if isinstance(honest["found"], dict) else None
    return {"runs": outcome, "honest_turn": turn["honest"], "honest_started": started}


async def main(home: Path, work: Path) -> dict[str, object]:
    public = home / "competitions" / "penguins" / "public"
    data = CompetitionData.load(Competition.model_validate_json((public / "competition.json").read_text()), public)
    attacks = {name: await _one(data, code, work / name) for name, code in ATTACKS.items()}
    return {"attacks": attacks, "queue": await _queue(data, work / "queue")}


def peak_rss_mb() -> float:
    """This process's own peak resident memory (`VmHWM`). Not `ru_maxrss`: Linux carries that across `execve`, so
    it would report the peak of the pytest worker this process was started from."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


if __name__ == "__main__":
    began = time.monotonic()
    outcome = asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2])))
    outcome["returned_after_s"] = round(time.monotonic() - began, 2)
    outcome["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(outcome), flush=True)
