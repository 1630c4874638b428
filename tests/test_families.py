"""The model families' declarations (`agent_k.ml.families`): each one is whole, and the renderer, the search,
Research and the warm workers read them rather than lists of their own."""

from __future__ import annotations

import importlib

import pytest

from agent_k.ml.families import FAMILIES, DataTraits, ModelFamily, recommended
from agent_k.ml.sandbox.warm import PRELOAD
from agent_k.ml.search import default_recipe
from agent_k.ml.search.space import SPACE, check_recipe


@pytest.mark.parametrize("family", list(ModelFamily))
def test_each_family_is_declared_whole(family: ModelFamily) -> None:
    spec = FAMILIES[family]
    assert check_recipe(default_recipe(family)) and check_recipe(default_recipe(family, text_columns=("t",)))
    assert SPACE[family] is spec.space
    if spec.model_free:
        return
    module = importlib.import_module(spec.module)
    assert callable(getattr(module, spec.classifier)) and callable(getattr(module, spec.regressor))
    if spec.copied:  # its source goes into the script: torch stays out of the warm workers
        assert spec.module not in PRELOAD and not spec.preload
    else:
        assert spec.module in PRELOAD, "a warm worker imports what the family's scripts import"


def test_research_orders_the_families_by_the_data() -> None:
    table = recommended(DataTraits(rows=1_000, numeric_only=True))
    assert table[:3] == [ModelFamily.lightgbm, ModelFamily.linear, ModelFamily.knn]
    text = recommended(DataTraits(rows=1_000, text=True))
    assert text[0] is ModelFamily.linear and ModelFamily.knn not in text and ModelFamily.naive not in text
    assert recommended(DataTraits(rows=50_000, numeric_only=True, forecast=True))[-1] is ModelFamily.naive
    assert ModelFamily.knn not in recommended(DataTraits(rows=50_000, numeric_only=True))
