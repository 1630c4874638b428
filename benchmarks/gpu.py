"""The networks' training speed on each device torch sees: EfficientNet-Lite0 fine-tuned at 128 px in batches of 32
(the `finetuned` family) and the small network trained from scratch at 32 px in batches of 64 (the `cnn` family),
in images a second, the median of several timed fits after one untimed. The CPU runs with two threads, as a
candidate on the two-core yardstick machine (`CPU_FINE_TUNE_IMAGES_PER_SECOND`); it is timed in a child process
that sees no GPU.

    pip install -e '.[media]'
    python benchmarks/gpu.py [--runs 3] [--steps 20] [--devices cpu cuda] [--module agent_k.media.cnn | path/to/cnn.py]

`--module` times another copy of the networks' module (the code before a change, say) beside this one.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from types import ModuleType

import numpy as np
import pandas as pd

NETWORKS = {"finetuned": ("FineTunedClassifier", 128, 32), "cnn": ("SmallCNNClassifier", 32, 64)}
"""name: (class, pixels a side, batch size)."""


def load(module: str) -> ModuleType:
    if not module.endswith(".py"):
        return importlib.import_module(module)
    spec = importlib.util.spec_from_file_location("networks_under_test", module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def images_per_second(module: ModuleType, network: str, steps: int, runs: int) -> tuple[float, str]:
    """(the median rate, the device it trained on)."""
    name, side, batch = NETWORKS[network]
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (512, 3, side, side), dtype=np.uint8)
    X, y = pd.DataFrame({"pixels": list(pixels)}), rng.integers(0, 10, len(pixels))
    rates, device = [], ""
    for run in range(runs + 1):
        model = getattr(module, name)(steps=steps, size=side, batch_size=batch, n_jobs=2, random_state=run)
        started = time.perf_counter()
        model.fit(X, y)
        if model.device_ == "cuda":
            import torch

            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        device = model.device_
        if run:  # the first fit pays for loading the weights, CUDA's start and its kernels' tuning
            rates.append(steps * batch / seconds)
    return statistics.median(rates), device


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--module", default="agent_k.media.cnn")
    parser.add_argument("--devices", nargs="*", choices=["cpu", "cuda"], default=["cpu", "cuda"])
    parser.add_argument("--here", action="store_true", help="time on this process's devices only (the child)")
    args = parser.parse_args()
    module = load(args.module)
    rows = []
    if not args.here and "cpu" in args.devices:
        child = [sys.executable, __file__, "--here", "--runs", str(args.runs), "--steps", str(args.steps)]
        cpu = subprocess.run(
            [*child, "--module", args.module], env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        rows.extend(json.loads(line) for line in cpu.stdout.splitlines() if line.startswith("{"))
    import torch

    if args.here or ("cuda" in args.devices and torch.cuda.is_available()):
        for network in NETWORKS:
            rate, device = images_per_second(module, network, args.steps, args.runs)
            row = {"module": args.module, "network": network, "device": device, "images_per_s": round(rate, 1)}
            if device == "cuda":
                row["gpu"] = torch.cuda.get_device_name(0)
            rows.append(row)
    for row in rows:
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
