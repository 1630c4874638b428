"""Standings on every built-in: each board's strongest reference and build time, and a mission's place on it.

For each competition, in a fresh home: materialise it (which trains its board's reference teams, timed), run one
mission through the real CLI (`agent-k run --time-budget BUDGET --json`), and rank that mission's private score
on today's board and, side by side, on the board an older AGENT-K built (`--before`: a competitions folder it
materialised, e.g. from a checkout of that commit). The mission's score does not depend on the board, so both
medals come from the same run.

    python benchmarks/standings.py [--budget 120] [--before OLD/competitions] [--results rows.jsonl]
        [--competitions penguins titanic ...]

With `--results`, each competition's row is appended as it ends (stamped with git's hash of `agent_k/`), and
competitions already there for this code and budget are not run again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agent_k.competition import Competition
from agent_k.platforms.base import LeaderboardEntry
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.board import read_board
from agent_k.platforms.local.catalog import BUILTINS
from agent_k.platforms.ranking import standing


def code_version() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD:agent_k"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def strongest(board: list[LeaderboardEntry], maximize: bool) -> LeaderboardEntry:
    scored = [e for e in board if e.private_score is not None]
    return max(scored, key=lambda e: (e.private_score or 0.0) * (1 if maximize else -1))


def run_mission(home: Path, competition: str, budget: float) -> dict[str, Any]:
    env = {**os.environ, "AGENT_K_HOME": str(home)}
    env.pop("AGENT_K_DATABASE_URL", None)
    agent_k = str(Path(sys.executable).parent / "agent-k")
    args = [agent_k, "run", "--competition", competition, "--time-budget", str(budget), "--json"]
    completed = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    if not completed.stdout.strip():
        raise RuntimeError(f"agent-k run on {competition} exited {completed.returncode}: {completed.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return report


def build_board(home: Path, competition: str, before: Path | None) -> tuple[Competition, list[LeaderboardEntry], float]:
    """Materialise `competition` in `home`: its spec, its board and the seconds that took."""
    start = time.perf_counter()
    spec = LocalPlatform(home / "competitions").ensure(competition)
    build_s = time.perf_counter() - start
    private = home / "competitions" / competition / "private"
    if before is not None:  # the same hidden rows, or the two boards rank different things
        old_solution = (before / competition / "private" / "solution.csv").read_bytes()
        assert old_solution == (private / "solution.csv").read_bytes(), f"{competition}: another split"
    return spec, read_board(private / "leaderboard.json"), round(build_s, 1)


def places(
    spec: Competition, score: float | None, board: list[LeaderboardEntry], before: Path | None
) -> dict[str, Any]:
    """`score`'s place on `board` and on the older board, and each board's strongest team."""
    best = strongest(board, spec.maximize)
    row: dict[str, Any] = {"board_teams": len(board), "best_reference": best.team,
                           "best_reference_score": best.private_score}  # fmt: skip
    if score is None:
        return row
    place = standing(score, [e.private_score for e in board if e.private_score is not None], spec.scored_by)
    row |= {"rank": place.rank, "teams": place.teams, "medal": place.medal}
    if before is not None:
        old = read_board(before / spec.id / "private" / "leaderboard.json")
        old_best = strongest(old, spec.maximize)
        was = standing(score, [e.private_score for e in old if e.private_score is not None], spec.scored_by)
        row |= {
            "before_teams": len(old), "before_best_reference": old_best.team,
            "before_best_reference_score": old_best.private_score, "before_rank": was.rank, "before_medal": was.medal,
        }  # fmt: skip
    return row


def measure(competition: str, budget: float, before: Path | None) -> dict[str, Any]:
    """One competition: its board, one mission on it, and the mission's place on both boards."""
    with tempfile.TemporaryDirectory() as tmp:
        spec, board, build_s = build_board(Path(tmp), competition, before)
        report = run_mission(Path(tmp), competition, budget)
    row: dict[str, Any] = {
        "competition": competition, "metric": spec.metric, "maximize": spec.maximize, "budget": budget,
        "status": report["status"], "private_score": report["private_score"], "elapsed_s": report["elapsed_s"],
        "board_build_s": build_s,
    }  # fmt: skip
    row |= places(spec, report["private_score"], board, before)
    reported = (report["rank"], report["teams"], report["medal"])
    assert reported == (row.get("rank"), row.get("teams"), row.get("medal")), (competition, reported, row)
    return row


def rerank(row: dict[str, Any], before: Path | None) -> dict[str, Any]:
    """A measured mission's score on a board built again by today's code (its build timed alone)."""
    with tempfile.TemporaryDirectory() as tmp:
        spec, board, build_s = build_board(Path(tmp), row["competition"], before)
    return {**row, "board_build_s": build_s, **places(spec, row["private_score"], board, before)}


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| competition | metric | best reference before | after | mission's private | rank before → after | "
        "medal before → after | board build s |",
        "|---|---|---|---|---:|---|---|---:|",
    ]
    for r in rows:
        arrow = "↑" if r["maximize"] else "↓"
        before = f"{r.get('before_best_reference_score', float('nan')):.5g} ({r.get('before_best_reference', '?')})"
        after = f"{r['best_reference_score']:.5g} ({r['best_reference']})"
        score = "-" if r["private_score"] is None else f"{r['private_score']:.5g}"
        ranks = f"{r.get('before_rank', '?')} / {r.get('before_teams', 0) + 1} → {r['rank']} / {r['teams']}"
        medals = f"{r.get('before_medal') or '-'} → {r['medal'] or '-'}"
        lines.append(f"| {r['competition']} | {r['metric']} {arrow} | {before} | {after} | {score} | {ranks} | "
                     f"{medals} | {r['board_build_s']} |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--before", type=Path, help="a competitions folder an older AGENT-K materialised")
    parser.add_argument("--results", type=Path, help="append each row here; rows already there are not run again")
    parser.add_argument("--competitions", nargs="*", default=[c for c in BUILTINS])
    parser.add_argument("--rerank", type=Path, help="no missions: rank the missions of --results on boards built "
                        "again by today's code, writing the rows here")  # fmt: skip
    args = parser.parse_args()
    version = code_version()
    if args.rerank:
        assert args.results, "--rerank ranks the rows of --results"
        measured = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
        reranked = [rerank(r, args.before) for r in measured if r["competition"] in args.competitions]
        args.rerank.write_text("".join(json.dumps({**r, "boards_by": version}) + "\n" for r in reranked))
        print(table(reranked))
        return
    rows: list[dict[str, Any]] = []
    if args.results and args.results.exists():
        rows = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
        rows = [r for r in rows if r.get("agent_k") == version and r["budget"] == args.budget]
    done = {r["competition"] for r in rows}
    for competition in args.competitions:
        if competition in done:
            continue
        row = {"agent_k": version, **measure(competition, args.budget, args.before)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.results:
            with args.results.open("a") as out:
                out.write(json.dumps(row) + "\n")
    order = {c: i for i, c in enumerate(args.competitions)}
    print(table(sorted((r for r in rows if r["competition"] in order), key=lambda r: order[r["competition"]])))


if __name__ == "__main__":
    main()
