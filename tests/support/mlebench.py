"""Small folders shaped like the public folders of MLE-bench's competitions (openai/mle-bench,
`mlebench/competitions/<slug>/prepare.py`): the same file names, columns, value types and quirks, with a few
hundred synthetic rows whose target the features explain, so a mission can learn it.

Each maker writes one folder and returns how a user would add it (`--metric`, `--target` where the files do not
say) and what the arranged tables must hold. The makers live by what their rows hold: `mlebench_tables`
(numbers and categories) and `mlebench_text` (free text); `mlebench_base` holds what they share.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tests.support.mlebench_base import Shape
from tests.support.mlebench_tables import (
    champs_scalar_coupling,
    leaf_classification,
    new_york_city_taxi_fare_prediction,
    nomad2018_predict_transparent_conductors,
    playground_series_s3e18,
    ranzcr_clip_tables,
    spaceship_titanic,
    statoil_iceberg_classifier_challenge,
    tabular_playground_series_dec_2021,
    tabular_playground_series_may_2022,
)
from tests.support.mlebench_text import (
    detecting_insults_in_social_commentary,
    google_quest_challenge,
    jigsaw_toxic_comment_classification_challenge,
    jigsaw_unintended_bias,
    learning_agency_lab_automated_essay_scoring_2,
    lmsys_chatbot_arena,
    random_acts_of_pizza,
    spooky_author_identification,
    us_patent_phrase_to_phrase_matching,
)

MAKERS: dict[str, Callable[[Path, np.random.Generator], Shape]] = {
    "spaceship-titanic": spaceship_titanic,
    "random-acts-of-pizza": random_acts_of_pizza,
    "new-york-city-taxi-fare-prediction": new_york_city_taxi_fare_prediction,
    "detecting-insults-in-social-commentary": detecting_insults_in_social_commentary,
    "leaf-classification": leaf_classification,
    "playground-series-s3e18": playground_series_s3e18,
    "lmsys-chatbot-arena": lmsys_chatbot_arena,
    "jigsaw-unintended-bias-in-toxicity-classification": jigsaw_unintended_bias,
    "champs-scalar-coupling": champs_scalar_coupling,
    "ranzcr-clip-catheter-line-classification": ranzcr_clip_tables,
    "spooky-author-identification": spooky_author_identification,
    "tabular-playground-series-dec-2021": tabular_playground_series_dec_2021,
    "tabular-playground-series-may-2022": tabular_playground_series_may_2022,
    "jigsaw-toxic-comment-classification-challenge": jigsaw_toxic_comment_classification_challenge,
    "nomad2018-predict-transparent-conductors": nomad2018_predict_transparent_conductors,
    "learning-agency-lab-automated-essay-scoring-2": learning_agency_lab_automated_essay_scoring_2,
    "us-patent-phrase-to-phrase-matching": us_patent_phrase_to_phrase_matching,
    "google-quest-challenge": google_quest_challenge,
    "statoil-iceberg-classifier-challenge": statoil_iceberg_classifier_challenge,
}


__all__ = [
    "MAKERS",
    "Shape",
    "champs_scalar_coupling",
    "detecting_insults_in_social_commentary",
    "google_quest_challenge",
    "jigsaw_toxic_comment_classification_challenge",
    "jigsaw_unintended_bias",
    "leaf_classification",
    "learning_agency_lab_automated_essay_scoring_2",
    "lmsys_chatbot_arena",
    "new_york_city_taxi_fare_prediction",
    "nomad2018_predict_transparent_conductors",
    "playground_series_s3e18",
    "random_acts_of_pizza",
    "ranzcr_clip_tables",
    "spaceship_titanic",
    "spooky_author_identification",
    "statoil_iceberg_classifier_challenge",
    "tabular_playground_series_dec_2021",
    "tabular_playground_series_may_2022",
    "us_patent_phrase_to_phrase_matching",
]
