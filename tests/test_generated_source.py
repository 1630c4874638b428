"""No untrusted string reaches Python source: a rendered script compiles to the same code whatever names the
competition's files or a model gave it, and a recipe outside the search space is never rendered."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_k.competition import Competition, TaskType
from agent_k.competition.research import CVScheme, TimeStructure
from agent_k.ml.literals import NotALiteral, in_docstring, literal
from agent_k.ml.prior import render_prior
from agent_k.ml.recipes import Ensemble, ModelFamily, Recipe
from agent_k.ml.render import render_solution
from agent_k.ml.search import DEFAULTS, InvalidRecipe, check_recipe

HOSTILE = [
    'user_k"""\n__import__("builtins").print("INJECTED")\n"""',
    "x'''\nimport os; os.system('id')\n'''",
    "a\\",
    "\\N{",
    "col\x00umn",
    "\u2028line\u2029separator\r\n",
    "\ud800lone surrogate",
    "é ü 日本 \U0001f600",
    "}{$summary $$ ${library}",
    "a" * 5000,
    "# comment\n",
    "),\n    Member(weight=1.0, model=__import__('os')),\n",
]
NAMES = st.one_of(st.sampled_from(HOSTILE), st.text(min_size=1, max_size=60))
COLUMNS = 9
"""Names a competition and a recipe carry here: id, target, two classes, five feature columns."""


def _shape(source: str) -> str:
    """The script's code with every string constant blanked: two scripts that differ only in their data have
    the same shape."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree, include_attributes=False)


def _render(names: list[str]) -> tuple[str, str]:
    """A recipe of every feature operation and a forecast CV, over a competition whose every name is from
    `names`; its solution and its prior."""
    id_column, target, first, second, *columns = names
    competition = Competition(
        id=names[4] + names[5],
        title=names[6],
        task=TaskType.binary,
        metric="accuracy",
        target=target,
        id_column=id_column,
        classes=[first, second],
    )
    time = TimeStructure(columns=[columns[0]], format="datetime", forecast=True, keys=[columns[1]], reason=columns[2])
    cv = CVScheme(kind="forward", n_folds=3, time=time, group_column=columns[3], reason=" ".join(names))
    recipe = Recipe(
        family=ModelFamily.lightgbm,
        params=dict(DEFAULTS[ModelFamily.lightgbm]),
        drop_columns=(columns[0],),
        log_columns=(columns[1],),
        frequency_columns=(columns[2],),
        target_columns=(columns[3],),
        ratio_columns=((columns[1], columns[4]),),
        date_columns=(columns[0],),
        text_columns=(columns[4],),
        text={"word": 2},
        native_categorical=True,
        seed=7,
    )
    blend = Ensemble(
        members=(recipe, recipe.model_copy(update={"family": ModelFamily.linear, "params": {}})), weights=(0.7, 0.3)
    )
    return render_solution(blend, competition, cv), render_prior(competition, cv)


BENIGN = _render([f"name{i}" for i in range(COLUMNS)])


@settings(max_examples=40, deadline=None)
@given(names=st.lists(NAMES, min_size=COLUMNS, max_size=COLUMNS, unique=True))
def test_a_rendered_script_is_the_same_code_whatever_the_names(names: list[str]) -> None:
    for hostile, benign in zip(_render(names), BENIGN, strict=True):
        compile(hostile, "solution.py", "exec")
        assert _shape(hostile) == _shape(benign)


@given(value=st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
))  # fmt: skip
def test_literal_evaluates_back_to_its_value(value: object) -> None:
    assert ast.literal_eval(literal(value)) == value


@given(text=st.text())
def test_docstring_text_evaluates_back_to_itself_on_one_line(text: str) -> None:
    escaped = in_docstring(text)
    assert "\n" not in escaped
    assert ast.literal_eval(f'"""{escaped}"""') == text


@pytest.mark.parametrize("value", [float("inf"), float("nan"), object(), {1: "a"}, b"bytes"])
def test_values_without_an_exact_literal_are_refused(value: object) -> None:
    with pytest.raises(NotALiteral):
        literal(value)


@pytest.mark.parametrize(
    ("update", "why"),
    [
        ({"params": {"n_estimators": 100, "x=1)\nimport os\n#": 1}}, "lightgbm has no parameter"),
        ({"params": {"n_estimators": "100"}}, "n_estimators must be an integer"),
        ({"params": {"n_estimators": 10**9}}, "n_estimators must be between 50 and 1500"),
        ({"params": {"learning_rate": float("nan")}}, "learning_rate must be between"),
        ({"params": {"num_leaves": True}}, "num_leaves must be an integer"),
        ({"text": {"analyzer": "char"}}, "no text setting 'analyzer'"),
        ({"seed": -1}, "seed must be between 0"),
        ({"drop_columns": ("not-a-column",)}, "no column 'not-a-column'"),
    ],
)
def test_a_recipe_outside_the_search_space_is_refused_in_one_line(update: dict[str, object], why: str) -> None:
    recipe = Recipe(family=ModelFamily.lightgbm, params=dict(DEFAULTS[ModelFamily.lightgbm])).model_copy(update=update)
    with pytest.raises(InvalidRecipe, match=why) as refused:
        check_recipe(recipe, columns=["a", "b"])
    assert "\n" not in str(refused.value)


def test_a_recipe_outside_the_search_space_is_never_rendered_whoever_built_it() -> None:
    """The search's own operators copy a parent's parameters: a hostile name that got into a recipe by any path
    stops at the renderer."""
    params = {**DEFAULTS[ModelFamily.lightgbm], "verbosity=-1)\n__import__('os').system('id')\n#": 1}
    competition = Competition(id="c", title="c", task=TaskType.regression, metric="rmse", target="y")
    with pytest.raises(InvalidRecipe, match="lightgbm has no parameter"):
        render_solution(
            Recipe(family=ModelFamily.lightgbm, params=params), competition, CVScheme(kind="kfold", n_folds=3)
        )
