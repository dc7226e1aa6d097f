"""Image operations on funcgrad Tensors (..., C, H, W), built from Tensor ops so autograd flows through them.

Index maps and resampling weights depend only on shapes and parameters, so they are computed with NumPy and
applied with gathers and matrix products: one vectorised step per axis, no loops over pixels.
"""
from __future__ import annotations

import math

import numpy as np

import funcgrad as _fg

_INT_DTYPES = None


def _is_int(dtype) -> bool:
    return not (dtype.is_floating_point or dtype.is_complex)


def max_value(dtype) -> float:
    """The value of full intensity: 1.0 for floats, the dtype's maximum for integers (bool: 1)."""
    if dtype == _fg.bool:
        return 1
    if not _is_int(dtype):
        return 1.0
    return int(_fg.iinfo(dtype).max)


def assert_image_tensor(img) -> None:
    if not isinstance(img, _fg.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img) -> list:
    assert_image_tensor(img)
    c = 1 if img.ndim == 2 else img.shape[-3]
    return [c, img.shape[-2], img.shape[-1]]


def _idx(a) -> "_fg.Tensor":
    return _fg.as_tensor(np.ascontiguousarray(a, dtype=np.int64))


def _gather2d(img, rows, cols):
    """img[..., rows, :][..., cols] for integer index arrays."""
    out = img
    if not (len(rows) == img.shape[-2] and np.array_equal(rows, np.arange(img.shape[-2]))):
        out = out.index_select(-2, _idx(rows))
    if not (len(cols) == img.shape[-1] and np.array_equal(cols, np.arange(img.shape[-1]))):
        out = out.index_select(-1, _idx(cols))
    return out


# --- flips, crops, padding -------------------------------------------------------------------------------
def hflip(img):
    assert_image_tensor(img)
    return img.flip(-1)


def vflip(img):
    assert_image_tensor(img)
    return img.flip(-2)


def crop(img, top: int, left: int, height: int, width: int):
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        ltrb = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                max(right - max(w, left), 0), max(bottom - max(h, top), 0)]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], ltrb, fill=0)
    return img[..., top:bottom, left:right]


_NP_MODES = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """padding = [left, top, right, bottom] (already parsed); negative padding crops."""
    assert_image_tensor(img)
    if fill is None:
        fill = 0
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    left, top, right, bottom = padding
    h, w = img.shape[-2], img.shape[-1]
    # negative padding: crop first
    img = img[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
    left, top, right, bottom = (max(p, 0) for p in (left, top, right, bottom))
    if left == top == right == bottom == 0:
        return img
    h, w = img.shape[-2], img.shape[-1]
    if padding_mode == "constant":
        rows = np.pad(np.arange(h), (top, bottom), constant_values=-1)
        cols = np.pad(np.arange(w), (left, right), constant_values=-1)
        out = _gather2d(img, np.maximum(rows, 0), np.maximum(cols, 0))
        mask = _fg.as_tensor(np.outer(rows >= 0, cols >= 0))
        if img.dtype == _fg.bool:
            fill_t = _fg.tensor(bool(fill))
        else:
            fill_t = _fg.tensor(fill, dtype=img.dtype)
        return _fg.where(mask, out, fill_t)
    if padding_mode == "reflect" and (max(top, bottom) >= h or max(left, right) >= w):
        raise RuntimeError(f"pad: padding size should be less than the corresponding input dimension, but got "
                           f"padding {[left, top, right, bottom]} for input of shape {list(img.shape)}")
    mode = _NP_MODES[padding_mode]
    rows = np.pad(np.arange(h), (top, bottom), mode=mode)
    cols = np.pad(np.arange(w), (left, right), mode=mode)
    return _gather2d(img, rows, cols)


# --- resampling weights ----------------------------------------------------------------------------------
def _cubic(x, a):
    x = np.abs(x)
    return np.where(x <= 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))


def _nearest_index(n_in: int, n_out: int, exact: bool) -> np.ndarray:
    dst = np.arange(n_out)
    if n_out == n_in and not exact:
        return dst
    if n_out == 2 * n_in and not exact:
        return dst >> 1
    scale = np.float32(n_in) / np.float32(n_out)
    pos = (dst.astype(np.float32) + np.float32(0.5 if exact else 0.0)) * scale
    return np.minimum(np.floor(pos).astype(np.int64), n_in - 1)


def _weights(n_in: int, n_out: int, mode: str, antialias: bool) -> np.ndarray:
    """(n_out, n_in) matrix W so that out = W @ in along one axis, as torch.nn.functional.interpolate does
    with align_corners=False (bilinear / bicubic, with or without antialiasing)."""
    W = np.zeros((n_out, n_in), np.float64)
    scale = n_in / n_out
    dst = np.arange(n_out)
    if antialias:
        size = 2 if mode == "bilinear" else 4
        support = size / 2 * scale if scale >= 1.0 else size / 2
        inv = 1.0 / scale if scale >= 1.0 else 1.0
        center = scale * (dst + 0.5)
        xmin = np.maximum((center - support + 0.5).astype(np.int64), 0)
        xmax = np.minimum((center + support + 0.5).astype(np.int64), n_in)
        k = int(np.max(xmax - xmin)) if n_out else 0
        j = xmin[:, None] + np.arange(k)[None, :]
        x = (j - center[:, None] + 0.5) * inv
        f = np.maximum(1.0 - np.abs(x), 0.0) if mode == "bilinear" else _cubic(x, -0.5)
        f = np.where(j < xmax[:, None], f, 0.0)
        tot = f.sum(1, keepdims=True)
        f = f / np.where(tot == 0, 1.0, tot)
        np.add.at(W, (np.repeat(dst, k), np.minimum(j, n_in - 1).ravel()), f.ravel())
        return W
    src = (dst + 0.5) * scale - 0.5
    if mode == "bilinear":
        src = np.maximum(src, 0.0)
        i0 = np.floor(src).astype(np.int64)
        lam = src - i0
        i0 = np.minimum(i0, n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        np.add.at(W, (dst, i0), 1.0 - lam)
        np.add.at(W, (dst, i1), lam)
        return W
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    for off in (-1, 0, 1, 2):
        np.add.at(W, (dst, np.clip(i0 + off, 0, n_in - 1)), _cubic(t - off, -0.75))
    return W


def resize(img, size, interpolation: str = "bilinear", antialias: bool = True):
    """Resize the last two axes to size = [h, w] (torch.nn.functional.interpolate semantics)."""
    assert_image_tensor(img)
    oh, ow = int(size[0]), int(size[1])
    h, w = img.shape[-2], img.shape[-1]
    if interpolation in ("nearest", "nearest-exact"):
        exact = interpolation == "nearest-exact"
        return _gather2d(img, _nearest_index(h, oh, exact), _nearest_index(w, ow, exact))
    if interpolation not in ("bilinear", "bicubic"):
        raise ValueError(f"Tensor images only support nearest, nearest-exact, bilinear and bicubic interpolation, "
                         f"got {interpolation}")
    dtype = img.dtype
    x = img if dtype.is_floating_point else img.to(_fg.float32)
    wh = _fg.as_tensor(_weights(h, oh, interpolation, antialias)).to(x.dtype)
    ww = _fg.as_tensor(_weights(w, ow, interpolation, antialias)).to(x.dtype)
    out = _fg.matmul(_fg.matmul(wh, x), ww.t())
    if not dtype.is_floating_point:
        if interpolation == "bicubic" or antialias:
            out = out.clamp(0, max_value(dtype))
        out = out.round().to(dtype)
    return out


# --- geometric warps -------------------------------------------------------------------------------------
def affine_output_size(matrix, w: int, h: int):
    pts = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                    [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]], np.float32)
    theta = np.asarray(matrix, np.float32).reshape(2, 3)
    new = pts @ theta.T
    tol = 1e-4
    cmax = np.ceil(np.trunc(new.max(0) / tol) * tol)
    cmin = np.floor(np.trunc(new.min(0) / tol) * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def _warp(img, theta, ow: int, oh: int, interpolation: str, fill):
    """Sample img at theta @ (x, y, 1) for each output pixel, coordinates centred on the images
    (grid_sample with align_corners=False and zero padding); pixels that fall outside take `fill`."""
    h, w = img.shape[-2], img.shape[-1]
    theta = np.asarray(theta, np.float32).reshape(2, 3)
    xs = np.arange(ow, dtype=np.float32) - np.float32(ow * 0.5) + np.float32(0.5)
    ys = np.arange(oh, dtype=np.float32) - np.float32(oh * 0.5) + np.float32(0.5)
    X, Y = np.meshgrid(xs, ys)
    base = np.stack([X, Y, np.ones_like(X)], -1)
    g = base @ (theta.T / np.array([0.5 * w, 0.5 * h], np.float32))
    sx = ((g[..., 0] + 1) * w - 1) / 2
    sy = ((g[..., 1] + 1) * h - 1) / 2
    dtype = img.dtype
    x = img if dtype.is_floating_point else img.to(_fg.float32)
    lead = tuple(x.shape[:-2])
    flat = x.reshape(*lead, h * w)
    if interpolation == "nearest":
        ix, iy = np.rint(sx).astype(np.int64), np.rint(sy).astype(np.int64)
        corners = [(ix, iy, np.ones_like(sx))]
    elif interpolation == "bilinear":
        x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
        fx, fy = sx - x0, sy - y0
        corners = [(x0, y0, (1 - fx) * (1 - fy)), (x0 + 1, y0, fx * (1 - fy)),
                   (x0, y0 + 1, (1 - fx) * fy), (x0 + 1, y0 + 1, fx * fy)]
    else:
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")
    out = 0
    cover = np.zeros((oh, ow), np.float32)
    for cx, cy, wt in corners:
        ok = (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
        wt = np.where(ok, wt, 0).astype(np.float32)
        cover += wt
        idx = _idx((np.clip(cy, 0, h - 1) * w + np.clip(cx, 0, w - 1)).ravel())
        vals = flat.index_select(-1, idx).reshape(*lead, oh, ow)
        out = out + vals * _fg.as_tensor(wt).to(x.dtype)
    if fill is not None:
        fill_t = _fg.tensor(fill, dtype=x.dtype).reshape(-1, 1, 1) if len(fill) > 1 else float(fill[0])
        if interpolation == "nearest":
            keep = _fg.as_tensor(cover >= 0.5)
            out = _fg.where(keep, out, fill_t * _fg.ones_like(out))
        else:
            m = _fg.as_tensor(cover).to(x.dtype)
            out = out * m + (1.0 - m) * fill_t
    if not dtype.is_floating_point:
        out = out.round().to(dtype)
    return out


def affine(img, matrix, interpolation: str = "nearest", fill=None):
    assert_image_tensor(img)
    h, w = img.shape[-2], img.shape[-1]
    return _warp(img, matrix, w, h, interpolation, fill)


def rotate(img, matrix, interpolation: str = "nearest", expand: bool = False, fill=None):
    assert_image_tensor(img)
    h, w = img.shape[-2], img.shape[-1]
    ow, oh = affine_output_size(matrix, w, h) if expand else (w, h)
    return _warp(img, matrix, ow, oh, interpolation, fill)


# --- colour ----------------------------------------------------------------------------------------------
def _blend(img1, img2, ratio: float):
    bound = max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def rgb_to_grayscale(img, num_output_channels: int = 1):
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    c = img.shape[-3]
    if c not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {c}")
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if c == 3:
        r, g, b = img.unbind(-3)
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    else:
        gray = img.clone()
    if num_output_channels == 3:
        return gray.expand(*gray.shape[:-3], 3, *gray.shape[-2:])
    return gray


def _check_channels(img, permitted):
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but found {c}")


def adjust_brightness(img, brightness_factor: float):
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _check_channels(img, [1, 3])
    return _blend(img, _fg.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor: float):
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    _check_channels(img, [3, 1])
    c = get_dimensions(img)[0]
    fdt = img.dtype if img.dtype.is_floating_point else _fg.float32
    src = rgb_to_grayscale(img) if c == 3 else img
    mean = src.to(fdt).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor: float):
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    _check_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb2hsv(img):
    r, g, b = img.unbind(-3)
    maxc = img.amax(-3)
    minc = img.amin(-3)
    eqc = maxc == minc
    cr = maxc - minc
    ones = _fg.ones_like(maxc)
    s = cr / _fg.where(eqc, ones, maxc)
    div = _fg.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / div, (maxc - g) / div, (maxc - b) / div
    is_r = maxc == r
    is_g = (maxc == g) & ~is_r
    h = _fg.where(is_r, bc - gc, _fg.where(is_g, 2.0 + rc - bc, 4.0 + gc - rc))
    h = _fg.remainder(h / 6.0 + 1.0, 1.0)
    return h, s, maxc


def _hsv2rgb(h, s, v):
    i = _fg.floor(h * 6.0)
    f = h * 6.0 - i
    i = _fg.remainder(i, 6.0)
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)
    # sector k -> (r, g, b) picks from (v, q, p, t)
    table = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    out = []
    for ch in range(3):
        acc = _fg.zeros_like(v)
        for k in range(6):
            acc = _fg.where(i == k, table[k][ch], acc)
        out.append(acc)
    return _fg.stack(out, -3)


def adjust_hue(img, hue_factor: float):
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    assert_image_tensor(img)
    _check_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    dtype = img.dtype
    x = img.to(_fg.float32) / 255.0 if dtype == _fg.uint8 else img
    h, s, v = _rgb2hsv(x)
    h = _fg.remainder(h + hue_factor, 1.0)
    out = _hsv2rgb(h, s, v)
    if dtype == _fg.uint8:
        out = (out * 255.0).to(dtype)
    return out


def adjust_gamma(img, gamma: float, gain: float = 1.0):
    assert_image_tensor(img)
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    dtype = img.dtype
    x = img if dtype.is_floating_point else img.to(_fg.float32) / max_value(dtype)
    out = (gain * x ** gamma).clamp(0, 1)
    if not dtype.is_floating_point:
        out = (out * (max_value(dtype) + 1.0 - 1e-3)).to(dtype)
    return out


def invert(img):
    assert_image_tensor(img)
    _check_channels(img, [1, 3])
    return max_value(img.dtype) - img


# --- filtering -------------------------------------------------------------------------------------------
def _gaussian_kernel1d(k: int, sigma: float) -> np.ndarray:
    half = (k - 1) * 0.5
    x = np.linspace(-half, half, k, dtype=np.float32)
    pdf = np.exp(-0.5 * (x / np.float32(sigma)) ** 2)
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma):
    from funcgrad.nn import functional as F
    assert_image_tensor(img)
    dtype = img.dtype
    x = img if dtype.is_floating_point else img.to(_fg.float32)
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0])
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1])
    k2 = np.outer(ky, kx).astype(np.float32)
    lead = tuple(x.shape[:-3]) if x.ndim >= 3 else ()
    c = x.shape[-3] if x.ndim >= 3 else 1
    h, w = x.shape[-2], x.shape[-1]
    x4 = x.reshape(-1, c, h, w)
    px, py = kernel_size[0] // 2, kernel_size[1] // 2
    x4 = pad(x4, [px, py, px, py], padding_mode="reflect")
    weight = _fg.as_tensor(np.broadcast_to(k2, (c, 1) + k2.shape).copy()).to(x.dtype)
    out = F.conv2d(x4, weight, groups=c)
    out = out.reshape(*img.shape) if img.ndim >= 3 else out.reshape(h, w)
    if not dtype.is_floating_point:
        out = out.round().to(dtype)
    return out


def erase(img, i: int, j: int, h: int, w: int, v, inplace: bool = False):
    assert_image_tensor(img)
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


def convert_image_dtype(image, dtype=_fg.float32):
    if image.dtype == dtype:
        return image
    if image.dtype.is_floating_point:
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == _fg.float32 and dtype in (_fg.int32, _fg.int64)) or \
                (image.dtype == _fg.float64 and dtype == _fg.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3
        mx = float(max_value(dtype))
        return image.mul(mx + 1.0 - eps).to(dtype)
    in_max = int(max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / in_max
    out_max = int(max_value(dtype))
    if in_max > out_max:
        factor = (in_max + 1) // (out_max + 1)
        return _fg.div(image, factor, rounding_mode="floor").to(dtype)
    factor = (out_max + 1) // (in_max + 1)
    return image.to(dtype) * factor
