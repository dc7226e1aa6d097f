"""torchvision.transforms.functional: each operation on PIL images (through Pillow) and on funcgrad Tensors
(..., C, H, W) (through funcgrad ops, so gradients flow), with torchvision's argument names and checks."""
from __future__ import annotations

import math
import numbers
from enum import Enum
from typing import Any, List, Optional, Sequence

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t

__all__ = ["InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor",
           "pil_to_tensor", "to_pil_image", "convert_image_dtype", "normalize", "resize", "pad", "crop",
           "center_crop", "resized_crop", "hflip", "vflip", "five_crop", "ten_crop", "rotate", "affine",
           "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma",
           "to_grayscale", "rgb_to_grayscale", "gaussian_blur", "erase", "invert", "perspective", "posterize",
           "solarize", "autocontrast", "equalize", "adjust_sharpness"]


class InterpolationMode(Enum):
    """Interpolation modes (the values are the names torch.nn.functional.interpolate uses)."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _pil_modes():
    from PIL import Image
    R = Image.Resampling
    return {InterpolationMode.NEAREST: R.NEAREST, InterpolationMode.NEAREST_EXACT: R.NEAREST,
            InterpolationMode.BILINEAR: R.BILINEAR, InterpolationMode.BICUBIC: R.BICUBIC,
            InterpolationMode.BOX: R.BOX, InterpolationMode.HAMMING: R.HAMMING,
            InterpolationMode.LANCZOS: R.LANCZOS}


def _interpolation_modes_from_int(i: int) -> InterpolationMode:
    return {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
            4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}[i]


def _mode(interpolation) -> InterpolationMode:
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        return _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer "
                        "constant")
    return interpolation


def _is_tensor(img) -> bool:
    return isinstance(img, _fg.Tensor)


# --- introspection ---------------------------------------------------------------------------------------
def get_dimensions(img) -> List[int]:
    """[channels, height, width]."""
    if _is_tensor(img):
        return F_t.get_dimensions(img)
    return F_pil.get_dimensions(img)


def get_image_size(img) -> List[int]:
    """[width, height]."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img) -> int:
    return get_dimensions(img)[0]


# --- conversions -----------------------------------------------------------------------------------------
_PIL_DTYPES = {"I": np.int32, "I;16": np.uint16, "I;16B": np.uint16, "F": np.float32}


def _pil_array(pic) -> np.ndarray:
    if pic.mode == "1":
        return 255 * np.array(pic, np.uint8)
    a = np.array(pic, _PIL_DTYPES.get(pic.mode, np.uint8))
    return a


def to_tensor(pic) -> "_fg.Tensor":
    """PIL image or HWC ndarray -> CHW Tensor; uint8 data is scaled to [0, 1] in the default float dtype."""
    if not (F_pil.is_pil_image(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray) and pic.ndim not in {2, 3}:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    fdt = _fg.get_default_dtype()
    if isinstance(pic, np.ndarray):
        a = pic[:, :, None] if pic.ndim == 2 else pic
        t = _fg.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))
        return t.to(fdt).div(255) if t.dtype == _fg.uint8 else t
    a = _pil_array(pic)
    if a.ndim == 2:
        a = a[:, :, None]
    t = _fg.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))
    return t.to(fdt).div(255) if t.dtype == _fg.uint8 else t


def pil_to_tensor(pic) -> "_fg.Tensor":
    """PIL image -> CHW Tensor of the image's own dtype (no scaling)."""
    if not F_pil.is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    a = np.array(pic, _PIL_DTYPES.get(pic.mode, np.uint8)) if pic.mode != "1" else np.array(pic, np.uint8)
    if a.ndim == 2:
        a = a[:, :, None]
    return _fg.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))


def to_pil_image(pic, mode: Optional[str] = None):
    """CHW Tensor or HWC ndarray -> PIL image (floats are scaled by 255 and truncated to uint8)."""
    from PIL import Image
    if isinstance(pic, _fg.Tensor):
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        npimg = np.transpose(pic.detach().cpu().numpy(), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        npimg = pic[:, :, None] if pic.ndim == 2 else pic
        if npimg.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {npimg.shape[-1]} channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    c = npimg.shape[2]
    if c == 1:
        npimg = npimg[:, :, 0]
        expected = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16", np.dtype(np.uint16): "I;16",
                    np.dtype(np.int32): "I", np.dtype(np.float32): "F"}.get(npimg.dtype)
        if mode is not None and mode != expected and not (mode == "L" and npimg.dtype == np.uint8):
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. Should be {expected}")
        mode = mode or expected
        if npimg.dtype == np.int16:
            npimg = npimg.astype(np.uint16)
    elif c == 2:
        permitted = ["LA"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 2D inputs")
        mode = mode or "LA"
    elif c == 4:
        permitted = ["RGBA", "CMYK", "RGBX"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 4D inputs")
        mode = mode or "RGBA"
    else:
        permitted = ["RGB", "YCbCr", "HSV"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 3D inputs")
        mode = mode or "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    if mode in ("RGB", "RGBA", "LA", "YCbCr", "HSV", "CMYK", "RGBX", "L") and npimg.dtype != np.uint8:
        npimg = npimg.astype(np.uint8)
    return _fromarray(npimg, mode)


def _fromarray(a, mode):
    from PIL import Image
    h, w = a.shape[:2]
    if mode == "I;16":
        return Image.frombuffer("I;16", (w, h), np.ascontiguousarray(a, "<u2").tobytes(), "raw", "I;16", 0, 1)
    if a.ndim == 3:
        return Image.frombytes(mode, (w, h), np.ascontiguousarray(a, np.uint8).tobytes())
    img = Image.fromarray(np.ascontiguousarray(a))
    return img if img.mode == mode else img.convert(mode)


def convert_image_dtype(image, dtype=_fg.float32):
    if not _is_tensor(image):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def normalize(tensor, mean: Sequence[float], std: Sequence[float], inplace: bool = False):
    """(tensor - mean) / std per channel of a float (..., C, H, W) tensor."""
    if not _is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tensor.size()}")
    dtype = tensor.dtype
    mean_t = _fg.as_tensor(mean, dtype=dtype)
    std_t = _fg.as_tensor(std, dtype=dtype)
    if bool((std_t == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    if mean_t.ndim == 1:
        mean_t = mean_t.view(-1, 1, 1)
    if std_t.ndim == 1:
        std_t = std_t.view(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean_t).div_(std_t)
    return tensor.sub(mean_t).div(std_t)


# --- geometry --------------------------------------------------------------------------------------------
def _compute_resized_output_size(image_size, size, max_size=None) -> List[int]:
    h, w = image_size
    short, long = (w, h) if w <= h else (h, w)
    if size is None or len(size) == 0:
        if max_size is None:
            raise ValueError("If size is None, then max_size must be an int")
        new_short, new_long = int(max_size * short / long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
        return [new_h, new_w]
    if len(size) == 1:
        requested = size if isinstance(size, int) else size[0]
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for "
                                 f"the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
        return [new_h, new_w]
    return [size[0], size[1]]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size: Optional[int] = None,
           antialias: Optional[bool] = True):
    """Resize to size=(h, w), or the smaller edge to size=int (keeping the aspect ratio, at most max_size)."""
    interpolation = _mode(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in (1, 2):
            raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/"
                             "list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, "
                             "i.e. size should be an int or a sequence of length 1 in torchscript mode.")
    elif size is not None and not isinstance(size, int):
        raise TypeError(f"Size should be int or sequence. Got {type(size)}")
    _, h, w = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    out_size = _compute_resized_output_size((h, w), size, max_size)
    if [h, w] == out_size:
        return img
    if not _is_tensor(img):
        return F_pil.resize(img, out_size, _pil_modes()[interpolation])
    if interpolation.value not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise ValueError(f"Interpolation mode {interpolation} is unsupported with Tensor input")
    return F_t.resize(img, out_size, interpolation.value, bool(antialias))


def _parse_pad(padding):
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in [1, 2, 4]:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element "
                         "tuple")
    if isinstance(padding, numbers.Number):
        p = [int(padding)] * 4
    elif len(padding) == 1:
        p = [int(padding[0])] * 4
    elif len(padding) == 2:
        p = [int(padding[0]), int(padding[1])] * 2
    else:
        p = [int(v) for v in padding]
    return p


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """Pad by padding = int | [lr, tb] | [left, top, right, bottom] in mode constant/edge/reflect/symmetric."""
    p = _parse_pad(padding)
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    if _is_tensor(img):
        if isinstance(fill, (list, tuple)):
            raise TypeError("Got inappropriate fill arg")
        return F_t.pad(img, p, fill, padding_mode)
    if not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    return F_pil.pad(img, p, fill, padding_mode)


def crop(img, top: int, left: int, height: int, width: int):
    """The region [top, top+height) x [left, left+width); outside the image reads as zeros."""
    if _is_tensor(img):
        return F_t.crop(img, top, left, height, width)
    return F_pil.crop(img, top, left, height, width)


def _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size[0], size[1]


def center_crop(img, output_size):
    """The central output_size=(h, w) region (padded with zeros where larger than the image)."""
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, h, w = get_dimensions(img)
    ch, cw = output_size
    if cw > w or ch > h:
        ltrb = [(cw - w) // 2 if cw > w else 0, (ch - h) // 2 if ch > h else 0,
                (cw - w + 1) // 2 if cw > w else 0, (ch - h + 1) // 2 if ch > h else 0]
        img = pad(img, ltrb, fill=0)
        _, h, w = get_dimensions(img)
        if cw == w and ch == h:
            return img
    top = int(round((h - ch) / 2.0))
    left = int(round((w - cw) / 2.0))
    return crop(img, top, left, ch, cw)


def resized_crop(img, top: int, left: int, height: int, width: int, size,
                 interpolation=InterpolationMode.BILINEAR, antialias: Optional[bool] = True):
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img):
    return F_t.hflip(img) if _is_tensor(img) else F_pil.hflip(img)


def vflip(img):
    return F_t.vflip(img) if _is_tensor(img) else F_pil.vflip(img)


def _crop_size(size) -> tuple:
    """five_crop / ten_crop's size as (h, w): a number or a 1-sequence is square (torchvision's message)."""
    if isinstance(size, numbers.Number):
        return (int(size), int(size))
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    return size


def five_crop(img, size):
    """(top-left, top-right, bottom-left, bottom-right, center) crops of size (h, w)."""
    size = _crop_size(size)
    _, h, w = get_dimensions(img)
    ch, cw = size
    if cw > w or ch > h:
        raise ValueError(f"Requested crop size {size} is bigger than input size {(h, w)}")
    tl = crop(img, 0, 0, ch, cw)
    tr = crop(img, 0, w - cw, ch, cw)
    bl = crop(img, h - ch, 0, ch, cw)
    br = crop(img, h - ch, w - cw, ch, cw)
    return tl, tr, bl, br, center_crop(img, [ch, cw])


def ten_crop(img, size, vertical_flip: bool = False):
    """five_crop of the image and of its horizontal (or vertical) flip."""
    size = _crop_size(size)
    first = five_crop(img, size)
    second = five_crop(vflip(img) if vertical_flip else hflip(img), size)
    return first + second


def _get_inverse_affine_matrix(center, angle: float, translate, scale: float, shear, inverted: bool = True):
    """The 2x3 matrix (row-major, 6 numbers) of the inverse of
    T(translate) C(center) R(angle) Sh(shear) S(scale) C^-1, angle and shear in degrees."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:
        m = [v / scale for v in (d, -b, 0.0, -c, a, 0.0)]
        m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
        m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
        m[2] += cx
        m[5] += cy
    else:
        m = [a * scale, b * scale, 0.0, c * scale, d * scale, 0.0]
        m[2] += m[0] * (-cx) + m[1] * (-cy)
        m[5] += m[3] * (-cx) + m[4] * (-cy)
        m[2] += cx + tx
        m[5] += cy + ty
    return m


def _tensor_fill(fill, img):
    if fill is None:
        return None
    c = get_dimensions(img)[0]
    if isinstance(fill, (int, float)):
        return [float(fill)] * c
    fill = [float(f) for f in fill]
    if len(fill) not in (1, c):
        raise ValueError(f"The number of elements in 'fill' cannot broadcast to match the number of channels of "
                         f"the image ({len(fill)} != {c})")
    return fill


def rotate(img, angle: float, interpolation=InterpolationMode.NEAREST, expand: bool = False,
           center: Optional[List[int]] = None, fill: Optional[List[float]] = None):
    """Rotate counter-clockwise by angle degrees about center (default: the image centre)."""
    interpolation = _mode(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not _is_tensor(img):
        return F_pil.rotate(img, angle, _pil_modes()[interpolation], expand, center, fill)
    _, h, w = get_dimensions(img)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return F_t.rotate(img, matrix, interpolation.value, expand, _tensor_fill(fill, img))


def affine(img, angle: float, translate: List[int], scale: float, shear: List[float],
           interpolation=InterpolationMode.NEAREST, fill: Optional[List[float]] = None,
           center: Optional[List[int]] = None):
    """Affine map keeping the centre: rotation (clockwise degrees), translation, scale and shear."""
    interpolation = _mode(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    if isinstance(angle, int):
        angle = float(angle)
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    if isinstance(shear, tuple):
        shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    _, h, w = get_dimensions(img)
    if not _is_tensor(img):
        c = [w * 0.5, h * 0.5] if center is None else center
        matrix = _get_inverse_affine_matrix(c, angle, translate, scale, shear)
        return F_pil.affine(img, matrix, _pil_modes()[interpolation], fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    translate_f = [float(t) for t in translate]
    matrix = _get_inverse_affine_matrix(center_f, angle, translate_f, scale, shear)
    return F_t.affine(img, matrix, interpolation.value, _tensor_fill(fill, img))


def _get_perspective_coeffs(startpoints, endpoints) -> List[float]:
    """The 8 coefficients of the homography taking each endpoint to its startpoint (the inverse map PIL's
    Image.PERSPECTIVE wants), by least squares in float64, rounded to float32."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(f"Please provide exactly four corners, got {len(startpoints)} startpoints and "
                         f"{len(endpoints)} endpoints.")
    e = np.asarray(endpoints, np.float64)
    s = np.asarray(startpoints, np.float64)
    a = np.zeros((8, 8))
    a[0::2, 0:2], a[0::2, 2] = e, 1.0
    a[1::2, 3:5], a[1::2, 5] = e, 1.0
    a[0::2, 6:8] = -s[:, :1] * e
    a[1::2, 6:8] = -s[:, 1:] * e
    res = np.linalg.lstsq(a, s.reshape(8), rcond=None)[0]
    return [float(v) for v in res.astype(np.float32)]


def perspective(img, startpoints: List[List[int]], endpoints: List[List[int]],
                interpolation=InterpolationMode.BILINEAR, fill: Optional[List[float]] = None):
    """Warp so that the four startpoints (top-left, top-right, bottom-right, bottom-left) land on endpoints."""
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    interpolation = _mode(interpolation)
    if not _is_tensor(img):
        return F_pil.perspective(img, coeffs, _pil_modes()[interpolation], fill)
    if interpolation.value not in ("nearest", "bilinear"):
        raise ValueError(f"Interpolation mode '{interpolation.value}' is unsupported with Tensor input")
    return F_t.perspective(img, coeffs, interpolation.value, _tensor_fill(fill, img))


# --- colour ----------------------------------------------------------------------------------------------
def adjust_brightness(img, brightness_factor: float):
    if not _is_tensor(img):
        return F_pil.adjust_brightness(img, brightness_factor)
    return F_t.adjust_brightness(img, brightness_factor)


def adjust_contrast(img, contrast_factor: float):
    if not _is_tensor(img):
        return F_pil.adjust_contrast(img, contrast_factor)
    return F_t.adjust_contrast(img, contrast_factor)


def adjust_saturation(img, saturation_factor: float):
    if not _is_tensor(img):
        return F_pil.adjust_saturation(img, saturation_factor)
    return F_t.adjust_saturation(img, saturation_factor)


def adjust_hue(img, hue_factor: float):
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if not _is_tensor(img):
        return F_pil.adjust_hue(img, hue_factor)
    return F_t.adjust_hue(img, hue_factor)


def adjust_gamma(img, gamma: float, gain: float = 1):
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    if not _is_tensor(img):
        return F_pil.adjust_gamma(img, gamma, gain)
    return F_t.adjust_gamma(img, gamma, gain)


def to_grayscale(img, num_output_channels: int = 1):
    """PIL image -> grayscale PIL image (ITU-R 601-2 luma), with 1 or 3 channels."""
    if F_pil.is_pil_image(img):
        return F_pil.to_grayscale(img, num_output_channels)
    raise TypeError("Input should be PIL Image")


def rgb_to_grayscale(img, num_output_channels: int = 1):
    """L = 0.2989 R + 0.587 G + 0.114 B, with 1 or 3 output channels."""
    if not _is_tensor(img):
        return F_pil.to_grayscale(img, num_output_channels)
    return F_t.rgb_to_grayscale(img, num_output_channels)


def invert(img):
    """Full intensity minus each value."""
    return F_t.invert(img) if _is_tensor(img) else F_pil.invert(img)


def posterize(img, bits: int):
    """Keep the top `bits` (0..8) bits of each channel of a uint8 image."""
    if not (0 <= bits <= 8):
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    return F_t.posterize(img, bits) if _is_tensor(img) else F_pil.posterize(img, bits)


def solarize(img, threshold: float):
    """Invert all values at or above threshold."""
    return F_t.solarize(img, threshold) if _is_tensor(img) else F_pil.solarize(img, threshold)


def autocontrast(img):
    """Rescale each channel so its darkest value becomes black and its lightest white."""
    return F_t.autocontrast(img) if _is_tensor(img) else F_pil.autocontrast(img)


def equalize(img):
    """Equalise each channel's histogram (uint8 images)."""
    return F_t.equalize(img) if _is_tensor(img) else F_pil.equalize(img)


def adjust_sharpness(img, sharpness_factor: float):
    """0 gives a blurred image, 1 the original, 2 doubles the sharpness."""
    if not _is_tensor(img):
        return F_pil.adjust_sharpness(img, sharpness_factor)
    return F_t.adjust_sharpness(img, sharpness_factor)


def gaussian_blur(img, kernel_size: List[int], sigma: Optional[List[float]] = None):
    """Blur with a separable Gaussian (odd kernel sizes; sigma defaults to 0.3*((k-1)*0.5-1)+0.8);
    borders reflect. PIL images go through the tensor path and come back in their own mode."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got {type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    for ksize in kernel_size:
        if ksize % 2 == 0 or ksize < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [ksize * 0.15 + 0.35 for ksize in kernel_size]
    if sigma is not None and not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    if _is_tensor(img):
        return F_t.gaussian_blur(img, kernel_size, sigma)
    if not F_pil.is_pil_image(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
    out = F_t.gaussian_blur(pil_to_tensor(img), kernel_size, sigma)
    return to_pil_image(out, mode=img.mode)


def erase(img, i: int, j: int, h: int, w: int, v, inplace: bool = False):
    """Set img[..., i:i+h, j:j+w] = v."""
    if not _is_tensor(img):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace)
