"""Small folders shaped like the public folders of MLE-bench's image and audio competitions (openai/mle-bench,
`mlebench/competitions/<slug>/prepare.py`): the same file and folder names, the same columns, ids with or
without the extension, a few dozen real image and sound files of the formats those competitions ship (and
the 16-bit, grayscale and transparent ones others do). Each class looks (or sounds) different, so a model can
learn it. Each maker returns what the arranged tables must hold. The makers live by kind (`mlebench_images`,
`mlebench_signals`: sounds and arrays); `media_files` writes the files and holds what they share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tests.support.media_files import MediaShape, dicom, picture
from tests.support.mlebench_images import (
    DISEASES,
    aerial_cactus_identification,
    aptos2019_blindness_detection,
    cassava_leaf_disease_classification,
    dog_breed_identification,
    dogs_vs_cats_redux_kernels_edition,
    histopathologic_cancer_detection,
    iwildcam_2019_fgvc6,
    leaf_classification,
    petfinder_pawpularity_score,
    plant_pathology_2020_fgvc7,
    plant_pathology_2021_fgvc8,
    plant_seedlings_classification,
    siim_isic_melanoma_classification,
    whale_categorization_playground,
)
from tests.support.mlebench_labels import (
    alaska2_image_steganalysis,
    herbarium_2020_fgvc7,
    herbarium_2021_fgvc8,
    herbarium_2022_fgvc9,
    inaturalist_2019_fgvc6,
    iwildcam_2020_fgvc7,
)
from tests.support.mlebench_signals import (
    TAGS,
    freesound_audio_tagging_2019,
    seti_breakthrough_listen,
    tensorflow_speech_recognition_challenge,
    the_icml_2013_whale_challenge_right_whale_redux,
)

MAKERS: dict[str, Callable[[Path, np.random.Generator], MediaShape]] = {
    "aerial-cactus-identification": aerial_cactus_identification,
    "histopathologic-cancer-detection": histopathologic_cancer_detection,
    "plant-seedlings-classification": plant_seedlings_classification,
    "dog-breed-identification": dog_breed_identification,
    "leaf-classification": leaf_classification,
    "siim-isic-melanoma-classification": siim_isic_melanoma_classification,
    "petfinder-pawpularity-score": petfinder_pawpularity_score,
    "plant-pathology-2020-fgvc7": plant_pathology_2020_fgvc7,
    "tensorflow-speech-recognition-challenge": tensorflow_speech_recognition_challenge,
    "iwildcam-2019-fgvc6": iwildcam_2019_fgvc6,
    "whale-categorization-playground": whale_categorization_playground,
    "dogs-vs-cats-redux-kernels-edition": dogs_vs_cats_redux_kernels_edition,
    "the-icml-2013-whale-challenge-right-whale-redux": the_icml_2013_whale_challenge_right_whale_redux,
    "aptos2019-blindness-detection": aptos2019_blindness_detection,
    "cassava-leaf-disease-classification": cassava_leaf_disease_classification,
    "freesound-audio-tagging-2019": freesound_audio_tagging_2019,
    "plant-pathology-2021-fgvc8": plant_pathology_2021_fgvc8,
    "seti-breakthrough-listen": seti_breakthrough_listen,
    "iwildcam-2020-fgvc7": iwildcam_2020_fgvc7,
    "herbarium-2020-fgvc7": herbarium_2020_fgvc7,
    "herbarium-2021-fgvc8": herbarium_2021_fgvc8,
    "herbarium-2022-fgvc9": herbarium_2022_fgvc9,
    "inaturalist-2019-fgvc6": inaturalist_2019_fgvc6,
    "alaska2-image-steganalysis": alaska2_image_steganalysis,
}


__all__ = [
    "DISEASES",
    "MAKERS",
    "TAGS",
    "MediaShape",
    "aerial_cactus_identification",
    "aptos2019_blindness_detection",
    "cassava_leaf_disease_classification",
    "dicom",
    "dog_breed_identification",
    "dogs_vs_cats_redux_kernels_edition",
    "freesound_audio_tagging_2019",
    "histopathologic_cancer_detection",
    "iwildcam_2019_fgvc6",
    "leaf_classification",
    "petfinder_pawpularity_score",
    "picture",
    "plant_pathology_2020_fgvc7",
    "plant_pathology_2021_fgvc8",
    "plant_seedlings_classification",
    "seti_breakthrough_listen",
    "siim_isic_melanoma_classification",
    "tensorflow_speech_recognition_challenge",
    "the_icml_2013_whale_challenge_right_whale_redux",
    "whale_categorization_playground",
]
