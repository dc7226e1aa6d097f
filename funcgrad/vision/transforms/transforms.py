"""torchvision.transforms classes: callables over PIL images and funcgrad Tensors (CHW / NCHW).

Random transforms draw from funcgrad's default generator (funcgrad.manual_seed makes them repeatable);
RandomChoice and RandomOrder use Python's `random`, as torchvision does.
"""
from __future__ import annotations

import math
import numbers
import random
import warnings
from collections.abc import Sequence
from typing import List, Tuple

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from . import functional as F
from .functional import InterpolationMode, _interpolation_modes_from_int, _setup_size

__all__ = ["Compose", "ToTensor", "PILToTensor", "ConvertImageDtype", "ToPILImage", "Normalize", "Resize",
           "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomChoice", "RandomOrder", "RandomCrop",
           "RandomHorizontalFlip", "RandomVerticalFlip", "RandomResizedCrop", "FiveCrop", "TenCrop",
           "ColorJitter", "RandomRotation", "RandomAffine", "Grayscale", "RandomGrayscale", "RandomErasing",
           "GaussianBlur", "InterpolationMode", "RandomInvert", "RandomPerspective", "RandomPosterize",
           "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize"]


def _uniform(a: float, b: float) -> float:
    return float(_fg.empty(1).uniform_(a, b).item())


def _randint(low: int, high: int) -> int:
    return int(_fg.randint(low, high, size=(1,)).item())


def _coin(p: float) -> bool:
    return bool(_fg.rand(1).item() < p)


def _fill_per_channel(img, fill):
    """A Tensor image's fill as one float per channel (a number is repeated); a PIL image's as given."""
    if not isinstance(img, _fg.Tensor):
        return fill
    c = F.get_dimensions(img)[0]
    return [float(fill)] * c if isinstance(fill, (int, float)) else [float(f) for f in fill]


def _interp(interpolation):
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        return _interpolation_modes_from_int(interpolation)
    return interpolation


class Module:
    """Base for transforms: call forward, repr as torchvision prints them."""

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


def _listing(transform, head=""):
    """A container of transforms as torchvision prints it: its name, then `head` and each transform on a line."""
    body = "".join(f"\n    {t}" for t in transform.transforms)
    return f"{transform.__class__.__name__}({head}{body}\n)"


class Compose:
    """Apply transforms one after the other."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return _listing(self)


class ToTensor(Module):
    """PIL image / HWC ndarray -> CHW float Tensor in [0, 1] (uint8 inputs are divided by 255)."""

    def forward(self, pic):
        return F.to_tensor(pic)


class PILToTensor(Module):
    """PIL image -> CHW Tensor of the same dtype (no scaling)."""

    def forward(self, pic):
        return F.pil_to_tensor(pic)


class ConvertImageDtype(Module):
    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class ToPILImage:
    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{self.__class__.__name__}({'' if self.mode is None else f'mode={self.mode}'})"


class Normalize(Module):
    """output[c] = (input[c] - mean[c]) / std[c]."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Resize(Module):
    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        if not isinstance(size, (int, Sequence, type(None))):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        self.interpolation = _interp(interpolation)

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


class _Cropped(Module):
    """The crop(s) of `size` ((h, w); a number is a square) that the functional `_op` cuts."""
    _op = None

    def __init__(self, size):
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return type(self)._op(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class CenterCrop(_Cropped):
    _op = F.center_crop


class Pad(Module):
    def __init__(self, padding, fill=0, padding_mode="constant"):
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in [1, 2, 4]:
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} "
                             "element tuple")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return (f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class Lambda(Module):
    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def forward(self, img):
        return self.lambd(img)


class RandomTransforms:
    def __init__(self, transforms):
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __repr__(self):
        return _listing(self)


class RandomApply(Module):
    """Apply all transforms with probability p."""

    def __init__(self, transforms, p=0.5):
        self.transforms, self.p = transforms, p

    def forward(self, img):
        if self.p < float(_fg.rand(1).item()):
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return _listing(self, f"\n    p={self.p}")


class RandomOrder(RandomTransforms):
    def __call__(self, img):
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    def __init__(self, transforms, p=None):
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args):
        t = random.choices(self.transforms, weights=self.p)[0]
        return t(*args)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"


class RandomCrop(Module):
    @staticmethod
    def get_params(img, output_size) -> Tuple[int, int, int, int]:
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = _randint(0, h - th + 1)
        j = _randint(0, w - tw + 1)
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = tuple(_setup_size(size, "Please provide only two dimensions (h, w) for size."))
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, h, w = F.get_dimensions(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, [self.size[1] - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, [0, self.size[0] - h], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class _RandomlyApplied(Module):
    """With probability p, the image through the functional `_op`; unchanged otherwise. A transform with a
    setting (a _RandomlyAdjusted) names its attribute in `_setting`: `_op` takes it after the image, and the
    repr shows it as torchvision does (`Name(setting=value,p=p)`)."""

    _op = None
    _setting = None

    def __init__(self, p=0.5):
        self.p = p

    def forward(self, img):
        if not _coin(self.p):
            return img
        op = type(self)._op
        return op(img) if self._setting is None else op(img, getattr(self, self._setting))

    def __repr__(self):
        setting = "" if self._setting is None else f"{self._setting}={getattr(self, self._setting)},"
        return f"{self.__class__.__name__}({setting}p={self.p})"


class RandomHorizontalFlip(_RandomlyApplied):
    _op = F.hflip


class RandomVerticalFlip(_RandomlyApplied):
    _op = F.vflip


class RandomInvert(_RandomlyApplied):
    _op = F.invert


class RandomAutocontrast(_RandomlyApplied):
    _op = F.autocontrast


class RandomEqualize(_RandomlyApplied):
    _op = F.equalize


class _RandomlyAdjusted(_RandomlyApplied):
    """A _RandomlyApplied functional with one setting (the attribute that `_setting` names)."""

    def __init__(self, setting, p):
        super().__init__(p)
        setattr(self, self._setting, setting)


class RandomPosterize(_RandomlyAdjusted):
    _op, _setting = F.posterize, "bits"

    def __init__(self, bits, p=0.5):
        super().__init__(bits, p)


class RandomSolarize(_RandomlyAdjusted):
    _op, _setting = F.solarize, "threshold"

    def __init__(self, threshold, p=0.5):
        super().__init__(threshold, p)


class RandomAdjustSharpness(_RandomlyAdjusted):
    _op, _setting = F.adjust_sharpness, "sharpness_factor"

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(sharpness_factor, p)


class RandomPerspective(Module):
    """With probability p, move each corner inwards by up to distortion_scale * half the image size."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0):
        self.p, self.distortion_scale = p, distortion_scale
        self.interpolation = _interp(interpolation)
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    @staticmethod
    def get_params(width: int, height: int, distortion_scale: float):
        dw, dh = int(distortion_scale * (width // 2)), int(distortion_scale * (height // 2))
        topleft = [_randint(0, dw + 1), _randint(0, dh + 1)]
        topright = [_randint(width - dw - 1, width), _randint(0, dh + 1)]
        botright = [_randint(width - dw - 1, width), _randint(height - dh - 1, height)]
        botleft = [_randint(0, dw + 1), _randint(height - dh - 1, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def forward(self, img):
        fill = _fill_per_channel(img, self.fill)
        _, h, w = F.get_dimensions(img)
        if _coin(self.p):
            start, end = self.get_params(w, h, self.distortion_scale)
            return F.perspective(img, start, end, self.interpolation, fill)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


def _check_scale_ratio(scale, ratio):
    """RandomResizedCrop's and RandomErasing's checks of their (min, max) area-fraction and aspect-ratio ranges."""
    if not isinstance(scale, Sequence):
        raise TypeError("Scale should be a sequence")
    if not isinstance(ratio, Sequence):
        raise TypeError("Ratio should be a sequence")
    if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
        warnings.warn("Scale and ratio should be of kind (min, max)")


def _boxes(area, scale, ratio):
    """Ten random boxes, drawn as torchvision draws them: an area of `area * U(scale)` pixels and an aspect
    ratio r log-uniform in `ratio`, as the rounded sides (sqrt(area * r), sqrt(area / r)). The caller keeps
    the first that fits (and draws its position before the next box is drawn)."""
    log_ratio = [float(v) for v in np.log(np.array(ratio, np.float32))]
    for _ in range(10):
        target_area = area * _uniform(scale[0], scale[1])
        aspect_ratio = math.exp(_uniform(log_ratio[0], log_ratio[1]))
        yield int(round(math.sqrt(target_area * aspect_ratio))), int(round(math.sqrt(target_area / aspect_ratio)))


class RandomResizedCrop(Module):
    """Crop a random area (fraction `scale`, aspect `ratio`) and resize it to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
        _check_scale_ratio(scale, ratio)
        self.interpolation = _interp(interpolation)
        self.antialias, self.scale, self.ratio = antialias, scale, ratio

    @staticmethod
    def get_params(img, scale, ratio) -> Tuple[int, int, int, int]:
        _, height, width = F.get_dimensions(img)
        area = height * width
        for w, h in _boxes(area, scale, ratio):
            if 0 < w <= width and 0 < h <= height:
                i = _randint(0, height - h + 1)
                j = _randint(0, width - w + 1)
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


class FiveCrop(_Cropped):
    _op = F.five_crop


class TenCrop(_Cropped):
    def __init__(self, size, vertical_flip=False):
        super().__init__(size)
        self.vertical_flip = vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


class ColorJitter(Module):
    """Random brightness, contrast, saturation and hue changes, applied in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        fn_idx = _fg.randperm(4)
        b = None if brightness is None else _uniform(brightness[0], brightness[1])
        c = None if contrast is None else _uniform(contrast[0], contrast[1])
        s = None if saturation is None else _uniform(saturation[0], saturation[1])
        h = None if hue is None else _uniform(hue[0], hue[1])
        return fn_idx, b, c, s, h

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        for fn_id in fn_idx.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    elif not isinstance(x, Sequence) or len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {' or '.join(str(s) for s in req_sizes)}.")
    return [float(d) for d in x]


class RandomRotation(Module):
    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        self.interpolation = _interp(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None and (not isinstance(center, Sequence) or len(center) != 2):
            raise ValueError("center should be a sequence of length 2.")
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.center, self.expand, self.fill = center, expand, fill

    @staticmethod
    def get_params(degrees: List[float]) -> float:
        return _uniform(float(degrees[0]), float(degrees[1]))

    def forward(self, img):
        fill = _fill_per_channel(img, self.fill)
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self):
        return (f"{self.__class__.__name__}(degrees={self.degrees}, interpolation={self.interpolation.value}, "
                f"expand={self.expand}" + (f", center={self.center}" if self.center is not None else "")
                + (f", fill={self.fill}" if self.fill is not None else "") + ")")


class RandomAffine(Module):
    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
        self.interpolation = _interp(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            if not isinstance(translate, Sequence) or len(translate) != 2:
                raise ValueError("translate should be a sequence of length 2.")
            for t in translate:
                if not (0.0 <= t <= 1.0):
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            if not isinstance(scale, Sequence) or len(scale) != 2:
                raise ValueError("scale should be a sequence of length 2.")
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = _setup_angle(shear, name="shear", req_sizes=(2, 4)) if shear is not None else None
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        if center is not None and (not isinstance(center, Sequence) or len(center) != 2):
            raise ValueError("center should be a sequence of length 2.")
        self.fill, self.center = fill, center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        angle = _uniform(float(degrees[0]), float(degrees[1]))
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(_uniform(-max_dx, max_dx)))
            ty = int(round(_uniform(-max_dy, max_dy)))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        scale = _uniform(scale_ranges[0], scale_ranges[1]) if scale_ranges is not None else 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        fill = _fill_per_channel(img, self.fill)
        _, h, w = F.get_dimensions(img)
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear, [w, h])
        return F.affine(img, *ret, interpolation=self.interpolation, fill=fill, center=self.center)

    def __repr__(self):
        return (f"{self.__class__.__name__}(degrees={self.degrees}, translate={self.translate}, "
                f"scale={self.scale}, shear={self.shear}, interpolation={self.interpolation.value}, "
                f"fill={self.fill})")


class Grayscale(Module):
    def __init__(self, num_output_channels=1):
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self):
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(Module):
    def __init__(self, p=0.1):
        self.p = p

    def forward(self, img):
        c = F.get_dimensions(img)[0]
        if _coin(self.p):
            return F.rgb_to_grayscale(img, num_output_channels=c)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class GaussianBlur(Module):
    """Blur with a Gaussian of sigma drawn uniformly from `sigma` (min, max)."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        self.kernel_size = _setup_size(kernel_size, "Kernel size should be a tuple/list of two integers")
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min: float, sigma_max: float) -> float:
        return _uniform(sigma_min, sigma_max)

    def forward(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self):
        return f"{self.__class__.__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class RandomErasing(Module):
    """Erase a random rectangle of a Tensor image with probability p (value: number, per-channel tuple,
    or 'random' for standard-normal noise)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        _check_scale_ratio(scale, ratio)
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        for h, w in _boxes(area, scale, ratio):
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = _fg.empty([img_c, h, w], dtype=_fg.float32).normal_()
            else:
                v = _fg.tensor(value)[:, None, None]
            i = _randint(0, img_h - h + 1)
            j = _randint(0, img_w - w + 1)
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if _coin(self.p):
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            elif isinstance(self.value, (list, tuple)):
                value = [float(v) for v in self.value]
            else:
                value = self.value
            if value is not None and len(value) not in (1, img.shape[-3]):
                raise ValueError("If value is a sequence, it should have either a single value or "
                                 f"{img.shape[-3]} (number of input channels)")
            x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            return F.erase(img, x, y, h, w, v.to(img.dtype) if isinstance(v, _fg.Tensor) else v, self.inplace)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
                f"value={self.value}, inplace={self.inplace})")
