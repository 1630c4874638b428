"""Images as the embedding network reads them: any mode Pillow decodes (grayscale, RGBA, palette, 16-bit) made
8-bit RGB, resized to a square, normalised as EfficientNet-Lite expects; and simple statistics of each image.

NumPy, Pillow and pydicom only: this module is copied into the featurisation job's script, which runs in the
sandbox (the files are a competition's, not ours, and decoding them is the risky part)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

LITE_MEAN, LITE_SCALE = 127.0, 128.0
"""EfficientNet-Lite's input: (pixel - 127) / 128, per channel."""
STATS_SIZE = 64
EMBEDDING = 1280
"""Features the network gives an image."""
HIGH_DEPTH = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")
DICOM = (".dcm", ".dicom")
CHANNELS, PIXEL_ROWS = 3, None
"""A row's pixels for a network trained from scratch: RGB, as many rows as columns."""


def read_file(
    path: Path, *, size: int, side: int, preview: bool
) -> tuple[dict[str, Any], dict[str, float], np.ndarray, np.ndarray, bytes | None]:
    """What the featurisation job keeps of one image: what its file is, its statistics, the `size`-pixel square the
    embedder sees, the `side`-pixel channels-first square a network trained from scratch reads, and a preview."""
    image, info = read_image(path)
    seen, own = square(image, size), channels_first(image, side)
    return info, image_stats(image, info), seen, own, image_preview(image) if preview else None


def read_image(path: Path) -> tuple[Image.Image, dict[str, Any]]:
    """The image as 8-bit RGB, and what its file says: format, size, mode, bands. Raises on a file Pillow (or, for
    DICOM, pydicom) cannot decode in full (truncated, not an image)."""
    if path.suffix.lower() in DICOM:
        return read_dicom(path)
    with Image.open(path) as image:
        image.load()
        info = {"format": image.format or path.suffix.lstrip(".").upper(), "width": image.width,
                "height": image.height, "mode": image.mode, "channels": len(image.getbands())}  # fmt: skip
        rgb = as_rgb(image)
    return rgb, info


def read_dicom(path: Path) -> tuple[Image.Image, dict[str, Any]]:
    """A DICOM image as 8-bit RGB: its modality and VOI transforms applied (the window a radiologist would see
    first), then stretched between the 1st and 99th percentiles; MONOCHROME1 inverted so bright is dense; of a
    volume or a series of frames, the middle one."""
    import pydicom
    from pydicom.pixels.processing import apply_modality_lut, apply_voi_lut

    data = pydicom.dcmread(path)
    pixels = np.asarray(data.pixel_array)
    samples = int(data.get("SamplesPerPixel", 1))
    if pixels.ndim == (4 if samples > 1 else 3):
        pixels = pixels[len(pixels) // 2]
    info = {"format": "DICOM", "width": int(pixels.shape[1]), "height": int(pixels.shape[0]),
            "mode": f"{data.get('PhotometricInterpretation', '')} {int(data.get('BitsStored', 8))}-bit".strip(),
            "channels": samples}  # fmt: skip
    if samples > 1:
        return as_rgb(Image.fromarray(pixels.astype(np.uint8))), info
    values = np.asarray(apply_voi_lut(apply_modality_lut(pixels, data), data), dtype=np.float64)
    low, high = np.percentile(values, (1, 99)) if values.size else (0.0, 1.0)
    scaled = np.clip((values - low) / max(high - low, 1e-12), 0, 1) * 255
    if data.get("PhotometricInterpretation") == "MONOCHROME1":
        scaled = 255 - scaled
    return Image.fromarray(scaled.astype(np.uint8)).convert("RGB"), info


def as_rgb(image: Image.Image) -> Image.Image:
    """8-bit RGB: deep images (16-bit, 32-bit, float) stretched between their 1st and 99th percentiles,
    transparency laid over white, palettes and grayscale expanded."""
    if image.mode in HIGH_DEPTH:
        values = np.asarray(image, dtype=np.float64)
        low, high = np.percentile(values, (1, 99)) if values.size else (0.0, 1.0)
        scaled = np.clip((values - low) / max(high - low, 1e-12), 0, 1) * 255
        image = Image.fromarray(scaled.astype(np.uint8))
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA", "La", "RGBa"):
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, rgba)
    return image.convert("RGB")


def square(image: Image.Image, size: int) -> np.ndarray:
    """`size` by `size` RGB uint8: the whole image, resized (a crop could cut off what the label is about)."""
    return np.asarray(image.resize((size, size), Image.Resampling.BILINEAR, reducing_gap=2.0), dtype=np.uint8)


def channels_first(image: Image.Image, side: int) -> np.ndarray:
    """`square`'s pixels as (3, side, side): what a network trained from scratch reads."""
    return square(image, side).transpose(2, 0, 1).copy()


def network_input(pixels: np.ndarray) -> np.ndarray:
    """A batch of (N, S, S, 3) uint8 images as the network's (N, 3, S, S) float32 input."""
    return ((pixels.astype(np.float32) - LITE_MEAN) / LITE_SCALE).transpose(0, 3, 1, 2).copy()


def image_stats(image: Image.Image, info: dict[str, Any]) -> dict[str, float]:
    """Colour, brightness, contrast, saturation and edge statistics, and the original size and shape: what a
    pretrained network's embedding leaves out, and cheap."""
    small = np.asarray(image.resize((STATS_SIZE, STATS_SIZE), Image.Resampling.BILINEAR), dtype=np.float32) / 255
    gray = small.mean(axis=2)
    hsv = np.asarray(image.resize((STATS_SIZE, STATS_SIZE)).convert("HSV"), dtype=np.float32) / 255
    dy, dx = np.abs(np.diff(gray, axis=0)), np.abs(np.diff(gray, axis=1))
    stats = {f"img_{c}_mean": float(small[..., i].mean()) for i, c in enumerate("rgb")}
    stats |= {f"img_{c}_std": float(small[..., i].std()) for i, c in enumerate("rgb")}
    stats |= {
        "img_saturation": float(hsv[..., 1].mean()),
        "img_brightness": float(hsv[..., 2].mean()),
        "img_contrast": float(gray.std()),
        "img_edges": float(dx.mean() + dy.mean()),
        "img_width": float(info["width"]),
        "img_height": float(info["height"]),
        "img_aspect": float(info["width"]) / max(float(info["height"]), 1.0),
        "img_gray": float(info["channels"] == 1 or np.ptp(small, axis=2).max() < 1e-3),
    }
    histogram, _ = np.histogram(gray, bins=8, range=(0, 1))
    stats |= {f"img_hist{i}": float(v) / gray.size for i, v in enumerate(histogram)}
    for i, channel in enumerate("rgb"):
        counts, _ = np.histogram(small[..., i], bins=8, range=(0, 1))
        stats |= {f"img_hist_{channel}{k}": float(v) / gray.size for k, v in enumerate(counts)}
    return stats | thumbnail(image)


PREVIEW_SIZE = 64


def image_preview(image: Image.Image) -> bytes:
    """A small JPEG of the image, for people to look at (the mission page, the report)."""
    import io

    small = image.copy()
    small.thumbnail((PREVIEW_SIZE, PREVIEW_SIZE))
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=80)
    return out.getvalue()


def thumbnail(image: Image.Image) -> dict[str, float]:
    """The image in 8x8 grey levels and 4x4 colours: the layout a network pretrained on photographs blurs (a
    glyph's strokes, where an object sits)."""
    gray = np.asarray(image.convert("L").resize((8, 8), Image.Resampling.BOX), dtype=np.float32) / 255
    colour = np.asarray(image.resize((4, 4), Image.Resampling.BOX), dtype=np.float32) / 255
    cells = {f"thumb{i}": float(v) for i, v in enumerate(gray.ravel())}
    return cells | {f"thumb_{c}{i}": float(v) for c, plane in zip("rgb", colour.transpose(2, 0, 1), strict=True)
                    for i, v in enumerate(plane.ravel())}  # fmt: skip


def embed(model: Path, pixels: np.ndarray, *, threads: int = 1, flip: bool = False, batch: int = 64) -> np.ndarray:
    """The network's features of each (N, S, S, 3) uint8 image (averaged with its mirror image's when `flip`)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    parts = []
    for start in range(0, len(pixels), batch):
        chunk = network_input(pixels[start : start + batch])
        vectors = session.run(None, {"images": chunk})[0]
        if flip:
            vectors = (vectors + session.run(None, {"images": chunk[..., ::-1].copy()})[0]) / 2
        parts.append(np.asarray(vectors, dtype=np.float32))
    return np.concatenate(parts) if parts else np.zeros((0, EMBEDDING), dtype=np.float32)
