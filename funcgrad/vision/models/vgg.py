"""VGG-11/16 with and without batch norm (torchvision's names, keys, parameter counts and init)."""
from __future__ import annotations

from functools import partial

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from funcgrad import nn
from ._api import WeightsEnum, _legacy, _w, build

__all__ = ["VGG", "vgg11", "vgg11_bn", "vgg16", "vgg16_bn", "VGG11_Weights", "VGG11_BN_Weights", "VGG16_Weights",
           "VGG16_BN_Weights"]

cfgs = {"A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
        "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
        "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
        "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512,
              "M"]}


class VGG(nn.Module):
    def __init__(self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = _fg.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


def make_layers(cfg, batch_norm: bool = False) -> nn.Sequential:
    layers, in_channels = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
            if batch_norm:
                layers.append(nn.BatchNorm2d(v))
            layers.append(nn.ReLU(inplace=True))
            in_channels = v
    return nn.Sequential(*layers)


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/vgg11-8a719046.pth")


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/vgg11_bn-6002323d.pth")


class VGG16_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/vgg16-397923af.pth")


class VGG16_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/vgg16_bn-6c64b313.pth")


def _vgg(cfg, bn, weights, enum_cls, kwargs):
    weights = _legacy(kwargs, enum_cls, weights)
    if weights is not None:  # loaded weights replace the initialisation
        kwargs["init_weights"] = False
    return build(partial(VGG, make_layers(cfgs[cfg], batch_norm=bn)), weights, enum_cls, kwargs)


def vgg11(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    return _vgg("A", False, weights, VGG11_Weights, kwargs)


def vgg11_bn(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    return _vgg("A", True, weights, VGG11_BN_Weights, kwargs)


def vgg16(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-16 (138,357,544 parameters)."""
    return _vgg("D", False, weights, VGG16_Weights, kwargs)


def vgg16_bn(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    return _vgg("D", True, weights, VGG16_BN_Weights, kwargs)
