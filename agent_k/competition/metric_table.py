"""The built-in metrics, one row each (`agent_k.competition.metric`); their kernels are in `metric_kernels`."""

from __future__ import annotations

from functools import partial

from agent_k.competition import metric_kernels
from agent_k.competition.kinds import TaskType
from agent_k.competition.metric import MANY_CLASSES, Metric

_error = partial(Metric, scored_on="values", usual_task=TaskType.regression, maximize=False, perfect=0.0)
_labels = partial(Metric, scored_on="labels", usual_task=TaskType.multiclass, maximize=True, perfect=1.0)

BUILTIN_METRICS: tuple[Metric, ...] = (
    Metric(
        name="auc", perfect=1.0, maximize=True, scored_on="probabilities", usual_task=TaskType.binary,
        kernel=metric_kernels.auc, kernel_of_classes=metric_kernels.macro_auc, boosting_eval="auc",
        kaggle=("area under", "auc"), over_columns="mean_auc",
    ),
    Metric(
        name="logloss", perfect=0.0, maximize=False, scored_on="probabilities", usual_task=TaskType.multiclass,
        kernel=metric_kernels.binary_logloss, kernel_of_classes=metric_kernels.logloss,
        kaggle=("log loss", "logloss", "logarithmic loss", "multiclass loss"), over_columns="mean_logloss",
    ),
    Metric(
        name="gini", perfect=1.0, maximize=True, scored_on="probabilities", usual_task=TaskType.binary,
        kernel=metric_kernels.gini, two_classes=True,
        kaggle=("normalized gini", "gini"),
    ),
    Metric(
        name="mean_auc", perfect=1.0, maximize=True, scored_on="probabilities", usual_task=TaskType.multilabel,
        kernel=metric_kernels.auc, columns_averaged=True,
        kaggle=("mean columnwise auc", "mean column-wise auc", "column-wise mean auc", "columnwise roc auc",
                "column-wise roc auc"),
    ),
    Metric(
        name="f1_sets", perfect=1.0, maximize=True, scored_on="probabilities", usual_task=TaskType.multilabel,
        kernel=metric_kernels.f1_sets, pooled=True,
        kaggle=("micro f1 over sets",),
    ),
    Metric(
        name="lwlrap", perfect=1.0, maximize=True, scored_on="probabilities", usual_task=TaskType.multilabel,
        kernel=metric_kernels.lwlrap, pooled=True,
        kaggle=("label weighted label ranking average precision", "lwlrap", "label ranking average precision"),
    ),
    Metric(
        name="mean_logloss", perfect=0.0, maximize=False, scored_on="probabilities", usual_task=TaskType.multilabel,
        kernel=metric_kernels.binary_logloss, columns_averaged=True,
        kaggle=("mean columnwise log loss", "mean column-wise log loss"),
    ),
    _error(name="rmse", kernel=metric_kernels.rmse,
        kaggle=("root mean squared error", "root mean square error", "rmse", "mean columnwise root mean squared",
                "mcrmse"),
    ),
    _error(name="mae", kernel=metric_kernels.mae, constant="median",
           kaggle=("mean absolute error", "mae")),
    _error(name="medae", kernel=metric_kernels.medae, constant="median", kaggle=("median absolute error",)),
    _error(name="rmsle", kernel=metric_kernels.rmsle, non_negative=True, log_scale=True, constant="log-mean",
        kaggle=("root mean squared logarithmic error", "root mean squared log error", "rmsle"),
    ),
    _error(name="mape", kernel=metric_kernels.mape, non_negative_target=True, constant="median",
        kaggle=("mean absolute percentage error", "mape"),
    ),
    _error(name="smape", kernel=metric_kernels.smape, constant="median",
           kaggle=("symmetric mean absolute percentage", "smape")),
    Metric(
        name="r2", perfect=1.0, maximize=True, scored_on="values", usual_task=TaskType.regression,
        kernel=metric_kernels.r2,
        kaggle=("coefficient of determination", "r2", "r^2"),
    ),
    Metric(
        name="pearson", perfect=1.0, maximize=True, scored_on="values", usual_task=TaskType.regression,
        kernel=metric_kernels.pearson,
        kaggle=("pearson correlation", "pearson"),
    ),
    Metric(
        name="spearman", perfect=1.0, maximize=True, scored_on="values", usual_task=TaskType.regression,
        kernel=metric_kernels.spearman,
        kaggle=("spearman", "spearman's rank correlation"),
    ),
    _labels(name="accuracy", kernel=metric_kernels.accuracy, row_share=True, max_classes=MANY_CLASSES,
            kaggle=("accuracy", "categorization accuracy")),
    Metric(
        name="error_rate", perfect=0.0, maximize=False, scored_on="labels", usual_task=TaskType.multiclass,
        kernel=metric_kernels.error, row_share=True, max_classes=MANY_CLASSES,
        kaggle=("classification error", "error rate", "misclassification rate"),
    ),
    _labels(name="f1_micro", kernel=metric_kernels.f1_micro, row_share=True, max_classes=MANY_CLASSES,
           kaggle=("micro f1", "f1 micro", "micro-averaged f1", "micro averaged f1"), over_columns="f1_sets"),
    _labels(name="f1_macro", kernel=metric_kernels.f1_macro, fitted_rule=True,
           kaggle=("macro f1", "f1 macro", "macro-averaged f1", "macro f-score")),
    Metric(
        name="f1", perfect=1.0, maximize=True, scored_on="labels", usual_task=TaskType.binary, kernel=metric_kernels.f1,
        two_classes=True, fitted_rule=True, kaggle=("f1", "f-score", "f score"),
    ),
    _labels(name="mcc", kernel=metric_kernels.mcc, fitted_rule=True, kaggle=("matthews correlation", "mcc")),
    _labels(name="balanced_accuracy", kernel=metric_kernels.balanced_accuracy, fitted_rule=True,
           kaggle=("balanced accuracy",)),
    _labels(name="qwk", kernel=metric_kernels.qwk, fitted_rule=True, ordinal=True,
        kaggle=("quadratic weighted kappa", "quadratic kappa", "qwk", "cohen kappa"),
    ),
    Metric(
        name="map_at_k", perfect=1.0, maximize=True, scored_on="ranked", usual_task=TaskType.multiclass,
        kernel=metric_kernels.map_at_k, top_k=True, max_classes=MANY_CLASSES,
        kaggle=("map@", "mean average precision"),
    ),
)  # fmt: skip
