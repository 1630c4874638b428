"""The model families' declarations (`agent_k.ml.families`): each one is whole, and the renderer, the search,
Research and the warm workers read them rather than lists of their own."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.ml.evaluate import CompetitionData, EvaluationRequest, evaluate
from agent_k.ml.families import (
    FAMILIES,
    LINEAR_CELLS,
    RETRIEVAL_CLASSES,
    SVM_ROWS,
    WARM_PRELOAD,
    DataTraits,
    ModelFamily,
    recommended,
)
from agent_k.ml.profiling import profile
from agent_k.ml.search import default_recipe
from agent_k.ml.search.space import SPACE, check_recipe
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import Limits


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
        assert spec.module not in WARM_PRELOAD and not spec.preload
    else:
        assert spec.module in WARM_PRELOAD, "a warm worker imports what the family's scripts import"


def test_research_orders_the_families_by_the_data() -> None:
    table = recommended(DataTraits(rows=1_000, numeric_only=True))
    assert table[:3] == [ModelFamily.lightgbm, ModelFamily.linear, ModelFamily.knn]
    text = recommended(DataTraits(rows=1_000, text=True))
    assert text[0] is ModelFamily.linear and ModelFamily.knn not in text and ModelFamily.naive not in text
    assert recommended(DataTraits(rows=50_000, numeric_only=True, forecast=True))[-1] is ModelFamily.naive
    assert ModelFamily.knn not in recommended(DataTraits(rows=50_000, numeric_only=True))
    classes = recommended(DataTraits(rows=1_000, numeric_only=True, classification=True))
    assert classes[:4] == [ModelFamily.lightgbm, ModelFamily.linear, ModelFamily.knn, ModelFamily.svm]
    assert ModelFamily.svm not in table, "its regression would need a scaled target"
    assert ModelFamily.svm not in recommended(DataTraits(rows=SVM_ROWS + 1, numeric_only=True, classification=True))
    assert ModelFamily.svm not in recommended(DataTraits(rows=1_000, classification=True)), "categories: the trees'"


def test_many_classes_lead_with_nearest_neighbours_and_leave_out_what_grows_with_them() -> None:
    """Past RETRIEVAL_CLASSES the retrieval head (k-NN on the embedding) comes first and boosting is left out; the
    linear model stays while rows times classes are within LINEAR_CELLS."""
    few = recommended(DataTraits(rows=900, media=True, classification=True, classes=RETRIEVAL_CLASSES))
    assert few[0] is ModelFamily.linear and ModelFamily.lightgbm in few
    many = recommended(DataTraits(rows=900, media=True, classification=True, classes=300))
    assert many[0] is ModelFamily.knn and ModelFamily.linear in many
    assert not {ModelFamily.lightgbm, ModelFamily.hist_gradient_boosting} & set(many)
    wide = recommended(DataTraits(rows=3_030, media=True, classification=True, classes=1_010))
    assert wide[0] is ModelFamily.knn and ModelFamily.linear not in wide and LINEAR_CELLS < 3_030 * 1_010


def test_a_kernel_machine_classifies_a_small_numeric_table_in_the_sandbox(home: Path, tmp_path: Path) -> None:
    """Wine (178 rows of 13 measurements, three cultivars): Research recommends the RBF support vector machine, and
    its candidate runs as any other, with each class's probability out of fold."""
    spec = LocalPlatform(home / "competitions").ensure("wine")
    public = home / "competitions" / "wine" / "public"
    findings = profile(spec, pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv"))
    assert ModelFamily.svm.value in findings.model_families
    data = CompetitionData.load(spec, public, findings.cv)
    result = asyncio.run(
        evaluate(EvaluationRequest(default_recipe(ModelFamily.svm), data, findings.cv, tmp_path, Limits(timeout_s=120)))
    )
    assert result.status == "succeeded" and result.cv_mean is not None and result.cv_mean > 0.9, result.error
    assert result.oof_path is not None
    probabilities = pd.read_csv(result.oof_path)[list(spec.classes or [])].to_numpy()
    assert probabilities.shape == (len(data.train_target), 3) and np.allclose(probabilities.sum(axis=1), 1.0)
