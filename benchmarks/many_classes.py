"""A mission on many classes: an image competition shaped like MLE-bench's iNaturalist 2019 (`train2019.json` and
`test2019.json`, COCO-style; `train_val2019/<group>/<category>/<hash>.jpg`, `test2019/<hash>.jpg`; a sample
`id,predicted`), with N categories (1,010 by default, iNaturalist's count) of a few images each, entered and
run as an MLE-bench agent runs (`agent-k run --data DIR --out FILE`), its submission scored against the held-back
answers by top-1 classification error, beside the error of always predicting the commonest class.

Each category is a colour and a place in the frame, on noise (a network's embedding tells them apart, not
perfectly): the point is that a label space past the old 200-class cap is entered, searched and submitted within
its budget, and how well.

    python benchmarks/many_classes.py [--classes 1010] [--per-class 4] [--budget 180]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

SIZE = 48


def _picture(path: Path, category: int, rng: np.random.Generator) -> None:
    """The category's colour in the category's quarter-size square, jittered, on noise."""
    own = np.random.default_rng(category)
    colour, (top, left) = own.integers(0, 256, 3), own.integers(0, SIZE // 2, 2)
    pixels = rng.integers(0, 60, (SIZE, SIZE, 3))
    top, left = np.clip(np.array([top, left]) + rng.integers(-2, 3, 2), 0, SIZE // 2).tolist()
    pixels[top : top + SIZE // 2, left : left + SIZE // 2] = np.clip(colour + rng.integers(-12, 13, 3), 0, 255)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels.astype(np.uint8)).save(path, quality=92)


def build(folder: Path, classes: int, per_class: int, rng: np.random.Generator) -> pd.DataFrame:
    """The competition's public folder; returns the answers (`id`, `predicted`)."""
    images: dict[str, list[dict[str, object]]] = {"train": [], "test": []}
    annotations, answers = [], []
    for category in range(classes):
        for shot in range(per_class):
            number, digest = category * per_class + shot, rng.bytes(16).hex()
            side = "test" if shot == per_class - 1 else "train"
            name = f"test2019/{digest}.jpg" if side == "test" else f"train_val2019/Plants/{category}/{digest}.jpg"
            images[side].append({"id": number, "file_name": name, "width": SIZE, "height": SIZE, "license": 0})
            if side == "train":
                annotations.append({"id": number, "image_id": number, "category_id": category})
            else:
                answers.append({"id": number, "predicted": category})
            _picture(folder / name, category, rng)
    kinds = [{"id": c, "name": str(c), "kingdom": "Plantae"} for c in range(classes)]
    train = {"annotations": annotations, "categories": kinds, "images": images["train"], "info": {}, "licenses": []}
    (folder / "train2019.json").write_text(json.dumps(train))
    (folder / "test2019.json").write_text(json.dumps({"images": images["test"], "info": {}, "licenses": []}))
    truth = pd.DataFrame(answers)
    truth.assign(predicted=7).to_csv(folder / "kaggle_sample_submission.csv", index=False)
    (folder / "description.md").write_text("## Evaluation\n\nSubmissions are scored by top-1 classification error.\n")
    return truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=1010)
    parser.add_argument("--per-class", type=int, default=4)
    parser.add_argument("--budget", type=float, default=180.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder, out = Path(scratch, "public"), Path(scratch, "submission.csv")
        truth = build(folder, args.classes, args.per_class, np.random.default_rng(0))
        agent_k = Path(sys.executable).with_name("agent-k")
        env = {**os.environ, "AGENT_K_HOME": str(Path(scratch, "home"))}
        started = time.monotonic()
        command = [str(agent_k), "run", "--data", str(folder), "--out", str(out), "--json"]
        command += ["--time-budget", str(args.budget)]
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        elapsed = time.monotonic() - started
        if result.returncode != 0:
            sys.exit(f"the mission failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
        summary = json.loads(result.stdout.splitlines()[-1])
        submitted = pd.read_csv(out).set_index("id").loc[truth["id"]]
        error = float((submitted["predicted"].to_numpy() != truth["predicted"].to_numpy()).mean())
        print(json.dumps({
            "classes": args.classes, "train_images": args.classes * (args.per_class - 1), "test_images": len(truth),
            "budget_s": args.budget, "wall_s": round(elapsed, 1), "status": summary.get("status"),
            "mission_s": summary.get("elapsed_s"), "cv_error": summary.get("cv_score"), "error": round(error, 4),
            "error_of_the_commonest_class": round(1 - 1 / args.classes, 4),
        }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
