"""A hyperparameter's range (`Param`) or options (`Choice`): how the search samples and perturbs it, and how a
recipe's value is checked against it before anything is rendered."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

ParamValue = int | float | str


class InvalidRecipe(ValueError):
    """A recipe outside the search space; the message says what, in one line."""


@dataclass(frozen=True)
class Param:
    low: float
    high: float
    log: bool = False
    integer: bool = False

    def sample(self, rng: random.Random) -> ParamValue:
        if self.log:
            value = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        else:
            value = rng.uniform(self.low, self.high)
        return round(value) if self.integer else round(value, 6)

    def perturb(self, current: ParamValue, rng: random.Random, scale: float = 0.3) -> ParamValue:
        assert isinstance(current, int | float)
        if self.log:
            value = math.exp(math.log(max(float(current), self.low)) + rng.gauss(0, scale * 1.5))
        else:
            value = float(current) + rng.gauss(0, scale * (self.high - self.low))
        value = min(self.high, max(self.low, value))
        return round(value) if self.integer else round(value, 6)

    def check(self, name: str, value: ParamValue) -> None:
        """`InvalidRecipe` unless `value` is a number of this parameter's kind within its range."""
        if isinstance(value, bool) or not isinstance(value, int | float) or (self.integer and isinstance(value, float)):
            kind = "an integer" if self.integer else "a number"
            raise InvalidRecipe(f"{name} must be {kind}, got {shown(value)}")
        if not (math.isfinite(value) and self.low <= value <= self.high):
            raise InvalidRecipe(f"{name} must be between {self.low:g} and {self.high:g}, got {shown(value)}")


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]

    def sample(self, rng: random.Random) -> ParamValue:
        return rng.choice(self.options)

    def perturb(self, current: ParamValue, rng: random.Random, scale: float = 0.3) -> ParamValue:
        return rng.choice(self.options)

    def check(self, name: str, value: ParamValue) -> None:
        if not isinstance(value, str) or value not in self.options:
            raise InvalidRecipe(f"{name} must be one of {', '.join(self.options)}, got {shown(value)}")


def shown(value: object) -> str:
    """A value as a reason may quote it: its repr, cut short (a hostile name can be very long)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
