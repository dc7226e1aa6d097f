"""AlexNet (the one-weird-trick variant torchvision ships; 61,100,840 parameters)."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from funcgrad import nn
from ._api import WeightsEnum, _w, build

__all__ = ["AlexNet", "alexnet", "AlexNet_Weights"]


class AlexNet(nn.Module):
    def __init__(self, num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(_fg.flatten(self.avgpool(self.features(x)), 1))


class AlexNet_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/alexnet-owt-7be5be79.pth")


def alexnet(*, weights=None, progress: bool = True, **kwargs) -> AlexNet:
    return build(AlexNet, weights, AlexNet_Weights, kwargs)
