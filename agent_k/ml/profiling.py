"""Profile a competition's data for Research: column types, target, id-like columns, leakage, drift, CV plan."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from agent_k.competition import Competition, TaskType
from agent_k.competition.columns import looks_like_dates, looks_like_text
from agent_k.competition.levels import as_text
from agent_k.competition.metric_scoring import normalize_labels
from agent_k.competition.research import (
    ColumnProfile,
    CVScheme,
    DriftResult,
    LeakageSuspect,
    ResearchFindings,
    TargetProfile,
    TimeStructure,
)
from agent_k.ml.families import DataTraits, recommended
from agent_k.ml.labels import labelled, reinfer
from agent_k.ml.shapes import find_time, group_candidates, grouping

LEAKAGE_THRESHOLD = 0.99
LEAKAGE_SAMPLE_ROWS = 5000
DRIFT_THRESHOLD = 0.1
DRIFT_P_VALUE = 0.01
DRIFT_SAMPLE_ROWS = 50_000
"""Distribution statistics (drift) are computed on a sample; cardinality, missingness and ids on all rows."""
CODE_MIN_LEVELS = 10
FORWARD_FOLDS = 3
FIVE_FOLDS_ROWS = 300_000
"""Up to this many training rows, five folds; above, three. The submission averages the fold models, and a fold
model that sees four fifths of the rows rather than two thirds predicts better: the same scripts with five folds
instead of three scored better privately on all four real-size tables tried, from 0.07% (mpls-stops' AUC) to 16%
(county-murders' RMSE; docs/benchmarks.md, "Five folds on the real-size tables"). A candidate costs about twice
as much."""
FIVE_FOLDS_ROWS_PER_BUDGET_S = 500
"""And up to this many rows a second of the mission's budget: a full CV's cost grows with the rows, and where one
takes a large share of the budget (a first LightGBM's five folds on birthdays' 280,000 rows: 92 s of 300) the
search gets too few full evaluations for the better fold models to pay (docs/benchmarks.md, "Folds and the
budget")."""
TEXT_FIVE_FOLDS_ROWS = 5_000
"""Text models cost more a fold: above this many rows, three folds."""


def _number(value: object) -> float:
    """pandas reductions are typed as any scalar; ours are numeric."""
    return float(value)  # type: ignore[arg-type]


def profile(
    spec: Competition, train: pd.DataFrame, test: pd.DataFrame, *, budget_s: float | None = None
) -> ResearchFindings:
    """Profile the rows that carry a label; rows that do not (a units row, say) are counted and noted. `budget_s`:
    the mission's, which bounds the rows five folds are planned for."""
    usable = labelled(train, spec)
    unlabelled = int((~usable).sum())
    if unlabelled:
        if usable.sum() < 2:
            raise ValueError(f"no usable labels in '{spec.target}' (e.g. {train[spec.target].iloc[0]!r})")
        example = train.loc[~usable, spec.target].iloc[0]
        train = reinfer(train[usable])
    findings = _profile(spec, train, test, budget_s)
    if unlabelled:
        findings.unlabelled_rows = unlabelled
        findings.notes.insert(
            0,
            f"{unlabelled} training rows carry no usable label (e.g. {example!r} in '{spec.target}'): a solution must "
            "leave them out; they are profiled without them",
        )
    return findings


def _profile(spec: Competition, train: pd.DataFrame, test: pd.DataFrame, budget_s: float | None) -> ResearchFindings:
    features = [c for c in train.columns if c not in (spec.id_column, *spec.target_columns)]
    columns = [_column_profile(train[c]) for c in features]
    text = [c.name for c in columns if c.kind == "text"]
    id_like = [spec.id_column, *[c.name for c in columns if c.kind != "text" and _looks_like_id(train[c.name], c)]]
    for column in columns:
        column.code = column.name not in id_like and _looks_like_code(train[column.name], column)
    candidates = [c for c in features if c not in id_like and c not in text]
    single_scores = _single_column_scores(spec, train, candidates)
    for column in columns:
        column.single_column_score = single_scores.get(column.name)
    train_sample, test_sample = _sample(train, DRIFT_SAMPLE_ROWS), _sample(test, DRIFT_SAMPLE_ROWS)
    drift = [_drift(train_sample[c], test_sample[c]) for c in candidates if c in test.columns]
    # A strong column the test rows carry as the training rows do is a feature; one they lack, or hold otherwise
    # (a code filled in once the outcome was known), is a suspect (docs/architecture.md, "Leakage suspects").
    strong = {c: score for c, score in single_scores.items() if score >= LEAKAGE_THRESHOLD}
    carried = {d.column for d in drift if not d.drifted}
    leaks = [LeakageSuspect(column=c, single_column_score=score) for c, score in strong.items() if c not in carried]
    strong_features = [c for c in strong if c in carried]
    skip = {*id_like, *text, *(s.column for s in leaks)}
    time = find_time(spec, train, test, columns, skip)
    groups = group_candidates(train, test, columns, skip - {spec.id_column} | set(time.columns if time else []))
    findings = ResearchFindings(
        n_train=len(train),
        n_test=len(test),
        columns=columns,
        target=_target_profile(spec, train),
        id_like=id_like,
        leakage_suspects=[s.column for s in leaks],
        leakage_details=leaks,
        drift=drift,
        cv=_validation(spec, train, time, groups, budget_s),
        model_families=[],
        text_columns=text,
        time=time,
        group_candidates=groups,
        train_only=spec.train_only,
    )
    findings.model_families = recommended_families(spec, findings)
    findings.notes = _notes(findings)
    if strong_features:
        kept = ", ".join(f"{c} (CV {strong[c]})" for c in strong_features)
        findings.notes.append(
            f"kept as features though each alone predicts the target, as the test rows carry it: {kept}"
        )
    return findings


def _validation(
    spec: Competition,
    train: pd.DataFrame,
    time: TimeStructure | None,
    groups: dict[str, float],
    budget_s: float | None,
) -> CVScheme:
    """Folds that validate as the test is drawn: forward chaining for a forecast, entities held out together
    when the test is new entities, else shuffled (stratified for classes)."""
    text = any(looks_like_text(train[c]) for c in train.columns if c not in spec.target_columns)
    n_folds = 5 if len(train) <= five_folds_rows(budget_s, text=text) else 3
    classes = spec.task in (TaskType.binary, TaskType.multiclass)
    if time is not None and time.forecast:
        return CVScheme(kind="forward", n_folds=FORWARD_FOLDS, time=time, reason=time.reason)
    group, why = grouping(groups)
    if spec.group_column and spec.group_column in train.columns:
        group = spec.group_column
        why = f"the competition names '{group}' as its entities: grouped folds hold each one out together"
    if group is not None:
        kind = "stratified_group_kfold" if classes else "group_kfold"
        return CVScheme(kind=kind, n_folds=n_folds, group_column=group, reason=why)
    reason = why or (time.reason if time else "the rows come in no particular order: shuffled folds")
    kind = "stratified_kfold" if classes else "kfold"
    return CVScheme(kind=kind, n_folds=n_folds, reason=reason)


def five_folds_rows(budget_s: float | None, *, text: bool = False) -> float:
    """The most training rows five folds are planned for; three above."""
    rows = TEXT_FIVE_FOLDS_ROWS if text else FIVE_FOLDS_ROWS
    return rows if budget_s is None else min(rows, FIVE_FOLDS_ROWS_PER_BUDGET_S * budget_s)


def _column_profile(values: pd.Series) -> ColumnProfile:
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    skew = _number(values.skew()) if numeric and values.nunique() > 2 else None
    kind: Literal["numeric", "categorical", "datetime", "text"] = "numeric" if numeric else "categorical"
    if not numeric and looks_like_dates(values):
        kind = "datetime"
    elif not numeric and looks_like_text(values):
        kind = "text"
    return ColumnProfile(
        name=str(values.name),
        kind=kind,
        missing_fraction=round(float(values.isna().mean()), 4),
        n_unique=int(values.nunique()),
        skew=None if skew is None or not np.isfinite(skew) else round(skew, 3),
        positive=bool(numeric and values.notna().any() and values.min() > 0),
    )


def _looks_like_id(values: pd.Series, column: ColumnProfile) -> bool:
    unique_fraction = column.n_unique / max(1, len(values))
    if unique_fraction < 0.95:
        return False
    if column.kind == "categorical":
        return True
    if not pd.api.types.is_integer_dtype(values):
        return False
    name = column.name.lower()
    return name.endswith("id") or name.startswith("id") or values.is_monotonic_increasing


def _looks_like_code(values: pd.Series, column: ColumnProfile) -> bool:
    """An integer column named like an id (`userId`, `store_id`) whose values repeat: a category in numbers."""
    if not pd.api.types.is_integer_dtype(values) or column.n_unique < CODE_MIN_LEVELS:
        return False
    name = column.name.lower()
    return name.endswith("id") or name.startswith("id_") or name.endswith("_code")


def _sample(frame: pd.DataFrame, rows: int) -> pd.DataFrame:
    return frame if len(frame) <= rows else frame.sample(rows, random_state=0)


def _target_profile(spec: Competition, train: pd.DataFrame) -> TargetProfile:
    if spec.task.has_several_targets:
        means = {c: round(_number(train[c].mean()), 4) for c in spec.target_columns}
        return TargetProfile(task=spec.task, class_counts={c: int(train[c].notna().sum()) for c in means}, mean=None)
    target = train[spec.target]
    if spec.task is TaskType.regression:
        return TargetProfile(
            task=spec.task,
            mean=_number(target.mean()),
            std=_number(target.std()),
            skew=_number(target.skew()),
            positive=bool(target.min() > 0),
        )
    counts = normalize_labels(target).value_counts()
    return TargetProfile(
        task=spec.task,
        class_counts={str(k): int(v) for k, v in counts.items()},
        imbalance_ratio=round(_number(counts.max()) / _number(counts.min()), 3),
    )


def _single_column_scores(spec: Competition, train: pd.DataFrame, columns: list[str]) -> dict[str, float]:
    """How well a small tree on each column alone predicts the target (cross-validated, on a sample).

    A score of LEAKAGE_THRESHOLD or more makes the column a leakage suspect where the test rows do not carry it as
    the training rows do (`_profile`); the scores also rank the columns for feature construction."""
    from sklearn.model_selection import cross_val_score
    from sklearn.preprocessing import OrdinalEncoder
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    sample = train.sample(min(len(train), LEAKAGE_SAMPLE_ROWS), random_state=0)
    regression = spec.task.is_regression
    y = sample[spec.target] if regression else normalize_labels(sample[spec.target])
    if not regression and y.value_counts().min() < 3:
        return {}
    scores = {}
    for column in columns:
        column_values = sample[[column]]
        if not pd.api.types.is_numeric_dtype(column_values[column]):
            encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
            values = encoder.fit_transform(column_values.apply(as_text))
        else:
            values = column_values.fillna(column_values[column].median()).to_numpy()
        model = DecisionTreeRegressor(max_depth=8) if regression else DecisionTreeClassifier(max_depth=8)
        scoring = "r2" if regression else "balanced_accuracy"
        scores[column] = round(float(np.mean(cross_val_score(model, values, y, cv=3, scoring=scoring))), 4)
    return scores


def _drift(train: pd.Series, test: pd.Series) -> DriftResult:
    if pd.api.types.is_numeric_dtype(train) and pd.api.types.is_numeric_dtype(test):
        from scipy.stats import chi2_contingency, ks_2samp

        a, b = train.dropna().to_numpy(), test.dropna().to_numpy()
        # The share of rows left empty moves like any value (the categories count it as a level): a column the test
        # rows leave empty far more often than the training rows has drifted, whatever its values.
        gap = abs(float(train.isna().mean()) - float(test.isna().mean()))
        filled = [[int(train.isna().sum()), len(a)], [int(test.isna().sum()), len(b)]]
        emptied = gap > DRIFT_THRESHOLD and float(chi2_contingency(filled).pvalue) < DRIFT_P_VALUE
        if not (len(a) and len(b)):
            return DriftResult(column=str(train.name), method="ks", statistic=round(gap, 4), drifted=emptied)
        test_result = ks_2samp(a, b)
        statistic = max(float(test_result.statistic), gap)
        drifted = emptied or (
            float(test_result.statistic) > DRIFT_THRESHOLD and float(test_result.pvalue) < DRIFT_P_VALUE
        )
        return DriftResult(column=str(train.name), method="ks", statistic=round(statistic, 4), drifted=drifted)
    from scipy.stats import chi2_contingency

    counts = pd.concat([as_text(train).value_counts(), as_text(test).value_counts()], axis=1, keys=["train", "test"])
    counts = counts.fillna(0.0)
    if (counts.sum() == 0).any():
        return DriftResult(column=str(train.name), method="tvd", statistic=0.0, drifted=False)
    shares = counts / counts.sum()
    tvd = 0.5 * float(np.abs(shares["train"].to_numpy() - shares["test"].to_numpy()).sum())
    significant = len(counts) > 1 and float(chi2_contingency(counts.to_numpy()).pvalue) < DRIFT_P_VALUE
    return DriftResult(
        column=str(train.name), method="tvd", statistic=round(tvd, 4), drifted=tvd > DRIFT_THRESHOLD and significant
    )


def recommended_families(spec: Competition, findings: ResearchFindings) -> list[str]:
    """Families to try, in order (`agent_k.ml.families.recommended`): text first goes to a linear model on its
    TF-IDF; a forecast also gets the naive forecasts; media, once featurised, the networks their pixels suit."""
    time = findings.time
    data = DataTraits(
        rows=findings.n_train,
        text=any(c.kind == "text" for c in findings.columns),
        numeric_only=all(c.kind == "numeric" for c in findings.columns),
        forecast=time is not None and time.forecast and time.unique and spec.task is TaskType.regression,
        media=spec.media is not None,
        pixels=findings.media is not None and findings.media.pixels > 0,
        fine_tune=findings.media is not None and findings.media.fine_tune,
        classification=spec.task is not TaskType.regression,
        classes=len(spec.classes or []),
    )
    return [family.value for family in recommended(data)]


def _notes(findings: ResearchFindings) -> list[str]:
    notes = [f"validation: {findings.cv.reason}"] if findings.cv.reason else []
    if findings.text_columns:
        notes.append(f"free text in {', '.join(findings.text_columns)}: TF-IDF fitted inside each fold")
    if findings.target.imbalance_ratio and findings.target.imbalance_ratio > 5:
        notes.append(f"class imbalance {findings.target.imbalance_ratio}:1; stratified folds keep it per fold")
    if findings.target.skew is not None and abs(findings.target.skew) > 1:
        notes.append(f"target skew {findings.target.skew:.2f}; try a log-transformed target")
    if findings.leakage_suspects:
        notes.append(f"leakage suspects excluded from features: {', '.join(findings.leakage_suspects)}")
    if findings.train_only:
        notes.append(f"only in training, so never features: {', '.join(findings.train_only[:10])}")
    drifted = [d.column for d in findings.drift if d.drifted]
    if drifted:
        notes.append(f"train/test drift in: {', '.join(drifted[:10])}")
    missing = [c.name for c in findings.columns if c.missing_fraction > 0]
    if missing:
        notes.append(f"{len(missing)} columns have missing values; imputed in every recipe")
    return notes
