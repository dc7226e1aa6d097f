"""torchvision.io (images): read/decode to uint8 (C, H, W) Tensors and encode/write PNG and JPEG, via Pillow."""
from __future__ import annotations

import io as _io
import os
from enum import Enum

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "decode_png", "decode_jpeg",
           "read_image", "encode_png", "encode_jpeg", "write_png", "write_jpeg"]


class ImageReadMode(Enum):
    """How decode_image converts: keep, or to gray, gray+alpha, RGB, RGB+alpha."""
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_PIL_MODE = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
             ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path) -> "_fg.Tensor":
    """The bytes of a file as a 1-D uint8 Tensor."""
    with open(os.fspath(path), "rb") as f:
        data = f.read()
    return _fg.from_numpy(np.frombuffer(data, np.uint8).copy())


def write_file(filename, data) -> None:
    with open(os.fspath(filename), "wb") as f:
        f.write(_bytes(data, "write_file"))


def _bytes(data, op):
    if not isinstance(data, _fg.Tensor) or data.dtype != _fg.uint8 or data.ndim != 1:
        raise RuntimeError(f"{op}: expected a 1-D uint8 tensor of encoded bytes")
    return data.numpy().tobytes()


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation: bool = False) -> "_fg.Tensor":
    """Decode encoded image bytes (1-D uint8 Tensor) or a file path to a uint8 (C, H, W) Tensor
    (16-bit PNGs give uint16)."""
    from PIL import Image, ImageOps
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    raw = open(os.fspath(input), "rb").read() if isinstance(input, (str, os.PathLike)) else _bytes(input, "decode_image")
    try:
        img = Image.open(_io.BytesIO(raw))
        img.load()
    except Exception as e:
        raise RuntimeError(f"decode_image: unsupported or corrupt image data ({e})") from None
    if apply_exif_orientation:
        img = ImageOps.exif_transpose(img)
    if mode != ImageReadMode.UNCHANGED:
        img = img.convert(_PIL_MODE[mode])
    elif img.mode in ("P", "1", "CMYK", "YCbCr"):
        img = img.convert("RGBA" if img.mode == "P" and "transparency" in img.info else
                          ("L" if img.mode == "1" else "RGB"))
    if img.mode in ("I;16", "I;16B", "I;16L"):
        a = np.array(img, np.uint16)
    elif img.mode == "I":
        a = np.array(img, np.int32).astype(np.uint16)
    else:
        a = np.array(img, np.uint8)
    if a.ndim == 2:
        a = a[:, :, None]
    return _fg.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))


decode_png = decode_jpeg = decode_image


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation: bool = False) -> "_fg.Tensor":
    """Read a PNG/JPEG/... file into a uint8 (C, H, W) Tensor."""
    return decode_image(read_file(path), mode, apply_exif_orientation)


def _to_pil(input, op):
    from PIL import Image
    if not isinstance(input, _fg.Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input)}")
    if input.dtype != _fg.uint8:
        raise RuntimeError(f"{op}: input tensor dtype should be uint8, got {input.dtype}")
    if input.ndim != 3:
        raise RuntimeError(f"{op}: input data should be a 3 dimensional (C, H, W) tensor, got shape "
                           f"{list(input.shape)}")
    c = input.shape[0]
    if c not in (1, 3) if op == "encode_jpeg" else c not in (1, 2, 3, 4):
        raise RuntimeError(f"{op}: the number of channels should be 1 or 3, got {c}")
    a = np.ascontiguousarray(input.detach().numpy().transpose(1, 2, 0))
    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[c]
    h, w = a.shape[:2]
    return Image.frombytes(mode, (w, h), a.tobytes())


def encode_png(input, compression_level: int = 6) -> "_fg.Tensor":
    """PNG bytes (1-D uint8 Tensor) of a uint8 (C, H, W) image."""
    if not 0 <= compression_level <= 9:
        raise ValueError(f"Compression level should be between 0 and 9, got {compression_level}")
    buf = _io.BytesIO()
    _to_pil(input, "encode_png").save(buf, format="PNG", compress_level=compression_level)
    return _fg.from_numpy(np.frombuffer(buf.getvalue(), np.uint8).copy())


def encode_jpeg(input, quality: int = 75) -> "_fg.Tensor":
    """JPEG bytes (1-D uint8 Tensor) of a uint8 (C, H, W) image with 1 or 3 channels; a list encodes each."""
    if isinstance(input, list):
        return [encode_jpeg(t, quality) for t in input]
    if not 1 <= quality <= 100:
        raise ValueError(f"Image quality should be a positive number between 1 and 100, got {quality}")
    buf = _io.BytesIO()
    _to_pil(input, "encode_jpeg").save(buf, format="JPEG", quality=quality)
    return _fg.from_numpy(np.frombuffer(buf.getvalue(), np.uint8).copy())


def write_png(input, filename, compression_level: int = 6) -> None:
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(input, filename, quality: int = 75) -> None:
    write_file(filename, encode_jpeg(input, quality))
