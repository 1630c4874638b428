"""Progressive disclosure: what the agents read first is a summary, bounded however long the mission runs;
details come one item at a time, on request."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from agent_k.competition import Competition
from agent_k.competition.research import ColumnProfile, ResearchFindings
from agent_k.mission.candidates import ArchivedCandidate
from agent_k.ml.recipes import Recipe
from agent_k.ml.render import MEDIA_FEATURES

MAX_ROWS = 12
LATEST = 4
FAILURES = 2


def column_line(column: ColumnProfile) -> str:
    alone = f", alone {column.single_column_score}" if column.single_column_score is not None else ""
    code = ", integer codes" if column.code else ""
    missing = f"{column.missing_fraction:.0%} missing"
    return f"{column.name}: {column.kind}, {missing}, {column.n_unique} distinct{code}{alone}"


def research_findings(findings: ResearchFindings) -> list[tuple[str, dict[str, Any]]]:
    """Research's findings as (one-line headline, full detail), in a stable order."""
    out: list[tuple[str, dict[str, Any]]] = [
        (
            f"{findings.n_train:,} training rows, {len(findings.columns)} features, {findings.cv.n_folds}-fold "
            f"{findings.cv.kind}",
            {"rows": findings.n_train, "test_rows": findings.n_test, "cv": findings.cv.model_dump()},
        ),
        (f"target: {findings.target.task.value}", findings.target.model_dump()),
        (f"families to try: {', '.join(findings.model_families)}", {"model_families": findings.model_families}),
    ]
    shape = data_shape(findings, None)
    if findings.text_columns:
        out.append((f"free text: {', '.join(findings.text_columns)}", {"text_columns": shape["text_columns"]}))
    if findings.time is not None:
        out.append((_time_line(findings), {"time": shape["time"]}))
    if findings.group_candidates:
        grouped = findings.cv.group_column
        headline = f"grouped folds by '{grouped}'" if grouped else "repeated entities, ordinary folds"
        out.append((f"{headline} ({', '.join(findings.group_candidates)})", {"groups": shape["groups"]}))
    out += [(f"leakage suspect: {s.column}", s.model_dump() | {"dropped": True}) for s in findings.leakage_details]
    if findings.id_like:
        out.append((f"id-like columns: {', '.join(findings.id_like)}", {"id_like": findings.id_like, "dropped": True}))
    drifted = [d for d in findings.drift if d.drifted]
    if drifted:
        names = ", ".join(d.column for d in drifted[:5])
        out.append((f"{len(drifted)} columns drift between train and test ({names})", {"drift": drifted}))
    out += [(note if len(note) <= 120 else note[:117] + "...", {"note": note}) for note in findings.notes]
    return out


def data_shape(findings: ResearchFindings, competition: Competition | None) -> dict[str, Any]:
    """What the rows are, beyond their columns: free text, their time (a forecast or not, its series, horizon and
    season), the entities folds keep whole, the target columns, and the folds all of this leads to."""
    time = findings.time
    return {
        "targets": competition.target_columns if competition else [findings.target.task.value],
        "prediction": competition.prediction.value if competition else None,
        "top_k": competition.top_k if competition else None,
        "text_columns": {
            c.name: f"{c.n_unique} distinct values; word and character n-gram TF-IDF (the text settings of a "
            "recipe), a stacked text model's out-of-fold prediction for trees"
            for c in findings.columns
            if c.name in findings.text_columns
        },
        "time": time.model_dump() if time else None,
        "groups": {
            "candidates": {
                c: f"{share:.0%} of test rows unseen in training" for c, share in findings.group_candidates.items()
            },
            "grouped_by": findings.cv.group_column,
        },
        "cv": {
            "kind": findings.cv.kind,
            "folds": findings.cv.n_folds,
            "gap": findings.cv.gap,
            "why": findings.cv.reason,
        },
        "media": _media(findings, competition),
    }


def _media(findings: ResearchFindings, competition: Competition | None) -> dict[str, Any] | None:
    """The files a media competition's rows are, and where a script finds them and their features."""
    if findings.media is None or competition is None or competition.media is None:
        return None
    return {
        **findings.media.model_dump(),
        "files": f"the data folder's media/ (read-only), each row's file named by its '{competition.media.column}'",
        "features": f"{' and '.join(MEDIA_FEATURES.values())} in the data folder: each row's "
        f"{findings.media.features} media features by '{competition.id_column}' (embeddings emb*, statistics)",
    }


def _time_line(findings: ResearchFindings) -> str:
    time = findings.time
    assert time is not None
    names = " and ".join(time.columns)
    if not time.forecast:
        return f"timed by {names}, test rows interleave: shuffled folds"
    keys = f", series by {', '.join(time.keys)}" if time.keys else ", one series"
    return f"forecast of {time.horizon} steps by {names}{keys}, season {time.season}: forward folds"


def candidate_table(candidates: list[ArchivedCandidate], competition: Competition, limit: int) -> dict[str, Any]:
    """The best candidates and the latest generation's, one short row each, and one summary of the rest.

    However many generations ran, the table holds at most MAX_ROWS rows plus a fixed-size summary, so the
    Evolver's prompt stays bounded as the search goes on."""
    scored = competition.scored_by.ranked(
        (c for c in candidates if c.succeeded and c.cv is not None and c.fidelity >= 1.0), lambda c: c.cv
    )
    latest_generation = max((c.generation for c in candidates), default=0)
    shown: dict[str, ArchivedCandidate] = {c.key: c for c in scored[: max(1, min(limit, MAX_ROWS - LATEST))]}
    for c in [c for c in candidates if c.generation == latest_generation][:LATEST]:
        shown.setdefault(c.key, c)
    failed = [c for c in candidates if not c.succeeded and c.key not in shown][-FAILURES:]
    rows = [_row(c) for c in [*shown.values(), *failed]]
    rest = [c for c in candidates if c.key not in shown and c not in failed]
    return {"candidates": rows, "older": _summary(rest, competition) if rest else None}


def _row(candidate: ArchivedCandidate) -> dict[str, Any]:
    return {
        "key": candidate.key,
        "family": _family(candidate),
        "generation": candidate.generation,
        "cv": candidate.cv,
        "status": candidate.status,
    }


def _family(candidate: ArchivedCandidate) -> str:
    recipe = candidate.recipe
    return recipe.family.value if isinstance(recipe, Recipe) else type(recipe).__name__.lower()


def _summary(rest: list[ArchivedCandidate], competition: Competition) -> dict[str, Any]:
    """Candidates not in the table, compressed: how many, per family the best CV, and how many failed."""
    best: dict[str, float] = {}
    counts: dict[str, int] = defaultdict(int)
    for c in rest:
        family = _family(c)
        counts[family] += 1
        if c.succeeded and c.cv is not None and c.fidelity >= 1.0:
            best[family] = round(competition.scored_by.best((best.get(family, c.cv), c.cv)), 6)
    generations = sorted({c.generation for c in rest})
    return {
        "generations": f"{generations[0]}-{generations[-1]}",
        "candidates": len(rest),
        "failed": sum(1 for c in rest if not c.succeeded),
        "per_family": {f: {"tried": counts[f], "best_cv": best.get(f)} for f in sorted(counts)},
    }
