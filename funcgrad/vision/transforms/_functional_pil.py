"""Image operations on PIL images, through Pillow (what torchvision's PIL transforms wrap)."""
from __future__ import annotations

import numpy as np

try:
    from PIL import Image, ImageEnhance, ImageOps
except ImportError:  # pragma: no cover - Pillow is the optional `vision` extra
    Image = ImageEnhance = ImageOps = None


def _require():
    if Image is None:
        raise ImportError("funcgrad.vision needs Pillow for PIL images: pip install 'funcgrad[vision]'")


def is_pil_image(img) -> bool:
    return Image is not None and isinstance(img, Image.Image)


def _check(img):
    if not is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def get_dimensions(img) -> list:
    if is_pil_image(img):
        c = len(img.getbands()) if hasattr(img, "getbands") else img.channels
        w, h = img.size
        return [c, h, w]
    raise TypeError(f"Unexpected type {type(img)}")


def _fill(fill, img, name="fillcolor"):
    """Fill in the form Pillow wants for img's mode (a number for one band, a tuple otherwise)."""
    if fill is None:
        fill = 0
    bands = len(img.getbands())
    if isinstance(fill, (int, float)) and bands > 1:
        fill = tuple([fill] * bands)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * bands
        if len(fill) != bands:
            raise ValueError(f"The number of elements in 'fill' does not match the number of bands of the image "
                             f"({len(fill)} != {bands})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(v) for v in fill) if isinstance(fill, tuple) else int(fill)
    return {name: fill}


def hflip(img):
    _check(img)
    return img.transpose(Image.FLIP_LEFT_RIGHT)


def vflip(img):
    _check(img)
    return img.transpose(Image.FLIP_TOP_BOTTOM)


def crop(img, top: int, left: int, height: int, width: int):
    _check(img)
    return img.crop((left, top, left + width, top + height))


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """padding = [left, top, right, bottom]."""
    _check(img)
    left, top, right, bottom = padding
    if padding_mode == "constant":
        opts = _fill(fill, img, name="fill")
        if img.mode == "P":
            pal = img.getpalette()
            out = ImageOps.expand(img, border=(left, top, right, bottom), **opts)
            out.putpalette(pal)
            return out
        return ImageOps.expand(img, border=(left, top, right, bottom), **opts)
    # negative padding crops first
    if min(padding) < 0:
        w, h = img.size
        img = img.crop((max(-left, 0), max(-top, 0), w - max(-right, 0), h - max(-bottom, 0)))
        left, top, right, bottom = (max(p, 0) for p in (left, top, right, bottom))
    pal = img.getpalette() if img.mode == "P" else None
    arr = np.asarray(img)
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    out = Image.fromarray(np.pad(arr, widths, mode=padding_mode), mode=None if img.mode != "P" else "P")
    if pal is not None:
        out.putpalette(pal)
    return out


def resize(img, size, interpolation):
    """size = [h, w]."""
    _check(img)
    return img.resize((int(size[1]), int(size[0])), interpolation)


def affine(img, matrix, interpolation, fill=None):
    _check(img)
    return img.transform(img.size, Image.AFFINE, tuple(matrix), interpolation, **_fill(fill, img))


def rotate(img, angle: float, interpolation, expand: bool = False, center=None, fill=None):
    _check(img)
    return img.rotate(angle, interpolation, expand, center, **_fill(fill, img))


def adjust_brightness(img, factor: float):
    _check(img)
    return ImageEnhance.Brightness(img).enhance(factor)


def adjust_contrast(img, factor: float):
    _check(img)
    return ImageEnhance.Contrast(img).enhance(factor)


def adjust_saturation(img, factor: float):
    _check(img)
    return ImageEnhance.Color(img).enhance(factor)


def adjust_hue(img, hue_factor: float):
    _check(img)
    mode = img.mode
    if mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    hh = np.array(h, dtype=np.uint8)
    with np.errstate(over="ignore"):
        hh = hh + np.uint8(int(hue_factor * 255) % 256)
    h = Image.fromarray(hh, "L")
    return Image.merge("HSV", (h, s, v)).convert(mode)


def adjust_gamma(img, gamma: float, gain: float = 1.0):
    _check(img)
    mode = img.mode
    img = img.convert("RGB")
    lut = [int((255 + 1 - 1e-3) * gain * pow(ele / 255.0, gamma)) for ele in range(256)] * 3
    return img.point(lut).convert(mode)


def to_grayscale(img, num_output_channels: int = 1):
    _check(img)
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        a = np.asarray(img.convert("L"))
        return Image.fromarray(np.dstack([a, a, a]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")


def invert(img):
    _check(img)
    return ImageOps.invert(img)


def perspective(img, coeffs, interpolation, fill=None):
    _check(img)
    return img.transform(img.size, Image.PERSPECTIVE, tuple(coeffs), interpolation, **_fill(fill, img))


def posterize(img, bits: int):
    _check(img)
    return ImageOps.posterize(img, bits)


def solarize(img, threshold: float):
    _check(img)
    return ImageOps.solarize(img, threshold)


def autocontrast(img):
    _check(img)
    return ImageOps.autocontrast(img)


def equalize(img):
    _check(img)
    return ImageOps.equalize(img)


def adjust_sharpness(img, factor: float):
    _check(img)
    return ImageEnhance.Sharpness(img).enhance(factor)
