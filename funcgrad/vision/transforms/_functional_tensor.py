"""Image operations on funcgrad Tensors (..., C, H, W), built from Tensor ops so autograd flows through them.

Padding and (non-antialiased) resizing go through torch.nn.functional.pad / interpolate; what those lack
(symmetric padding, antialiased resizing, warps) uses index maps and weights that depend only on shapes and
parameters, computed with NumPy and applied with gathers and matrix products: no loops over pixels.
"""
from __future__ import annotations

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from funcgrad.nn import functional as F

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


def _as_3d(img):
    """img viewed as (N, H, W) -- the shape F.pad / F.interpolate take -- and a function restoring its shape."""
    shape = tuple(img.shape)
    x = img.reshape(-1, shape[-2], shape[-1])
    return x, lambda out: out.reshape(*shape[:-2], out.shape[-2], out.shape[-1])


def _pad_symmetric(img, padding):
    """Symmetric padding (edge pixel repeated), which F.pad does not offer: one gather per axis."""
    left, top, right, bottom = padding
    h, w = img.shape[-2], img.shape[-1]
    rows = np.pad(np.arange(h), (top, bottom), mode="symmetric")
    cols = np.pad(np.arange(w), (left, right), mode="symmetric")
    return img.index_select(-2, _idx(rows)).index_select(-1, _idx(cols))


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """padding = [left, top, right, bottom] (already parsed); negative padding crops first.

    constant / edge / reflect go through torch.nn.functional.pad (edge is its 'replicate')."""
    assert_image_tensor(img)
    if fill is None:
        fill = 0
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    left, top, right, bottom = padding
    h, w = img.shape[-2], img.shape[-1]
    img = img[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
    padding = [max(p, 0) for p in (left, top, right, bottom)]
    if not any(padding):
        return img
    if padding_mode == "symmetric":
        return _pad_symmetric(img, padding)
    left, top, right, bottom = padding
    x, restore = _as_3d(img)
    if padding_mode == "constant":
        value = bool(fill) if img.dtype == _fg.bool else fill
        return restore(F.pad(x, [left, right, top, bottom], mode="constant", value=value))
    mode = {"edge": "replicate", "reflect": "reflect"}[padding_mode]
    return restore(F.pad(x, [left, right, top, bottom], mode=mode))


# --- resizing --------------------------------------------------------------------------------------------
def resize(img, size, interpolation: str = "bilinear", antialias: bool = True):
    """Resize the last two axes to size = [h, w] (torch.nn.functional.interpolate semantics, align_corners
    False); integer images are resampled in float32 and rounded back (bicubic / antialiased results clamped)."""
    assert_image_tensor(img)
    oh, ow = int(size[0]), int(size[1])
    if interpolation not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise ValueError(f"Tensor images only support nearest, nearest-exact, bilinear and bicubic interpolation, "
                         f"got {interpolation}")
    x, restore = _as_3d(img)
    if interpolation in ("nearest", "nearest-exact"):
        return restore(F.interpolate(x.unsqueeze(0), size=[oh, ow], mode=interpolation).squeeze(0))
    dtype = img.dtype
    if dtype not in (_fg.float32, _fg.float64):  # (torchvision's _cast_squeeze_in: half types too)
        x = x.to(_fg.float32)
    out = F.interpolate(x.unsqueeze(0), size=[oh, ow], mode=interpolation, align_corners=False,
                        antialias=antialias).squeeze(0)
    if not dtype.is_floating_point:
        if interpolation == "bicubic" or antialias:
            out = out.clamp(0, max_value(dtype))
        out = out.round()
    return restore(out.to(dtype))


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
    return _sample(img, sx, sy, interpolation, fill)


def _sample(img, sx, sy, interpolation: str, fill):
    """out[..., i, j] = img at source pixel (sx[i, j], sy[i, j]) (pixel centres at integers), as grid_sample
    with zero padding; with `fill`, pixels whose taps fall outside blend towards fill (nearest: replaced)."""
    h, w = img.shape[-2], img.shape[-1]
    oh, ow = sx.shape
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


def perspective(img, coeffs, interpolation: str = "bilinear", fill=None):
    """Output pixel (x, y) reads the input at ((a x + b y + c) / (g x + h y + 1), (d x + e y + f) / (...)),
    coeffs = [a, b, c, d, e, f, g, h] in pixel-edge coordinates (as PIL's Image.PERSPECTIVE)."""
    assert_image_tensor(img)
    h, w = img.shape[-2], img.shape[-1]
    c = np.asarray(coeffs, np.float32)
    X, Y = np.meshgrid(np.arange(w, dtype=np.float32) + np.float32(0.5),
                       np.arange(h, dtype=np.float32) + np.float32(0.5))
    den = c[6] * X + c[7] * Y + np.float32(1.0)
    sx = (c[0] * X + c[1] * Y + c[2]) / den - np.float32(0.5)
    sy = (c[3] * X + c[4] * Y + c[5]) / den - np.float32(0.5)
    return _sample(img, sx, sy, interpolation, fill)


def _check_ndim3(img):
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")


def invert(img):
    assert_image_tensor(img)
    _check_ndim3(img)
    _check_channels(img, [1, 3])
    return max_value(img.dtype) - img


def posterize(img, bits: int):
    """Keep the top `bits` bits of each uint8 value."""
    assert_image_tensor(img)
    _check_ndim3(img)
    if img.dtype != _fg.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _check_channels(img, [1, 3])
    return img & ((256 - 2 ** (8 - bits)) & 0xFF)


def solarize(img, threshold: float):
    """Invert the values at or above threshold."""
    assert_image_tensor(img)
    _check_ndim3(img)
    _check_channels(img, [1, 3])
    if threshold > max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    return _fg.where(img >= threshold, invert(img), img)


def autocontrast(img):
    """Stretch each channel linearly so its minimum maps to 0 and its maximum to full intensity
    (constant channels are left as they are)."""
    assert_image_tensor(img)
    _check_ndim3(img)
    _check_channels(img, [1, 3])
    bound = max_value(img.dtype)
    fdt = img.dtype if img.dtype.is_floating_point else _fg.float32
    lo = img.amin(dim=(-2, -1), keepdim=True).to(fdt)
    hi = img.amax(dim=(-2, -1), keepdim=True).to(fdt)
    flat = hi == lo
    lo = _fg.where(flat, _fg.zeros_like(lo), lo)
    scale = _fg.where(flat, _fg.ones_like(hi), bound / _fg.where(flat, _fg.ones_like(hi), hi - lo))
    return ((img - lo) * scale).clamp(0, bound).to(img.dtype)


def equalize(img):
    """Histogram equalisation of each channel of a uint8 image (PIL's ImageOps.equalize lookup table),
    all channels of all images at once: one bincount over offset values, one cumsum, one gather."""
    assert_image_tensor(img)
    _check_ndim3(img)
    if img.dtype != _fg.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _check_channels(img, [1, 3])
    shape = tuple(img.shape)
    x = img.reshape(-1, shape[-2] * shape[-1]).to(_fg.int64)
    n = x.shape[0]
    if n == 0 or x.shape[1] == 0:
        return img
    offs = (_fg.arange(n) * 256).unsqueeze(1)
    hist = _fg.bincount((x + offs).reshape(-1), minlength=n * 256).reshape(n, 256)
    last = hist.gather(1, x.amax(1, keepdim=True))          # count of each channel's brightest value
    step = _fg.div(x.shape[1] - last, 255, rounding_mode="floor")
    safe = _fg.where(step == 0, _fg.ones_like(step), step)
    lut = _fg.div(_fg.cumsum(hist, 1) + _fg.div(safe, 2, rounding_mode="floor"), safe, rounding_mode="floor")
    lut = _fg.cat([_fg.zeros_like(lut[:, :1]), lut[:, :-1]], 1).clamp(0, 255)
    out = _fg.where(step == 0, x, lut.gather(1, x))
    return out.to(_fg.uint8).reshape(*shape)


def _blurred_degenerate(img):
    """The image smoothed by PIL's SMOOTH kernel [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13 inside a
    one-pixel border that keeps the original values."""
    dtype = img.dtype
    fdt = dtype if dtype.is_floating_point else _fg.float32
    k = np.ones((3, 3))
    k[1, 1] = 5.0
    k /= k.sum()
    c, h, w = get_dimensions(img)
    x = img.reshape(-1, c, h, w).to(fdt)
    weight = _fg.as_tensor(np.broadcast_to(k, (c, 1, 3, 3)).copy()).to(fdt)
    blurred = F.conv2d(x, weight, groups=c)
    if not dtype.is_floating_point:
        blurred = blurred.round()
    blurred = F.pad(blurred.to(dtype), [1, 1, 1, 1]).reshape(*img.shape)
    inner = np.zeros((h, w), bool)
    inner[1:-1, 1:-1] = True
    return _fg.where(_fg.as_tensor(inner), blurred, img)


def adjust_sharpness(img, sharpness_factor: float):
    """Blend with the smoothed image: factor 0 blurs, 1 is the original, 2 sharpens."""
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    assert_image_tensor(img)
    _check_channels(img, [1, 3])
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    return _blend(img, _blurred_degenerate(img), sharpness_factor)


# --- filtering -------------------------------------------------------------------------------------------
def _gaussian_kernel1d(k: int, sigma: float) -> np.ndarray:
    half = (k - 1) * 0.5
    x = np.linspace(-half, half, k, dtype=np.float32)
    pdf = np.exp(-0.5 * (x / np.float32(sigma)) ** 2)
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma):
    assert_image_tensor(img)
    dtype = img.dtype
    x = img if dtype.is_floating_point else img.to(_fg.float32)
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0])
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1])
    k2 = np.outer(ky, kx).astype(np.float32)
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
