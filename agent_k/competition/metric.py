"""What AGENT-K knows about a metric, declared once (docs/architecture.md, "Metrics").

A `Metric` holds every fact the code acts on: which way is better, what a submission's rows hold, its kernel, its
bounds, the constant it rewards, how Kaggle names it. The rest of the code asks the declaration, never the name:
`competition.scored_by.non_negative`, never a test of the name. The built-in metrics are the rows of
`agent_k.competition.metric_table`; `agent_k.competition.registry` knows them, and `declare` adds one more (a
plug-in, a test's toy metric).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar

from agent_k.competition.kinds import TaskType

ScoredOn = Literal["values", "probabilities", "labels", "ranked"]
"""What the metric compares with the truth: numbers (regression), probabilities (or scores) of classes or 0/1
columns, predicted labels, or ranked label lists (MAP@k)."""
Constant = Literal["mean", "median", "log-mean"]
Item = TypeVar("Item")


MANY_CLASSES = 5000
"""The most classes a candidate's dense probability matrix (a column per class, out of fold and on the test rows)
is kept for: the cap of the metrics that read only the most probable classes (docs/benchmarks.md, "Many
classes")."""


@dataclass(frozen=True, kw_only=True)
class Metric:
    name: str
    maximize: bool
    scored_on: ScoredOn
    kernel: Callable[..., float]
    """values: kernel(y, predictions); probabilities: kernel(0/1 truth, P(1)) of one column; labels:
    kernel(codes, predicted codes, number of classes); ranked: kernel(actual lists, predicted lists, k)."""
    usual_task: TaskType
    """The task a competition scored by this metric most often is, before its files are read."""
    kernel_of_classes: Callable[..., float] | None = None
    """probabilities over more than two classes: kernel(codes, matrix); None: scored for two classes only."""
    two_classes: bool = False
    """Defined for two classes only (a probability metric without `kernel_of_classes` is, too)."""
    columns_averaged: bool = False
    """The mean of the kernel over several 0/1 target columns (a multi-label task)."""
    pooled: bool = False
    """Scores several 0/1 target columns at once, its kernel reading the whole matrix (lwlrap ranks a row's labels
    against each other), not column by column."""
    over_columns: str | None = None
    """The metric this one is where a submission has several 0/1 columns to score: Kaggle's "AUC" over several
    labels is the mean column-wise AUC (ranzcr-clip, jigsaw-toxic, mlsp-2013-birds)."""
    fitted_rule: bool = False
    """labels: labels come by a rule fitted on out-of-fold probabilities (`decision`), not by the argmax."""
    row_share: bool = False
    """labels: the score is the share of rows labelled right (accuracy), so one row moves it by 1/n: two scores
    that close are equal on the evidence (`agent_k.mission.final_pick`)."""
    ordinal: bool = False
    """labels: the classes must be numbers in order; the fitted rule cuts the expected class value."""
    non_negative: bool = False
    """Defined for non-negative values only: a target with a negative value is refused, and predictions are
    clipped at 0 (a negative submission value refused)."""
    non_negative_target: bool = False
    """The target must not be negative (the metric divides by it), though predictions may be."""
    log_scale: bool = False
    """Errors are measured on log(1 + y): models learn the logs."""
    boosting_eval: str | None = None
    """LightGBM's own name for this metric, watched by early stopping on a binary task instead of the log loss
    (which stops long before a ranking stops improving)."""
    constant: Constant = "mean"
    """The constant prediction the metric rewards most (a regression prior)."""
    top_k: bool = False
    """A submission row holds up to k ranked labels."""
    max_classes: int = 200
    """More classes than this and a classification target is refused: 200 where a rule is fitted per class or a
    probability per class is submitted, MANY_CLASSES where the most probable class or a ranked list is."""
    kaggle: tuple[str, ...] = ()
    """How Kaggle's `evaluationMetric`, MLE-bench's grader names and descriptions name it (matched as whole words,
    case, `-` and `_` aside, the longest winning: `competition/metric_names.py`)."""
    perfect: float | None = None
    """The best score there is (1 for AUC, 0 for an error), if the metric has one: a search whose CV reaches it
    has nothing left to improve."""

    @property
    def regression(self) -> bool:
        return self.scored_on == "values"

    @property
    def only_two_classes(self) -> bool:
        """A classification target must have exactly two classes."""
        several = self.scored_on != "probabilities" or self.kernel_of_classes is not None or self.multilabel
        return self.two_classes or not several

    @property
    def multilabel(self) -> bool:
        """Scores several 0/1 target columns (a multi-label task), column by column or all at once."""
        return self.columns_averaged or self.pooled

    def better(self, a: float, b: float) -> bool:
        """True when score `a` beats score `b`."""
        return a > b if self.maximize else a < b

    def is_perfect(self, score: float | None) -> bool:
        return self.perfect is not None and score is not None and math.isclose(score, self.perfect, abs_tol=1e-12)

    def rank_key(self, score: float | None) -> float:
        """A sort key that puts the best score first and a missing one last."""
        if score is None or math.isnan(score):
            return math.inf
        return -score if self.maximize else score

    def ranked(self, items: Iterable[Item], score: Callable[[Item], float | None]) -> list[Item]:
        """`items`, best score first (missing scores last; ties keep their order)."""
        return sorted(items, key=lambda item: self.rank_key(score(item)))

    def best(self, scores: Iterable[float]) -> float:
        return min(scores, key=self.rank_key)
