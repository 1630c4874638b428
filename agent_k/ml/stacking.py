"""Stacking: a linear model on the blend members' out-of-fold predictions weighs them.

For classes, a logistic regression on the members' log-probabilities; for values, least squares with non-negative
weights and an intercept. Its CV is nested: each fold's rows are predicted by a stacker fitted on the other folds'
rows, so the score is as honest as a single candidate's. The stacker fitted on every row then mixes the members'
test predictions, and its coefficients (numbers only) go into the blend's script, which applies them to its
members' predictions (`STACK` in the template, through `agent_k.ml.mixing`). On 18 missions' pools it scored better
privately than the weighted blend 10 times, worse 3 times, equal 5 (docs/benchmarks.md, "Weighted blend or
stacking"); the final pick's second split chooses between them (`agent_k.mission.final_pick`).

Only where a blend's members predict one target on shuffled or grouped folds: a forecast's forward folds would
fit the stacker on later rows than some it scores.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition import TaskType
from agent_k.ml.evaluate import CompetitionData, OutOfFold, fold_scores, oof_truth
from agent_k.ml.mixing import apply_stacker, stack_inputs
from agent_k.ml.recipes import Stacker

C = 1.0


def can_stack(data: CompetitionData, kind: str) -> bool:
    """One target (a class or a value), on folds that are not forward."""
    single = data.spec.task in (TaskType.binary, TaskType.multiclass, TaskType.regression)
    return single and kind != "forward"


def stack(data: CompetitionData, oofs: dict[str, OutOfFold]) -> tuple[Stacker, OutOfFold, list[float]] | None:
    """The stacker fitted on every row, the nested out-of-fold predictions and their fold scores; None for fewer
    than two members."""
    if len(oofs) < 2:
        return None
    regression = data.spec.task is TaskType.regression
    first = next(iter(oofs.values()))
    columns = list(first.predictions.columns)
    x = stack_inputs([o.predictions for o in oofs.values()], regression)
    truth = oof_truth(data, first)
    y = truth.to_numpy(dtype=float) if regression else np.asarray(truth).astype(str)
    fit = _fit_linear if regression else _fit_logistic(columns)
    stacked = np.zeros(first.predictions.shape)
    for fold in np.unique(first.folds):
        held = first.folds == fold
        stacked[held] = apply_stacker(fit(x[~held], y[~held]).model_dump(), x[held])
    oof = OutOfFold(first.ids, first.folds, pd.DataFrame(stacked, columns=columns))
    return fit(x, y), oof, [round(s, 6) for s in fold_scores(data, oof)]


def _fit_linear(x: np.ndarray, y: np.ndarray) -> Stacker:
    from sklearn.linear_model import LinearRegression

    model = LinearRegression(positive=True).fit(x, y)
    return Stacker(kind="linear", coef=[[float(v) for v in model.coef_]], intercept=[float(model.intercept_)])


def _fit_logistic(classes: list[str]) -> Callable[[np.ndarray, np.ndarray], Stacker]:
    def fit(x: np.ndarray, y: np.ndarray) -> Stacker:
        """One row of coefficients per class of `classes` (a class a fold lacks gets zeros and a floor)."""
        from sklearn.linear_model import LogisticRegression

        with warnings.catch_warnings():  # an unscaled input converges slowly; the weights it reaches serve
            warnings.simplefilter("ignore")
            model: Any = LogisticRegression(C=C, max_iter=5000).fit(x, y)
        learned = [str(c) for c in model.classes_]
        coef = np.asarray(model.coef_, dtype=float)
        intercept = np.asarray(model.intercept_, dtype=float)
        if len(learned) == 2:  # one row for the second class: softmax of (0, z) is the logistic of z
            coef, intercept = np.vstack([np.zeros_like(coef), coef]), np.concatenate([[0.0], intercept])
        rows = {label: (coef[i], intercept[i]) for i, label in enumerate(learned)}
        absent = (np.zeros(x.shape[1]), float(intercept.min()) - 30.0)
        chosen = [rows.get(label, absent) for label in classes]
        return Stacker(
            kind="logistic",
            coef=[[float(v) for v in row] for row, _ in chosen],
            intercept=[float(b) for _, b in chosen],
        )

    return fit
