"""Render a recipe into a readable, standalone `solution.py` (it never imports agent_k).

Nothing that came from a competition's files or a model is pasted into its source: column names, classes,
reasons and summaries arrive as literals (`literal`) or as docstring text (`in_docstring`), and a recipe is
checked against the search space (`check_recipe`) before a single line is written, so its parameter names are
ours (docs/security.md, "What reaches a generated script").

The metrics, decision rules, folds, forecasting and text features a solution needs are copied into it from
their own modules' source (`LIBRARY`): the script cross-validates with the very folds the mission scores and
labels by the very rules it fits, and still runs alone on plain CSVs.
"""

from __future__ import annotations

import ast
from functools import cache
from importlib import resources
from string import Template

from agent_k.competition import Competition, metric_scoring
from agent_k.competition.research import CVScheme
from agent_k.media.kinds import media_kind
from agent_k.ml.families import early_stopping_rows
from agent_k.ml.literals import in_docstring, literal
from agent_k.ml.recipes import Ensemble, ParamValue, Recipe
from agent_k.ml.search.space import check_recipe

LIBRARY = (
    ("agent_k.competition", "levels.py"),
    ("agent_k.competition", "metric_kernels.py"),
    ("agent_k.competition", "decision.py"),
    ("agent_k.competition", "timing.py"),
    ("agent_k.ml", "folds.py"),
    ("agent_k.ml", "forecasting.py"),
    ("agent_k.ml", "textfeatures.py"),
    ("agent_k.ml", "mixing.py"),
    ("agent_k.ml", "rounds.py"),
)
"""Modules of NumPy, pandas and scikit-learn only, copied into every solution in this order."""
PRIOR_LIBRARY = (
    ("agent_k.competition", "levels.py"),
    ("agent_k.competition", "timing.py"),
    ("agent_k.ml", "folds.py"),
    ("agent_k.ml", "training_prior.py"),
)
"""What the training prior's script holds: its folds, and the prior itself."""

MEDIA_FEATURES = {"train": "media_features_train.parquet", "test": "media_features_test.parquet"}
"""A media competition's features of each table's rows (their ids typed as that table's), written once per mission
into its data folder (`agent_k.ml.featurise`)."""
MEDIA_PIXELS = {"train": "media_pixels_train.npy", "test": "media_pixels_test.npy"}
"""Each table's pixels (uint8, channels first), in the rows' order of its features, where networks train on them
(`agent_k.ml.featurise.keeps_pixels`)."""


def refits(cv: CVScheme) -> bool:
    """Whether a solution fits its models once more on all rows for its submission, instead of averaging its fold
    models' test predictions: only a forecast, whose forward folds' models never saw the latest rows. Elsewhere
    the fold models' average is as good (docs/benchmarks.md, "Refit or fold average") and costs no further fit,
    and a blend of solutions then needs no fit at all: it averages their test predictions."""
    return cv.kind == "forward"


@cache
def _template() -> Template:
    return Template(resources.files("agent_k.ml").joinpath("templates/solution.py.tmpl").read_text(encoding="utf-8"))


@cache
def library(modules: tuple[tuple[str, str], ...] = LIBRARY) -> str:
    """The library modules' code, without their docstrings and their imports of each other."""
    parts = []
    for package, name in modules:
        source = resources.files(package).joinpath(name).read_text(encoding="utf-8")
        tree = ast.parse(source)
        first = tree.body[1].lineno if isinstance(tree.body[0], ast.Expr) else tree.body[0].lineno
        lines = source.splitlines()[first - 1 :]
        kept = [line for line in lines if not line.startswith(("from agent_k", "from __future__"))]
        parts.append(
            f"# ---- {name}, from AGENT-K's {package.rsplit('.', 1)[-1]} package\n" + "\n".join(kept).strip() + "\n"
        )
    return "\n\n".join(parts)


def source_of(module: str) -> tuple[str, str]:
    """(package, file name) of a module of ours, as `library` reads it."""
    package, name = module.rsplit(".", 1)
    return package, f"{name}.py"


def _model_expression(recipe: Recipe, regression: bool) -> tuple[str, str]:
    """(the estimator's import, or "" where its module is copied into the script; its constructor call)."""
    spec = recipe.family.spec
    name = spec.regressor if regression else spec.classifier
    params: dict[str, ParamValue] = dict(recipe.params)
    if spec.arguments is not None:
        params = spec.arguments(params, regression, bool(recipe.text_columns))
    arguments = [f"{k}={literal(v)}" for k, v in sorted(params.items())]
    for fixed in (spec.fixed, "" if regression else spec.classifier_fixed):
        if fixed:
            arguments.append(fixed if recipe.seed is None else fixed.replace("SEED", str(recipe.seed)))
    imported = "" if spec.copied else f"from {spec.module} import {name}"
    return imported, f"{name}({', '.join(arguments)})"


def _member(recipe: Recipe, weight: float, regression: bool) -> str:
    """One `Member(...)` entry, naming only the options this recipe sets."""
    spec = recipe.family.spec
    if spec.model_free:
        return f"    Member(weight={literal(weight)}, naive={literal(recipe.params.get('method', 'seasonal'))}),"
    _, model = _model_expression(recipe, regression)
    if len(model) > 90:  # one argument per line
        name, arguments = model[:-1].split("(", 1)
        model = f"{name}(\n" + "".join(f"            {a},\n" for a in arguments.split(", ")) + "        )"
    fields = [f"weight={literal(weight)}", f"model={model}"]
    if spec.scaled:
        fields.append("scaled=True")
    if spec.pixels:
        fields.append("pixels=True")
    if spec.handles_missing:
        fields.append("impute=False")
    if spec.stops_early:
        fields.append("stops_early=True")
    for name in ("drop_columns", "log_columns", "frequency_columns", "target_columns", "ratio_columns", "date_columns"):
        values = getattr(recipe, name)
        if values:
            fields.append(f"{name}={literal(list(values))}")
    if recipe.log_target and regression:
        fields.append("log_target=True")
    if recipe.native_categorical and spec.native_categorical:
        fields.append("native_categorical=True")
    if recipe.text_columns:
        fields.append(f"text_columns={literal(list(recipe.text_columns))}")
        if recipe.text:
            fields.append(f"text={literal(dict(sorted(recipe.text.items())))}")
        if spec.reads_sparse_text:
            fields.append("sparse_text=True")
    if recipe.relative != "none" and regression:
        fields.append(f"relative={literal(recipe.relative)}")
    return "    Member(\n" + "".join(f"        {f},\n" for f in fields) + "    ),"


def competition_constants(competition: Competition, cv: CVScheme) -> dict[str, str]:
    """What every rendered script is told of the competition: the embedded library, the target and id columns,
    the task and what a submission row holds, the classes, the folds and (a forecast) the rows' time."""
    return {
        "competition_id": in_docstring(competition.id),
        "library": library(),
        "targets": literal(competition.target_columns),
        "id_column": literal(competition.id_column),
        "task": literal(competition.task.value),
        "prediction": literal(competition.prediction.value),
        "classes": literal(competition.classes),
        "top_k": literal(competition.top_k or 1),
        "folds": literal(cv.plan()),
        "group_column": literal(cv.group_column),
        "time": literal(cv.time.spec() if cv.kind == "forward" and cv.time else None),
        "seed": literal(cv.seed),
        "media": literal(
            {
                "column": m.column,
                "kind": m.kind,
                "features": MEDIA_FEATURES,
                "pixels": MEDIA_PIXELS,
                "pixel_kind": getattr(media_kind(m.kind).pixels, "value", None),
            }
            if (m := competition.media)
            else None
        ),
    }


def render_solution(solution: Recipe | Ensemble, competition: Competition, cv: CVScheme) -> str:
    """The script of a recipe or a blend; `InvalidRecipe` (or `NotALiteral`) when a member lies outside the search
    space or holds a value no literal can carry."""
    regression = competition.task.is_regression
    if isinstance(solution, Ensemble):
        members = list(zip(solution.members, solution.weights, strict=True))
        summary = f"Ensemble: {solution.summary()}"
    else:
        members, summary = [(solution, 1.0)], f"Recipe: {solution.summary()}"
    for recipe, _ in members:
        check_recipe(recipe)
    models = [recipe for recipe, _ in members if not recipe.family.spec.model_free]
    imports = sorted({line for recipe in models if (line := _model_expression(recipe, regression)[0])})
    copied = tuple(dict.fromkeys(source_of(r.family.spec.module) for r in models if r.family.spec.copied))
    return _template().substitute(
        **competition_constants(competition, cv) | ({"library": library(LIBRARY + copied)} if copied else {}),
        summary=in_docstring(summary),
        validation=in_docstring(f"{cv.n_folds} {cv.kind} folds" + (f": {cv.reason}" if cv.reason else "")),
        refit=literal(refits(cv)),
        early_stopping_rows=literal(early_stopping_rows(regression)),
        model_imports="\n".join(imports),
        class_values=literal(metric_scoring.class_values(competition)),
        metric=literal(competition.metric),
        fitted_rule=literal(competition.scored_by.fitted_rule),
        non_negative=literal(competition.scored_by.non_negative),
        boosting_eval=literal(competition.scored_by.boosting_eval),
        members="\n".join(_member(recipe, weight, regression) for recipe, weight in members),
        stack=literal(solution.stacker.model_dump() if isinstance(solution, Ensemble) and solution.stacker else None),
    )
