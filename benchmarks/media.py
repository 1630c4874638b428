"""Media competitions: the mission against the practitioner's baselines, and featurisation throughput and memory.

1. Every media built-in at a budget (120 s by default): the mission through the real CLI (`agent-k run --json`),
   against the board's reference entries, all scored on the hidden private rows:
   - the strong baseline: the pretrained network's embeddings (EfficientNet-Lite0, 128 px) with a logistic
     regression (ridge, alpha chosen by CV, for regression); for audio, MFCC statistics with a logistic
     regression;
   - the weak one: colour histograms (audio: the spectrum's shape) with LightGBM.
2. Featurisation as a mission runs it (sandboxed jobs of 512 files, two at a time) on a competition of N images
   (20,000 by default, 64-pixel crops of scikit-image's photographs): images a second at 128 px without the
   mirror pass, median of several runs, and the peak memory of the whole process tree (this process, the
   sandboxes and their jobs), sampled every 50 ms.

    pip install -e '.[media]'
    python benchmarks/media.py [--budget 120] [--competitions NAME...] [--images 20000] [--runs 3] [--skip-missions]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

import psutil
from ml_quality import ratio, run_mission

from agent_k.competition import Competition
from agent_k.ml.featurise import FeaturePlan, featurise
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.board import read_board
from agent_k.platforms.local.user_files import UserTables
from agent_k.sandbox import Limits

MEDIA_BUILTINS = ("digits-images", "photo-zoom", "synth-sounds")
STRONG = {
    "image": ("reference/embeddings-224px-logistic", "reference/embeddings-224px-ridge"),
    "audio": ("reference/mfcc-logistic",),
}
WEAK = {"image": ("reference/colour-histogram-lightgbm",), "audio": ("reference/spectral-shape-lightgbm",)}


def board(home: Path, competition: str) -> dict[str, float]:
    entries = read_board(home / "competitions" / competition / "private" / "leaderboard.json")
    return {e.team: float(e.private_score) for e in entries if e.private_score is not None}


def missions(home: Path, budget: float, competitions: list[str]) -> list[dict[str, object]]:
    rows = []
    platform = LocalPlatform(home / "competitions")
    for competition in competitions:
        spec = platform.ensure(competition)
        assert spec.media is not None
        scores = board(home, competition)
        strong = next(scores[t] for t in STRONG[spec.media.kind] if t in scores)
        weak = next(scores[t] for t in WEAK[spec.media.kind] if t in scores)
        private, elapsed, candidates = run_mission(home, competition, budget)
        rows.append({
            "competition": competition, "metric": spec.metric, "mission": round(private, 4),
            "strong": round(strong, 4), "weak": round(weak, 4),
            "vs_strong": round(ratio(private, strong, spec.maximize), 3), "elapsed_s": elapsed,
            "within_budget": elapsed <= budget * 1.10, "candidates": candidates,
        })  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    return rows


def many_images(home: Path, count: int) -> Competition:
    """A user-added competition of `count` 64-pixel crops (the zoom built-in's maker, scaled up), half of them
    test rows without labels (so no reference models are fitted)."""
    from agent_k.platforms.local import media_datasets

    media_datasets.ZOOM_ROWS = count
    scratch = Path(tempfile.mkdtemp(dir=home))
    table = media_datasets.photo_zoom(scratch)
    half = len(table) // 2
    tables = UserTables(
        train=table.iloc[:half], test=table.iloc[half:].drop(columns="crop_px"), targets=["crop_px"],
        id_column="id", source="benchmark", media="image", files={path: scratch / path for path in table["path"]},
    )  # fmt: skip
    metric: str = "rmse"
    return LocalPlatform(home / "competitions").add(f"images-{count}", tables, metric=metric)


class TreePeak:
    """The largest resident memory of this process and all its descendants together, sampled."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(0.05):
            total = 0
            for process in (me, *me.children(recursive=True)):
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    continue
            self.peak_mb = max(self.peak_mb, total / 2**20)

    def __enter__(self) -> TreePeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def throughput(home: Path, count: int, runs: int) -> dict[str, object]:
    spec = many_images(home, count)
    public = home / "competitions" / spec.id / "public"

    async def nothing(done: int, total: int) -> None:
        return None

    rates, peaks = [], []
    for run in range(runs):
        work = Path(tempfile.mkdtemp(dir=home))
        data = work / "data"
        shutil.copytree(public, data)
        with TreePeak() as peak:
            started = time.perf_counter()
            asyncio.run(featurise(spec, data, work / "features", FeaturePlan(128, flip=False), Limits(timeout_s=900),
                                  models=home / "models", progress=nothing, parallel=2))  # fmt: skip
            seconds = time.perf_counter() - started
        rates.append(count / seconds)
        peaks.append(peak.peak_mb)
        print(json.dumps({"run": run, "images_per_s": round(rates[-1], 1), "peak_mb": round(peak.peak_mb)}), flush=True)
        shutil.rmtree(work)
    return {"images": count, "images_per_s_median": round(statistics.median(rates), 1),
            "peak_mb_median": round(statistics.median(peaks)), "runs": runs}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--images", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--competitions", nargs="*", choices=MEDIA_BUILTINS, default=list(MEDIA_BUILTINS))
    parser.add_argument("--skip-missions", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--home", type=Path, help="keep everything here (default: a temp dir)")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="agent-k-media-"))
    os.environ["AGENT_K_HOME"] = str(home)
    result: dict[str, object] = {}
    if not args.skip_missions:
        result["missions"] = missions(home, args.budget, args.competitions)
    if not args.skip_throughput:
        result["featurisation"] = throughput(home, args.images, args.runs)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
