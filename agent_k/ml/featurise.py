"""A media competition's features, computed once per mission (not per candidate) and checkpointed.

The files are decoded by a job in the sandbox (`templates/featurise.py.tmpl`), a chunk of rows at a time; each
finished chunk is kept in the mission's folder, so a resumed mission never redoes one. When every chunk is there,
they become `media_features.parquet` in the data folder, which every candidate joins on the row id, and the
chunks' reports become Research's profile of the files (formats, sizes, unreadable files, duplicates). Where the
images are small, or the files are sounds, or the pretrained network will be fine-tuned, each row's pixels (a
spectrogram for a sound) also go to the data folder, for the networks that train on them (`agent_k.media.cnn`)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition import Competition
from agent_k.competition.research import MediaProfile
from agent_k.media import installed
from agent_k.media.embedder import EMBEDDER, ExportFailed, exported
from agent_k.media.kinds import MediaKind, Pixels, media_kind
from agent_k.media.warmup import NUMBA_CACHE, compiled_kernels
from agent_k.ml.families import FINE_TUNE_BATCH, ModelFamily
from agent_k.ml.literals import in_docstring, literal
from agent_k.ml.render import MEDIA_FEATURES, MEDIA_PIXELS, library, source_of
from agent_k.ml.tables import unlocked
from agent_k.sandbox import Job, Limits, run_sandboxed

IMAGES_PER_SECOND = 170.0
"""EfficientNet-Lite0 at 128 px on two cores, decoding included (docs/benchmarks.md): the plan's yardstick."""
SIZES = ((160, True), (128, True), (128, False), (96, False), (64, False))
"""(pixels, mirrored) from the richest to the cheapest."""
PIXEL_SIDE = 64
"""Pixels a side of what a network trained from scratch reads (its candidates may shrink them further)."""
FINE_TUNE_SIDE = 128
"""Pixels a side kept where the pretrained network is fine-tuned."""
CPU_FINE_TUNE_IMAGES_PER_SECOND = 65.0
"""Images a second EfficientNet-Lite0 trains on at 128 px on two cores (docs/benchmarks.md)."""
FINE_TUNES_IN_BUDGET = 4
"""Without a GPU, fine-tuning is planned only where the budget holds this many fine-tuned candidates."""
SMALL_IMAGE_SIDE = 96
"""Images whose median longer side is at most this are small enough for a network trained from scratch; larger
photographs are better served by the pretrained embeddings alone."""
CHUNK_TIMEOUT_S = 600.0
OUTPUT_CAP = 256 * 1024 * 1024

Progress = Callable[[int, int], Awaitable[None]]
"""(files done, files in all), awaited after each chunk."""


class FeaturesFailed(Exception):
    """A chunk's job failed; the message says which and why, in one line."""


@dataclass(frozen=True)
class FeaturePlan:
    size: int
    """Pixels a side the network sees (0: no embeddings, as for audio)."""
    flip: bool
    fine_tune: bool = False
    """Images are kept at FINE_TUNE_SIDE for the pretrained network to be fine-tuned on them."""

    @property
    def pixels(self) -> int:
        """Pixels a side of each image kept (a sound's spectrogram is PIXEL_SIDE by its 64 mel bands)."""
        return FINE_TUNE_SIDE if self.fine_tune else PIXEL_SIDE

    def describe(self) -> str:
        if not self.size:
            return ""
        return f"{EMBEDDER} at {self.size} px" + (", averaged with the mirror image" if self.flip else "")


def plan_features(kind: str, files: int, seconds: float, *, budget_s: float = 0.0, gpu: bool = False) -> FeaturePlan:
    """The richest embedding that fits in `seconds` (160 px only where it takes under half of them); images kept
    for fine-tuning where a GPU is present or the mission's budget holds several fine-tunings on the CPU. None of
    it for a kind the picture network does not embed."""
    if not media_kind(kind).embeds:
        return FeaturePlan(0, False)
    fine_tune = gpu or budget_s >= FINE_TUNES_IN_BUDGET * _cpu_fine_tune_s()
    for size, flip in SIZES:
        cost = files * (size / 128) ** 2 * (2 if flip else 1) / IMAGES_PER_SECOND
        if cost <= (seconds / 2 if size > 128 else seconds):
            return FeaturePlan(size, flip, fine_tune)
    return FeaturePlan(*SIZES[-1], fine_tune=fine_tune)


def _cpu_fine_tune_s() -> float:
    """One fine-tuned candidate on the CPU at its defaults: five folds and a final fit."""
    spec = ModelFamily.finetuned.spec
    images = int(spec.defaults["steps"]) * FINE_TUNE_BATCH * (5 + 1)
    return images * (int(spec.defaults["size"]) / FINE_TUNE_SIDE) ** 2 / CPU_FINE_TUNE_IMAGES_PER_SECOND


def render_job(spec: Competition, plan: FeaturePlan, model: str | None) -> str:
    assert spec.media is not None
    reader = media_kind(spec.media.kind).reader
    assert reader is not None, "a competition's media kind has a reader (`MediaKindName`)"
    template = resources.files("agent_k.ml").joinpath("templates/featurise.py.tmpl").read_text(encoding="utf-8")
    return Template(template).substitute(
        competition_id=in_docstring(spec.id),
        library=library((source_of(reader),)),
        id_column=literal(spec.id_column),
        path_column=literal(spec.media.column),
        size=literal(plan.size or 128),
        flip=literal(plan.flip),
        model=literal(model),
        numba_cache=literal(NUMBA_CACHE),
        pixel_side=literal(plan.pixels),
    )


async def featurise(
    spec: Competition, data_dir: Path, work: Path, plan: FeaturePlan, limits: Limits, *, models: Path,
    progress: Progress, parallel: int = 1,
) -> MediaProfile:  # fmt: skip
    """Features of every row's file into the data folder (`MEDIA_FEATURES`), chunks kept under `work` (`parallel`
    jobs at a time, each with `limits`); the files' profile."""
    assert spec.media is not None
    kind = media_kind(spec.media.kind)
    work.mkdir(parents=True, exist_ok=True)
    model = None
    if plan.size:
        try:
            onnx = await asyncio.to_thread(exported, plan.size, models)
        except ExportFailed as exc:
            raise FeaturesFailed(str(exc)) from None
        model = onnx.name
        await asyncio.to_thread(_hand_over, onnx, data_dir)
    if kind.numba_kernels:
        await asyncio.to_thread(_hand_over, await asyncio.to_thread(compiled_kernels, models), data_dir)
    script = work / "featurise.py"
    script.write_text(render_job(spec, plan, model))
    sizes = {t: len(pd.read_csv(data_dir / f"{t}.csv", usecols=[spec.id_column])) for t in ("train", "test")}
    step = kind.chunk
    chunks = [
        (table, start, min(start + step, rows)) for table, rows in sizes.items() for start in range(0, rows, step)
    ]
    waiting = [(t, start, stop) for t, start, stop in chunks if not _finished(work, t, start)]
    total = sum(sizes.values())
    done = total - sum(stop - start for _, start, stop in waiting)
    gate = asyncio.Semaphore(max(1, parallel))

    async def run(table: str, start: int, stop: int) -> None:
        nonlocal done
        async with gate:
            await _run_chunk(script, data_dir, work, table, start, stop, limits)
        done += stop - start
        await progress(done, total)

    async with asyncio.TaskGroup() as jobs:  # a failed chunk cancels the others; the finished ones are kept
        for chunk in waiting:
            jobs.create_task(run(*chunk))
    features = {
        table: pd.concat([pd.read_parquet(_part(work, t, start)) for t, start, _ in chunks if t == table])
        for table in sizes
    }
    await asyncio.to_thread(_write_features, features, data_dir)
    reports = [json.loads(_part(work, t, start).with_suffix(".json").read_text()) for t, start, _ in chunks]
    train_reports = [r for (t, _, _), rs in zip(chunks, reports, strict=True) if t == "train" for r in rs]
    test_reports = [r for (t, _, _), rs in zip(chunks, reports, strict=True) if t == "test" for r in rs]
    columns = len(set(features["train"].columns) | set(features["test"].columns)) - 1
    profile = media_profile(kind, train_reports, test_reports, columns, plan)
    if keeps_pixels(profile, plan):
        parts = {table: [_part(work, t, start) for t, start, _ in chunks if t == table] for table in sizes}
        await asyncio.to_thread(_write_pixels, parts, data_dir)
        profile.pixels, profile.fine_tune = plan.pixels, plan.fine_tune
    return profile


def keeps_pixels(profile: MediaProfile, plan: FeaturePlan) -> bool:
    """Whether networks will train on the files' pixels, where torch is installed: spectrograms always, small
    pictures (a network trained from scratch), and any picture the pretrained network is fine-tuned on."""
    pixels = media_kind(profile.kind).pixels
    if not installed("torch") or pixels is None:
        return False
    if pixels is Pixels.spectrogram or plan.fine_tune:
        return True
    widths, heights = profile.quantiles.get("width"), profile.quantiles.get("height")
    if not widths or not heights:
        return False
    return max(widths[1], heights[1]) <= SMALL_IMAGE_SIDE  # their medians


def _hand_over(made: Path, data_dir: Path) -> None:
    """A file or folder we made, copied read-only into the data folder the jobs read (once)."""
    target = data_dir / made.name
    if target.exists():
        return
    with unlocked(data_dir):
        if made.is_dir():
            shutil.copytree(made, target)
            for inside in sorted(target.rglob("*"), reverse=True):
                inside.chmod(0o555 if inside.is_dir() else 0o444)
            target.chmod(0o555)
        else:
            shutil.copyfile(made, target)
            target.chmod(0o444)


def _finished(work: Path, table: str, start: int) -> bool:
    """A chunk is done when its features and its pixels are kept (one from an earlier version may lack them)."""
    part = _part(work, table, start)
    return part.is_file() and part.with_suffix(".pixels").is_file()


def _part(work: Path, table: str, start: int) -> Path:
    """A finished chunk's features (its report beside them, as `.json`)."""
    return work / f"{table}-{start:08d}.parquet"


async def _run_chunk(
    script: Path, data_dir: Path, work: Path, table: str, start: int, stop: int, limits: Limits
) -> None:
    part = _part(work, table, start)
    folder = work / f"job-{table}-{start:08d}"
    job = Job(
        script=script, data=data_dir,
        args=("--table", table, "--start", str(start), "--stop", str(stop), "--threads", str(limits.threads)),
        outputs={name: OUTPUT_CAP for name in ("features.parquet", "files.json", "previews.parquet", "pixels.npy")},
    )  # fmt: skip
    result = await run_sandboxed(job, workdir=folder, limits=limits)
    if not result.ok or not (folder / "features.parquet").is_file():
        raise FeaturesFailed(f"featurising {table} rows {start}-{stop} failed: {result.failure_reason()}")
    (folder / "files.json").replace(part.with_suffix(".json"))
    (folder / "previews.parquet").replace(part.with_suffix(".previews"))
    (folder / "pixels.npy").replace(part.with_suffix(".pixels"))
    (folder / "features.parquet").replace(part)  # last: a chunk is done when its features are there
    shutil.rmtree(folder, ignore_errors=True)


def _write_features(features: dict[str, pd.DataFrame], data_dir: Path) -> None:
    with unlocked(data_dir):
        for table, frame in features.items():
            target = data_dir / MEDIA_FEATURES[table]
            partial = target.with_name(target.name + ".partial")
            frame.to_parquet(partial, index=False)
            partial.chmod(0o444)
            partial.replace(target)


def _write_pixels(parts: dict[str, list[Path]], data_dir: Path) -> None:
    """Each table's pixels, one array in the rows' order (`MEDIA_PIXELS`), from the chunks' own."""
    with unlocked(data_dir):
        for table, chunks in parts.items():
            target = data_dir / MEDIA_PIXELS[table]
            partial = target.with_name(target.name + ".partial")
            with partial.open("wb") as out:
                np.save(out, np.concatenate([np.load(chunk.with_suffix(".pixels")) for chunk in chunks]))
            partial.chmod(0o444)
            partial.replace(target)


def media_profile(
    kind: MediaKind, train: list[dict[str, Any]], test: list[dict[str, Any]], features: int, plan: FeaturePlan
) -> MediaProfile:
    """What the files are, from the jobs' reports: formats, channels, size or length, unreadable files, and test
    files identical to a training file."""
    files = [*train, *test]
    read = [f for f in files if f.get("ok")]
    failed = [f for f in files if not f.get("ok")]
    quantiles: dict[str, list[float]] = {}
    for name in kind.measures:
        values = np.array([float(f[name]) for f in read if f.get(name) is not None])
        if values.size:
            quantiles[name] = [round(float(q), 3) for q in np.quantile(values, (0, 0.5, 1))]
    if "width" in quantiles and "height" in quantiles:
        aspect = np.array([f["width"] / max(f["height"], 1) for f in read])
        quantiles["aspect"] = [round(float(q), 3) for q in np.quantile(aspect, (0, 0.5, 1))]
    seen = {f["sha1"] for f in train if f.get("sha1")}
    return MediaProfile(
        kind=kind.name,
        files=len(files),
        unreadable=len(failed),
        unreadable_examples=[f"{f['file']}: {f.get('reason', '')}" for f in failed[:5]],
        formats=dict(Counter(str(f.get("format")) for f in read)),
        channels=dict(Counter(str(f.get(kind.channels)) for f in read)),
        quantiles=quantiles,
        duplicates=sum(1 for f in test if f.get("sha1") in seen),
        features=features,
        embedding=plan.describe(),
    )


def media_notes(profile: MediaProfile) -> list[str]:
    """What Research says of the files, a line each."""
    notes = [
        f"{profile.files:,} {profile.kind} files ({', '.join(f'{n} {k}' for k, n in profile.formats.items())});"
        f" {profile.features:,} features" + (f": {profile.embedding} and statistics" if profile.embedding else "")
    ]
    for name, (low, middle, high) in profile.quantiles.items():
        notes.append(f"{name}: {low:g} to {high:g}, median {middle:g}")
    if profile.unreadable:
        notes.append(
            f"{profile.unreadable:,} files could not be read, their rows get no media features: "
            + "; ".join(profile.unreadable_examples[:3])
        )
    if profile.duplicates:
        notes.append(f"{profile.duplicates:,} test files are byte for byte a training file")
    if profile.pixels:
        what = media_kind(profile.kind).pixels_noun
        networks = "the pretrained network fine-tuned" if profile.fine_tune else "a network trained from scratch"
        notes.append(f"each file's {what} kept at {profile.pixels} px for {networks} on them")
    return notes
