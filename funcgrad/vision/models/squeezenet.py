"""SqueezeNet 1.0 / 1.1 (torchvision's names, keys, parameter counts and init)."""
from __future__ import annotations

from functools import partial

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from funcgrad import nn
from ._api import WeightsEnum, _w, build

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights"]


class Fire(nn.Module):
    def __init__(self, inplanes: int, squeeze_planes: int, expand1x1_planes: int, expand3x3_planes: int) -> None:
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return _fg.cat([self.expand1x1_activation(self.expand1x1(x)),
                        self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet(nn.Module):
    def __init__(self, version: str = "1_0", num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.num_classes = num_classes
        pool = lambda: nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)  # noqa: E731
        if version == "1_0":
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True), pool(),
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), pool(),
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                pool(), Fire(512, 64, 256, 256))
        elif version == "1_1":
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True), pool(),
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), pool(),
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), pool(),
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256), Fire(512, 64, 256, 256))
        else:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        final_conv = nn.Conv2d(512, self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return _fg.flatten(self.classifier(self.features(x)), 1)


class SqueezeNet1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/squeezenet1_0-b66bff10.pth")


class SqueezeNet1_1_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/squeezenet1_1-b8a52dc0.pth")


def _squeezenet(version, weights, enum_cls, kwargs):
    return build(partial(SqueezeNet, version), weights, enum_cls, kwargs)


def squeezenet1_0(*, weights=None, progress: bool = True, **kwargs) -> SqueezeNet:
    return _squeezenet("1_0", weights, SqueezeNet1_0_Weights, kwargs)


def squeezenet1_1(*, weights=None, progress: bool = True, **kwargs) -> SqueezeNet:
    """SqueezeNet 1.1 (1,235,496 parameters)."""
    return _squeezenet("1_1", weights, SqueezeNet1_1_Weights, kwargs)
