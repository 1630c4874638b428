"""Our metric for a metric as others name it: Kaggle's `evaluationMetric`, an MLE-bench grader's name, or the
Evaluation section of a competition's description. Each declaration lists its Kaggle names (`Metric.kaggle`);
a name that holds one of them but means something else (weighted, another family) names none of ours."""

from __future__ import annotations

import re

from agent_k.competition.registry import declared_metrics

_UNSCORABLE = (
    "weighted mean absolute",
    "weighted rmse",
    "weighted log",
    "weighted multi label",
    "multi label log",
    "log mean absolute",
    "log of the mean absolute",
    "weighted auc",
    "laplace",
    "mean f1",
    "probabilistic",
    "dice",
    "iou",
    "intersection over union",
    "jaccard",
    "bleu",
    "levenshtein",
    "word error",
    "crps",
    "custom",
)
"""Names that contain one of ours but mean something else: per-row weights we do not have, other families."""
_OTHER_FAMILIES = ("iou", "intersection over union", "dice", "jaccard", "bleu", "levenshtein", "word error")
"""What scores boxes, masks or text: a description that grades by one of these means its metric's name (a "mean
average precision") is not ours, whatever it is called."""

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MAP_AT = re.compile(r"\bmap[\s_-]*(?:@|at)[\s_-]*(\d+)", re.IGNORECASE)


def _normal(text: str) -> str:
    """Lower case, `-`, `_` and emphasis as spaces, a link as its words, one space between words, `MAP-at-5` as
    `map@5`."""
    text = _LINK.sub(lambda found: found.group(1), text).replace("*", " ")
    text = _MAP_AT.sub(lambda found: f"map@{found.group(1)}", text)
    return " ".join(text.lower().replace("_", " ").replace("-", " ").split())


def _word(words: str, *, closed: bool = True) -> str:
    """A pattern for `words` standing alone (not inside a longer word); `closed=False`: open at its end."""
    return rf"(?<![a-z0-9]){re.escape(words)}" + (r"(?![a-z0-9])" if closed else "")


def _unscorable(text: str) -> bool:
    """The text (normalised) names a metric that holds one of ours but is not it."""
    return any(re.search(_word(words), text) for words in _UNSCORABLE)


def _mentions(text: str) -> list[tuple[int, int, str]]:
    """Where each declared metric's names occur in `text` (normalised): start, end, metric."""
    found = []
    for metric in declared_metrics():
        for alias in {_normal(name) for name in metric.kaggle}:
            pattern = _word(alias, closed=alias[-1].isalnum())  # `map@` is followed by its k
            found += [(m.start(), m.end(), metric.name) for m in re.finditer(pattern, text)]
    return found


def metric_from_name(name: str) -> str | None:
    """Our metric for a metric's name (Kaggle's `evaluationMetric`, an MLE-bench grader's `name`): the one whose
    name is the longest found in it; None when we cannot score it the same way."""
    text = _normal(name)
    if _unscorable(text):
        return None
    found = _mentions(text)
    return max(found, key=lambda m: (m[1] - m[0], m[2]))[2] if found else None


def top_k_from_name(name: str) -> int | None:
    """MAP@k's k, as Kaggle and MLE-bench write it (`MAP@5`, `map-at-5`, `Mean Average Precision @ 3`)."""
    match = re.search(r"@\s*(\d+)", _normal(name))
    return int(match.group(1)) if match else None


def evaluation_section(markdown: str) -> str:
    """The Evaluation section of a competition's description (its heading and what follows, up to the next
    heading of the same level or above); the whole text when there is none."""
    heading = re.search(r"^(#{1,6})[\s*_]*evaluation\b.*$", markdown, re.IGNORECASE | re.MULTILINE)
    if heading is None:
        return markdown
    level = len(heading.group(1))
    rest = markdown[heading.end() :]
    following = re.search(rf"^#{{1,{level}}}\s", rest, re.MULTILINE)
    return rest[: following.start()] if following else rest


def metrics_in_description(markdown: str) -> list[str]:
    """The metrics a description's Evaluation section names, each once, in order of first mention; a name inside
    a longer one counts only as the longer (`AUC` in `mean column-wise AUC`). Empty when it names something we
    cannot score the same way, or nothing of ours."""
    text = _normal(evaluation_section(markdown))
    if _unscorable(text):
        return []
    found = _mentions(text)
    outer = [m for m in found if not any(o[0] <= m[0] and m[1] <= o[1] and o != m for o in found)]
    said = {name: {text[start:end] for start, end, other in outer if other == name} for _, _, name in outer}
    return [  # a metric named only by words inside another's name (`F1` beside `macro F1`) is that one
        name
        for name in dict.fromkeys(name for _, _, name in sorted(outer))
        if not any(o != name and all(any(w in longer for longer in said[o]) for w in said[name]) for o in said)
    ]


def other_family(markdown: str) -> str | None:
    """The family of metrics for boxes, masks or text that a description's Evaluation section grades by, if any."""
    text = _normal(evaluation_section(markdown))
    return next((w for w in _OTHER_FAMILIES if re.search(_word(w), text)), None)
