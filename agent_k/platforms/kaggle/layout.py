"""A Kaggle competition's files in our layout: train.csv, test.csv, sample_submission.csv, description.md and
competition.json, the same public folder the local platform hands a mission.

Kaggle does not say which column is the target, so it is read off the files (`agent_k.platforms.layouts`): the
sample submission's first column is the id and the rest is what to predict; the train file (or its labels file)
holds those columns with the answers. Kaggle's metric is named in prose; it maps onto ours, and a competition
scored by a metric we cannot compute the same way is refused, saying which metric it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_k.competition import Competition, TaskType
from agent_k.competition.metric_names import metric_from_name, top_k_from_name
from agent_k.competition.models import MEDIA_FOLDER, MediaSpec
from agent_k.competition.registry import metric_named
from agent_k.platforms.base import PlatformError
from agent_k.platforms.layouts import LayoutError, arrange_folder
from agent_k.platforms.targets import CompetitionInputError, infer_task, sample_submission


class UnsupportedCompetition(PlatformError):
    """The competition's metric or file layout is not one a mission can work with."""


def tag_names(meta: dict[str, Any]) -> list[str]:
    """Kaggle's tags are `ApiCategory` objects; we keep their names."""
    return [str(t.get("name", "")) if isinstance(t, dict) else str(t) for t in meta.get("tags") or []]


def task_hint(metric: str) -> TaskType:
    """A listing's best guess before the files are read (Kaggle's metadata has no task)."""
    return metric_named(metric).usual_task


def arrange(meta: dict[str, Any], slug: str, raw: Path, public: Path) -> Competition:
    """Write `public/` from the extracted files and return the competition they describe."""
    named_metric = str(meta.get("evaluationMetric", ""))
    metric = metric_from_name(named_metric)
    if metric is None:
        shown = named_metric or "no metric Kaggle names"
        raise UnsupportedCompetition(f"'{slug}' is scored by '{shown}', which AGENT-K cannot compute the same way")
    declared = metric_named(metric)
    try:
        arranged = arrange_folder(raw, slug, scratch=raw.with_name("unzipped"))
        task, classes = infer_task(arranged.train, arranged.targets, metric)
    except LayoutError as exc:
        raise UnsupportedCompetition(str(exc)) from None
    except CompetitionInputError as exc:
        raise UnsupportedCompetition(f"'{slug}': {exc}") from None
    if arranged.row_keys:
        raise UnsupportedCompetition(f"'{slug}': its submissions repeat the test columns {arranged.row_keys} "
                                     "instead of an id, a format AGENT-K does not submit to Kaggle")  # fmt: skip
    if arranged.classes is not None:
        classes = arranged.classes
        several = declared.kernel_of_classes is not None  # scored on the class matrix, whatever its width
        task = TaskType.binary if len(classes) == 2 and not several else TaskType.multiclass
    if declared.scored_on == "labels" and arranged.classes is not None:
        raise UnsupportedCompetition(f"'{slug}': {metric} scores labels, but the submission wants one column per class")
    spec = Competition(
        id=slug,
        title=str(meta.get("title") or slug),
        description=str(meta.get("description") or ""),
        task=task,
        metric=metric,
        target=arranged.targets[0],
        targets=arranged.targets if len(arranged.targets) > 1 else None,
        id_column=arranged.id_column,
        classes=classes,
        top_k=(top_k_from_name(named_metric) or 3) if declared.top_k else None,
        n_train=len(arranged.train),
        n_test=len(arranged.test),
        n_features=len([c for c in arranged.test.columns if c != arranged.id_column]),
        train_only=arranged.train_only,
        media=MediaSpec(kind=arranged.media) if arranged.media else None,
        source="kaggle",
        tags=tag_names(meta),
        url=f"https://www.kaggle.com/competitions/{slug}",
        max_daily_submissions=meta.get("maxDailySubmissions") or None,
    )
    if spec.prediction_columns != [str(c) for c in arranged.sample.columns[1:]]:
        raise UnsupportedCompetition(
            f"'{slug}': the sample submission's columns {list(arranged.sample.columns)} are not what {metric} "
            f"scores ({[spec.id_column, *spec.prediction_columns]})"
        )
    public.mkdir(parents=True)
    arranged.train.to_csv(public / "train.csv", index=False)
    arranged.test.to_csv(public / "test.csv", index=False)
    sample_submission(spec, arranged.test, arranged.train).to_csv(public / "sample_submission.csv", index=False)
    for relative, source in arranged.files.items():  # moved: the download's folder is deleted next
        (public / MEDIA_FOLDER / relative).parent.mkdir(parents=True, exist_ok=True)
        source.rename(public / MEDIA_FOLDER / relative)
    notes = "".join(f"- {note}\n" for note in arranged.notes)
    layout = f"\n## How AGENT-K read the files\n{notes}" if notes else ""
    (public / "description.md").write_text(f"# {spec.title}\n\n{spec.description}\n\nMetric: {named_metric}\n{layout}")
    (public / "competition.json").write_text(spec.model_dump_json(indent=2))
    return spec
