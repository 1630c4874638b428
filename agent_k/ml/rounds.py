"""How many rounds a boosting fit adds: until rows held out of it stop improving, and no longer than its share of
the run's time. Self-contained (NumPy; LightGBM imported where a fit needs it): our templates embed this source.

The searched `n_estimators` is then a cap. On a large table the rounds a fold needs are found on its held-out rows,
not guessed; and a fit on a short budget or a busy machine ends with the rounds it had time for, where a fixed count
would time the whole candidate out and leave nothing.
"""

import time
from collections.abc import Callable
from typing import Any

import numpy as np

EARLY_STOPPING_ROUNDS = 50
"""Rounds without improvement on the held-out rows before the boosting stops."""
HELD_OUT_SHARE = 0.1
"""Of a fit's rows, the share it holds out to stop on (HistGradientBoosting's own `early_stopping="auto"` share)."""


class RunClock:
    """The run's time (a solution's `--seconds`), shared out among the fits still to come, so that each boosting fit
    stops adding rounds at its share of what is left.

    A member's first fit cut short by the time sets its rounds for the fits after it: each later fold then costs
    about what the first did, instead of the last fold getting what the others left over (a few rounds, or one)."""

    def __init__(self) -> None:
        self.deadline: float | None = None
        self.fits_left = 1
        self.rounds: dict[Any, int] = {}
        """Per member: the rounds its first fit cut short by the time reached."""

    def start(self, seconds: float | None) -> None:
        self.deadline = None if seconds is None else time.monotonic() + seconds

    def plan(self, fits: int) -> None:
        """`fits` fits are still to come, the next one included."""
        self.fits_left = max(1, fits)

    def fitted(self) -> None:
        self.fits_left = max(1, self.fits_left - 1)

    def cap(self, member: Any, model: Any) -> None:
        """Caps the model's rounds at those the member's first cut fit reached, if one was cut."""
        if member in self.rounds:
            model.set_params(n_estimators=min(model.get_params()["n_estimators"], self.rounds[member]))

    def guard(self, member: Any, stopping: Any = None) -> "TimeShare | None":
        """A callback that ends the member's next fit at its share of the time left; None without a deadline, or
        once a fit of the member was cut (its rounds are capped instead)."""
        if self.deadline is None or member in self.rounds:
            return None
        now = time.monotonic()
        end = now + max(0.0, self.deadline - now) / self.fits_left
        return TimeShare(end, stopping, lambda rounds: self.rounds.setdefault(member, rounds))


class TimeShare:
    """A LightGBM callback: past `end`, the fit stops, keeping the best round early stopping found, if it runs,
    and tells `cut` how many rounds it kept."""

    order = 40  # after LightGBM's early stopping (30), so that its best round includes this one
    before_iteration = False

    def __init__(self, end: float, stopping: Any, cut: Callable[[int], object]) -> None:
        self.end, self.stopping, self.cut = end, stopping, cut

    def __call__(self, env: Any) -> None:
        if env.iteration == env.begin_iteration or time.monotonic() < self.end:
            return  # at least one round, whatever the time
        from lightgbm.callback import EarlyStopException

        best = getattr(self.stopping, "best_iter", None)
        if best:  # LightGBM's early stopping runs: predict from its best round so far
            self.cut(best[0] + 1)
            raise EarlyStopException(best[0], self.stopping.best_score_list[0])
        self.cut(env.iteration + 1)
        raise EarlyStopException(env.iteration, env.evaluation_result_list or [])


def held_out_rows(y: np.ndarray, classes: bool, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit rows, held-out rows): a random share held out, without the classes the fit rows lack (a class the model
    never saw cannot be scored)."""
    held = np.random.default_rng(seed).random(len(y)) < HELD_OUT_SHARE
    fit_rows, held_rows = np.flatnonzero(~held), np.flatnonzero(held)
    if classes:  # against the classes, not every fit row: on string labels `isin` compares them pairwise
        held_rows = held_rows[np.isin(y[held_rows], np.unique(y[fit_rows]))]
    return fit_rows, held_rows
