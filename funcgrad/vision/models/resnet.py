"""ResNet-18/34/50/101 (torchvision's module names, state_dict keys, parameter counts and init)."""
from __future__ import annotations

from functools import partial
from typing import List, Optional, Type, Union

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from funcgrad import nn
from ._api import WeightsEnum, _w, build

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet34", "resnet50", "resnet101",
           "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights", "ResNet101_Weights"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class _Block(nn.Module):
    """The frame of BasicBlock and Bottleneck: the residual branch's layers (built by `_layers`, registered
    first as in torchvision's key order), then the shortcut; forward is relu(branch(x) + shortcut(x)), the
    branch computed first (torchvision's order of operations, which a traced graph shows)."""

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        self._layers(inplanes, planes, stride, groups, base_width, dilation, norm_layer or nn.BatchNorm2d)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self._branch(x)
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class BasicBlock(_Block):
    expansion = 1

    def _layers(self, inplanes, planes, stride, groups, base_width, dilation, norm_layer):
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)

    def _branch(self, x):
        return self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))


class Bottleneck(_Block):
    expansion = 4

    def _layers(self, inplanes, planes, stride, groups, base_width, dilation, norm_layer):
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)

    def _branch(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.bn3(self.conv3(out))


class ResNet(nn.Module):
    def __init__(self, block: Type[Union[BasicBlock, Bottleneck]], layers: List[int], num_classes: int = 1000,
                 zero_init_residual: bool = False, groups: int = 1, width_per_group: int = 64,
                 replace_stride_with_dilation: Optional[List[bool]] = None, norm_layer=None):
        super().__init__()
        self._norm_layer = norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes, self.dilation = 64, 1
        replace_stride_with_dilation = replace_stride_with_dilation or [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, got "
                             f"{replace_stride_with_dilation}")
        self.groups, self.base_width = groups, width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], 2, replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], 2, replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], 2, replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, getattr(nn, "GroupNorm", nn.BatchNorm2d))):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck):
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = _fg.flatten(self.avgpool(x), 1)
        return self.fc(x)


class ResNet18_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/resnet18-f37072fd.pth")


class ResNet34_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = _w("https://download.pytorch.org/models/resnet34-b627a593.pth")


class ResNet50_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("https://download.pytorch.org/models/resnet50-0676ba61.pth")
    IMAGENET1K_V2 = DEFAULT = _w("https://download.pytorch.org/models/resnet50-11ad3fa6.pth")


class ResNet101_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("https://download.pytorch.org/models/resnet101-63fe2227.pth")
    IMAGENET1K_V2 = DEFAULT = _w("https://download.pytorch.org/models/resnet101-cd907fc2.pth")


def _resnet(block, layers, weights, enum_cls, kwargs):
    return build(partial(ResNet, block, layers), weights, enum_cls, kwargs)


def resnet18(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    """ResNet-18 (11,689,512 parameters)."""
    return _resnet(BasicBlock, [2, 2, 2, 2], weights, ResNet18_Weights, kwargs)


def resnet34(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    return _resnet(BasicBlock, [3, 4, 6, 3], weights, ResNet34_Weights, kwargs)


def resnet50(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, ResNet50_Weights, kwargs)


def resnet101(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, ResNet101_Weights, kwargs)
