"""Folders shaped like the public folders of MLE-bench's competitions whose rows carry free text (`tests/support/
mlebench.py` lists every maker)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from tests.support.mlebench_base import ROWS, TEST_SHARE, Shape, split, write_csv


def random_acts_of_pizza(folder: Path, rng: np.random.Generator) -> Shape:
    """JSON records; the training records carry fields known only after the request ("..._at_retrieval", the
    giver, the flair), and the target is a JSON boolean; zipped copies of both files lie beside them."""
    n = ROWS
    received = rng.random(n) < 0.3
    words = np.where(received, "please grateful family", "want pizza now")
    records = [
        {
            "request_id": f"t3_{i:05x}",
            "request_title": f"[Request] {w}",
            "request_text_edit_aware": f"{w} story {i % 11}",
            "requester_account_age_in_days_at_request": float(rng.gamma(2.0, 100.0)),
            "requester_number_of_posts_at_request": int(rng.integers(0, 50)),
            "requester_subreddits_at_request": ["pizza", "food"][: int(rng.integers(0, 3))],
            "unix_timestamp_of_request": 1.3e9 + i * 1000.0,
            "requester_username": f"user{i}",
            "giver_username_if_known": "N/A" if not r else f"giver{i}",
            "number_of_upvotes_of_request_at_retrieval": int(rng.integers(0, 30)),
            "request_number_of_comments_at_retrieval": int(rng.integers(0, 20)) + 5 * int(r),
            "requester_user_flair": "shroom" if r else None,
            "post_was_edited": bool(rng.random() < 0.1),
            "requester_received_pizza": bool(r),
        }
        for i, (w, r) in enumerate(zip(words, received, strict=True))
    ]
    test_fields = [k for k in records[0] if not k.endswith("_at_retrieval")]
    test_fields = [k for k in test_fields if k not in ("giver_username_if_known", "requester_user_flair",
                                                       "post_was_edited", "requester_received_pizza")]  # fmt: skip
    is_test = rng.random(n) < TEST_SHARE
    train = [r for r, t in zip(records, is_test, strict=True) if not t]
    test = [{k: r[k] for k in test_fields} for r, t in zip(records, is_test, strict=True) if t]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.json").write_text(json.dumps(train, indent=4))
    (folder / "test.json").write_text(json.dumps(test, indent=4))
    shutil.make_archive(str(folder / "train"), "zip", folder, "train.json")
    shutil.make_archive(str(folder / "test"), "zip", folder, "test.json")
    sample = pd.DataFrame({"request_id": [r["request_id"] for r in test], "requester_received_pizza": 0})
    write_csv(sample, folder / "sampleSubmission.csv")
    train_only = ("giver_username_if_known", "requester_user_flair", "post_was_edited",
                  "number_of_upvotes_of_request_at_retrieval", "request_number_of_comments_at_retrieval")  # fmt: skip
    return Shape("auc", ("requester_received_pizza",), not_features=train_only, n_test=len(test), notes=("only",))


def detecting_insults_in_social_commentary(folder: Path, rng: np.random.Generator) -> Shape:
    """No id anywhere: the sample submission (`sample_submission_null.csv`) is Insult, Date, Comment, its rows
    those of the test file."""
    n = ROWS
    insult = rng.random(n) < 0.3
    comments = [f'"you are {"an idiot" if x else "right"} about {i}"' for i, x in enumerate(insult)]
    dates = [f"2012061{i % 10}{i % 24:02d}0000Z" if i % 5 else "" for i in range(n)]
    frame = pd.DataFrame({"Insult": insult.astype(int), "Date": dates, "Comment": comments})
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="Insult"), folder / "test.csv")
    write_csv(test.assign(Insult=0), folder / "sample_submission_null.csv")
    return Shape("auc", ("Insult",), n_test=len(test))


def lmsys_chatbot_arena(folder: Path, rng: np.random.Generator) -> Shape:
    """The models' names are in train.csv only; the outcome is three one-hot columns."""
    n = ROWS
    winner = rng.integers(0, 3, n)
    frame = pd.DataFrame({
        "id": rng.choice(10**8, n, replace=False),
        "model_a": rng.choice(["gpt-4", "llama-2"], n), "model_b": rng.choice(["claude-2", "vicuna"], n),
        "prompt": [f'["question {i}"]' for i in range(n)],
        "response_a": [f'["{"long detailed answer " * (3 if w == 0 else 1)}"]' for w in winner],
        "response_b": [f'["{"long detailed answer " * (3 if w == 1 else 1)}"]' for w in winner],
        "winner_model_a": (winner == 0).astype(int), "winner_model_b": (winner == 1).astype(int),
        "winner_tie": (winner == 2).astype(int),
    })  # fmt: skip
    train, test = split(frame, rng)
    outcome = ["winner_model_a", "winner_model_b", "winner_tie"]
    write_csv(train, folder / "train.csv")
    write_csv(test[["id", "prompt", "response_a", "response_b"]], folder / "test.csv")
    write_csv(test[["id"]].assign(**dict.fromkeys(outcome, 1 / 3)), folder / "sample_submission.csv")
    return Shape("logloss", ("label",), not_features=("model_a", "model_b"), n_test=len(test))


def jigsaw_unintended_bias(folder: Path, rng: np.random.Generator) -> Shape:
    """`target` and some forty annotation columns in train.csv only; the sample asks for `prediction`."""
    n = ROWS
    toxic = rng.random(n)
    comments = [("you fool " if t > 0.5 else "thanks ") + f"note {i}" for i, t in enumerate(toxic)]
    frame = pd.DataFrame({"id": range(7_000_000, 7_000_000 + n), "target": toxic.round(3), "comment_text": comments})
    for column in ("severe_toxicity", "obscene", "identity_attack", "insult", "threat", "asian", "atheist",
                   "created_date", "publication_id", "rating", "funny", "wow", "toxicity_annotator_count"):  # fmt: skip
        frame[column] = rng.random(n).round(3)
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test[["id", "comment_text"]], folder / "test.csv")
    write_csv(test[["id"]].assign(prediction=0.0), folder / "sample_submission.csv")
    not_features = ("severe_toxicity", "insult", "rating")
    return Shape("rmse", ("prediction",), target_option=("target",), not_features=not_features, n_test=len(test))


def spooky_author_identification(folder: Path, rng: np.random.Generator) -> Shape:
    """`id,text,author` (ids like `id26305`); the sample wants one probability column per author (EAP, HPL, MWS),
    filled with Kaggle's arbitrary values."""
    authors = ["EAP", "HPL", "MWS"]
    words = {"EAP": "raven midnight dreary", "HPL": "eldritch cyclopean abyss", "MWS": "creature misery wretch"}
    n = ROWS
    author = rng.choice(authors, n)
    frame = pd.DataFrame({
        "id": [f"id{i:05d}" for i in rng.choice(30_000, n, replace=False)],
        "text": [f"It was {words[a].split()[i % 3]} and the night {i}." for i, a in enumerate(author)],
        "author": author,
    })  # fmt: skip
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="author"), folder / "test.csv")
    arbitrary = {"EAP": 0.403493538995863, "HPL": 0.287808366106543, "MWS": 0.308698094897594}
    write_csv(test[["id"]].assign(**arbitrary), folder / "sample_submission.csv")
    return Shape("logloss", ("author",), n_test=len(test))


TOXIC = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def jigsaw_toxic_comment_classification_challenge(folder: Path, rng: np.random.Generator) -> Shape:
    """`id,comment_text` and six 0/1 labels in train.csv (hex ids); test.csv is Kaggle's own test; the sample
    asks for the six columns at 0.5. MLE-bench grades it with "auc-roc": their mean column-wise AUC."""
    n = ROWS
    rude = rng.random(n) < 0.3
    frame = pd.DataFrame({
        "id": [rng.bytes(8).hex() for _ in range(n)],
        "comment_text": [("you idiot, " if r else "thanks for the edit, ") + f"see talk page {i}"
                         for i, r in enumerate(rude)],
    })  # fmt: skip
    for k, label in enumerate(TOXIC):
        frame[label] = (rude & (rng.random(n) < 0.9 - 0.1 * k)).astype(int)
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test[["id", "comment_text"]], folder / "test.csv")
    write_csv(test[["id"]].assign(**dict.fromkeys(TOXIC, 0.5)), folder / "sample_submission.csv")
    return Shape("mean_auc", tuple(TOXIC), n_test=len(test))


def learning_agency_lab_automated_essay_scoring_2(folder: Path, rng: np.random.Generator) -> Shape:
    """`essay_id,full_text,score` (scores 1..6, hex ids); the sample is `essay_id,score` at 3. Quadratic weighted
    kappa."""
    n = ROWS
    score = rng.integers(1, 7, n)
    frame = pd.DataFrame({
        "essay_id": [rng.bytes(4).hex()[:7] for _ in range(n)],
        "full_text": [" ".join(["because evidence shows"] * int(s) + [f"essay {i}"]) for i, s in enumerate(score)],
        "score": score,
    })  # fmt: skip
    frame = frame.drop_duplicates("essay_id")
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="score"), folder / "test.csv")
    write_csv(test[["essay_id"]].assign(score=3), folder / "sample_submission.csv")
    return Shape("qwk", ("score",), n_test=len(test))


def us_patent_phrase_to_phrase_matching(folder: Path, rng: np.random.Generator) -> Shape:
    """`id,anchor,target,context,score`: two phrases, a CPC context code and their similarity in quarters; the
    sample is `id,score` at 0. Pearson's correlation."""
    n = ROWS
    anchors = ["abatement", "acid absorption", "adjustable cup", "wire guide", "optical sensor"]
    anchor = rng.choice(anchors, n)
    same = rng.integers(0, 5, n)
    frame = pd.DataFrame({
        "id": [rng.bytes(8).hex() for _ in range(n)], "anchor": anchor,
        "target": [f"{a}{' variant' * (4 - s)} {i}" for i, (a, s) in enumerate(zip(anchor, same, strict=True))],
        "context": rng.choice(["A47", "B01", "F16", "G01", "H04"], n), "score": same / 4,
    })  # fmt: skip
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="score"), folder / "test.csv")
    write_csv(test[["id"]].assign(score=0), folder / "sample_submission.csv")
    return Shape("pearson", ("score",), n_test=len(test))


QUEST = [f"question_{name}" for name in ("asker_intent_understanding", "body_critical", "conversational",
                                         "fact_seeking", "type_spelling", "well_written")]  # fmt: skip
QUEST += [f"answer_{name}" for name in ("helpful", "plausible", "relevance", "well_written")]


def google_quest_challenge(folder: Path, rng: np.random.Generator) -> Shape:
    """`qa_id`, question and answer texts with their users and hosts, and raters' fractions as targets (30 in the
    real one; ten here, `question_type_spelling` almost always 0); the sample fills each target column with a
    rising 0..1 so that Spearman's coefficient is defined. Mean column-wise Spearman."""
    n = ROWS
    quality = rng.random(n)
    frame = pd.DataFrame({
        "qa_id": rng.choice(10_000, n, replace=False),
        "question_title": [f"How do I {'configure' if q > 0.5 else 'fix'} thing {i}?" for i, q in enumerate(quality)],
        "question_body": [("A clear detailed question " if q > 0.5 else "help ") * 3 for q in quality],
        "question_user_name": [f"user{i % 40}" for i in range(n)],
        "answer": [("Step one, step two, then verify. " if q > 0.4 else "no idea ") * 2 for q in quality],
        "category": rng.choice(["TECHNOLOGY", "STACKOVERFLOW", "CULTURE", "SCIENCE", "LIFE_ARTS"], n),
        "host": rng.choice(["superuser.com", "stackoverflow.com", "english.stackexchange.com"], n),
    })  # fmt: skip
    for k, column in enumerate(QUEST):
        raw = quality * (0.5 + 0.05 * k) + rng.normal(0, 0.1, n)
        frame[column] = (np.clip(raw, 0, 1) * 3).round() / 3
    frame["question_type_spelling"] = (rng.random(n) < 0.03).astype(float) / 3
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns=QUEST), folder / "test.csv")
    rising = np.linspace(0, 1, len(test))
    write_csv(test[["qa_id"]].assign(**{c: rising for c in QUEST}), folder / "sample_submission.csv")
    return Shape("spearman", tuple(QUEST), n_test=len(test))
