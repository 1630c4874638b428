"""How a blend mixes its members' predictions: averaged by weight, or through a stacker (a linear model fitted on
their out-of-fold predictions, `agent_k.ml.stacking`). Self-contained (NumPy): our templates embed this source and
the runner calls it, so a blend's script and the mission mix alike.

A stacker is a plain dict: `kind` ("linear" for values, "logistic" for class probabilities), `coef` (a row per
output), `intercept`. Its input is the members' predictions side by side, class probabilities as their logs.
"""

from typing import Any

import numpy as np

EPSILON = 1e-6
"""Probabilities are clipped here before their log."""


def stack_inputs(predictions: list[Any], regression: bool) -> np.ndarray:
    """The members' predictions (each rows by columns) side by side, or their log-probabilities."""
    values = np.hstack([np.asarray(p, dtype=float).reshape(len(p), -1) for p in predictions])
    return values if regression else np.log(np.clip(values, EPSILON, 1.0))


def apply_stacker(stacker: dict[str, Any], inputs: np.ndarray) -> np.ndarray:
    """Values (one column), or class probabilities (a column per coefficient row)."""
    coef, intercept = np.asarray(stacker["coef"], dtype=float), np.asarray(stacker["intercept"], dtype=float)
    scores: np.ndarray = inputs @ coef.T + intercept
    if stacker["kind"] == "linear":
        return scores
    odds: np.ndarray = np.exp(scores - scores.max(axis=1, keepdims=True))
    probabilities: np.ndarray = odds / odds.sum(axis=1, keepdims=True)
    return probabilities


def mix(predictions: list[Any], weights: list[float], stacker: dict[str, Any] | None, regression: bool) -> Any:
    """The blend of the members' predictions (in the members' order)."""
    if stacker:
        return apply_stacker(stacker, stack_inputs(predictions, regression))
    total = float(sum(weights))
    return sum(np.asarray(p, dtype=float) * (w / total) for w, p in zip(weights, predictions, strict=True))
