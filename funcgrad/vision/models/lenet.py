"""LeNet-5 (LeCun et al. 1998) for 1x28x28 inputs (conv1 pads by 2, as the 32x32 original), ReLU and max
pooling as commonly trained today. Not part of torchvision; named lenet5 / LeNet here."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from funcgrad import nn
from ._api import load_weights

__all__ = ["LeNet", "lenet5"]


class LeNet(nn.Module):
    def __init__(self, num_classes: int = 10, in_channels: int = 1) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 6, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(6, 16, kernel_size=5), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2))
        self.classifier = nn.Sequential(
            nn.Linear(16 * 5 * 5, 120), nn.ReLU(inplace=True),
            nn.Linear(120, 84), nn.ReLU(inplace=True),
            nn.Linear(84, num_classes))

    def forward(self, x):
        return self.classifier(_fg.flatten(self.features(x), 1))


class _NoWeights:
    @classmethod
    def verify(cls, obj):
        raise ValueError(f"No named weights exist for LeNet-5; pass a local file path, got {obj!r}")


def lenet5(*, weights=None, progress: bool = True, **kwargs) -> LeNet:
    """LeNet-5 (61,706 parameters with 10 classes); weights= a local file path."""
    return load_weights(LeNet(**kwargs), weights, _NoWeights)
