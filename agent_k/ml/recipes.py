"""What a candidate is: a typed recipe, a blend of recipes, an agent's script or the training prior; each with a
stable key."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from agent_k.ml.families import ModelFamily as ModelFamily  # re-exported: a recipe names its family
from agent_k.ml.params import ParamValue as ParamValue


class Recipe(BaseModel):
    """One candidate solution: what to drop, how to model, and with which hyperparameters."""

    model_config = ConfigDict(frozen=True)

    family: ModelFamily
    params: dict[str, ParamValue] = Field(default_factory=dict)
    drop_columns: tuple[str, ...] = ()
    log_target: bool = False
    log_columns: tuple[str, ...] = ()
    """Skewed numeric columns replaced by sign(x)·log(1 + |x|)."""
    frequency_columns: tuple[str, ...] = ()
    """Categorical columns that also get a feature: how often their value occurs in train and test."""
    ratio_columns: tuple[tuple[str, str], ...] = ()
    """(numerator, denominator) pairs of positive numeric columns that become a new feature."""
    date_columns: tuple[str, ...] = ()
    """Date columns replaced by their year, month, day, weekday, hour and days since 1970."""
    target_columns: tuple[str, ...] = ()
    """Categorical columns that also get an out-of-fold target encoding (fitted inside each fold)."""
    native_categorical: bool = False
    """LightGBM only: split on the categories themselves rather than on their ordinal codes."""
    seed: int | None = None
    """The model's random seed, when not the solution's own; seeds of the best recipe are blended."""
    text_columns: tuple[str, ...] = ()
    """Free-text columns: TF-IDF read by a linear model, or a stacked text model, SVD and statistics for trees."""
    text: dict[str, ParamValue] = Field(default_factory=dict)
    """Text settings beyond the defaults: n-gram lengths, min_df, vocabulary size, SVD components, C."""
    relative: Literal["none", "difference", "ratio"] = "none"
    """A forecast's target relative to its series' level, so trees can follow a trend past the training dates."""

    @property
    def key(self) -> str:
        """Stable identity: the same recipe always gets the same key, so evaluation is idempotent.
        Default fields are left out, so adding an optional field never changes existing keys."""
        canonical = json.dumps(self.model_dump(mode="json", exclude_defaults=True), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @property
    def feature_set(self) -> str:
        operations = (
            ("log", self.log_columns),
            ("frequency", self.frequency_columns),
            ("target", self.target_columns),
            ("ratio", self.ratio_columns),
            ("native", self.native_categorical and self.family.spec.native_categorical),
            ("text", bool(self.text_columns)),
            ("relative", self.relative != "none"),
        )
        ops = [name for name, on in operations if on]
        return "+".join(ops) or "base"

    def without_seed(self) -> Recipe:
        return self.model_copy(update={"seed": None})

    @property
    def niche(self) -> tuple[ModelFamily, str]:
        """The MAP-Elites cell this recipe competes in: model family by feature set, and by target transform (a
        model of log(1 + y) wants its own rounds and leaves: at its first, untuned parameters it may trail the model
        of y it would beat once tuned)."""
        return self.family, self.feature_set + ("+log-target" if self.log_target else "")

    def summary(self) -> str:
        params = ", ".join(f"{k}={_short(v)}" for k, v in sorted(self.params.items()))
        extra = (" log-target" if self.log_target else "") + (f" seed={self.seed}" if self.seed is not None else "")
        extra += f" {self.relative}-to-level" if self.relative != "none" else ""
        features = "" if self.feature_set == "base" else f" [{self.feature_set}]"
        return f"{self.family.value}({params}){extra}{features}"


def _short(value: ParamValue) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class Stacker(BaseModel):
    """A linear model over a blend's member predictions (`agent_k.ml.stacking`): for classes, softmax of
    `coef @ log(probabilities) + intercept` (a row per class); for values, `coef @ values + intercept`."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["logistic", "linear"]
    coef: list[list[float]]
    intercept: list[float]


class Ensemble(BaseModel):
    """A blend of recipes: each member trains on its own features, and their predictions are averaged by weight, or
    mixed by a stacker fitted on their out-of-fold predictions."""

    model_config = ConfigDict(frozen=True)

    members: tuple[Recipe, ...] = Field(min_length=2)
    weights: tuple[float, ...]
    stacker: Stacker | None = None

    @model_validator(mode="after")
    def _one_weight_per_member(self) -> Ensemble:
        if len(self.weights) != len(self.members) or min(self.weights) <= 0:
            raise ValueError("an ensemble needs one positive weight per member")
        return self

    @property
    def key(self) -> str:
        """Stable identity; a blend without a stacker keeps the key it had before stackers existed."""
        payload = self.model_dump(mode="json")
        if self.stacker is None:
            del payload["stacker"]
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def summary(self) -> str:
        if self.stacker is not None:
            return "stack of " + " + ".join(m.family.value for m in self.members)
        total = sum(self.weights)
        parts = [f"{w / total:.2f} {m.family.value}" for m, w in zip(self.members, self.weights, strict=True)]
        return "blend of " + " + ".join(parts)


class Script(BaseModel):
    """A solution script written or edited by an agent. It is never trusted to cross-validate itself: our
    harness (`agent_k.ml.harness`) runs it on each fold with the held-out labels removed."""

    model_config = ConfigDict(frozen=True)

    source: str = Field(min_length=1, max_length=200_000)
    parent: str | None = None
    """The key of the candidate it was edited from."""
    note: str = Field(default="", max_length=300)

    @property
    def key(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def summary(self) -> str:
        return f"edited script{f' of {self.parent}' if self.parent else ''}: {self.note or 'no note'}"


class Prior(BaseModel):
    """The training prior: each class's frequency, or the target's mean (its median under MAE), fitted inside
    each fold. No model: the cheapest honest prediction, the baseline of last resort when the budget leaves no
    room for one. Evaluated in the runner's process in milliseconds (`agent_k.ml.prior`)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["prior"] = "prior"

    @property
    def key(self) -> str:
        return hashlib.sha256(b"training prior").hexdigest()[:16]

    def summary(self) -> str:
        return "training prior (no model)"


Solution = Recipe | Ensemble | Script | Prior
"""What a candidate is: one recipe, a blend of recipes, an agent's script, or the training prior."""


@cache
def _solution_adapter() -> TypeAdapter[Solution]:
    return TypeAdapter(Solution)


def load_solution(payload: str) -> Solution:
    """A solution from its archived JSON (the archive is re-read every generation: the adapter is built once)."""
    return _solution_adapter().validate_json(payload)
