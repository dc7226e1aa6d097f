"""torchvision.utils: image grids, saving, and drawing boxes / masks onto uint8 image Tensors."""
from __future__ import annotations

import math
import pathlib
import warnings
from typing import BinaryIO, List, Optional, Tuple, Union

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

__all__ = ["make_grid", "save_image", "draw_bounding_boxes", "draw_segmentation_masks"]


def _norm(t, low, high):
    t = t.clamp(min=low, max=high)
    return (t - low) / max(high - low, 1e-5)


def make_grid(tensor, nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range: Optional[Tuple[int, int]] = None, scale_each: bool = False,
              pad_value: float = 0.0, **kwargs):
    """Tile a (B, C, H, W) batch (or a list of images) into one (3|C, H', W') image, `nrow` images per row,
    `padding` pixels of `pad_value` between and around them; normalize maps value_range (default: min..max,
    per image with scale_each) to [0, 1]. Differentiable with respect to the images."""
    if not (isinstance(tensor, _fg.Tensor) or
            (isinstance(tensor, list) and all(isinstance(t, _fg.Tensor) for t in tensor))):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if "range" in kwargs:
        warnings.warn("The parameter 'range' is deprecated; please use 'value_range' instead.")
        value_range = kwargs["range"]
    if isinstance(tensor, list):
        tensor = _fg.stack(tensor, dim=0)
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = _fg.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = _fg.cat((tensor, tensor, tensor), 1)
    if normalize:
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        if scale_each:
            if value_range is not None:
                tensor = _norm(tensor, value_range[0], value_range[1])
            else:
                low = tensor.detach().amin(dim=(1, 2, 3)).tolist()
                high = tensor.detach().amax(dim=(1, 2, 3)).tolist()
                scale = [1.0 / max(h - lo, 1e-5) for lo, h in zip(low, high)]
                lo_t = _fg.tensor(low, dtype=tensor.dtype).view(-1, 1, 1, 1)
                hi_t = _fg.tensor(high, dtype=tensor.dtype).view(-1, 1, 1, 1)
                tensor = (_fg.minimum(_fg.maximum(tensor, lo_t), hi_t) - lo_t) * \
                    _fg.tensor(scale, dtype=tensor.dtype).view(-1, 1, 1, 1)
        else:
            if value_range is not None:
                tensor = _norm(tensor, value_range[0], value_range[1])
            else:
                tensor = _norm(tensor, float(tensor.min()), float(tensor.max()))
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    c, h, w = tensor.size(1), tensor.size(2), tensor.size(3)
    p = int(padding)
    # each cell: the image with `padding` rows/cols of pad_value above and to its left
    cells = tensor
    if ymaps * xmaps > nmaps:
        blank = _fg.full((ymaps * xmaps - nmaps, c, h, w), pad_value, dtype=tensor.dtype)
        cells = _fg.cat((cells, blank), 0)
    if p:
        cells = _fg.cat((_fg.full((cells.size(0), c, p, w), pad_value, dtype=tensor.dtype), cells), 2)
        cells = _fg.cat((_fg.full((cells.size(0), c, h + p, p), pad_value, dtype=tensor.dtype), cells), 3)
    if ymaps * xmaps > nmaps:  # missing images leave the whole cell at pad_value
        pass
    grid = cells.reshape(ymaps, xmaps, c, h + p, w + p).permute(2, 0, 3, 1, 4).reshape(c, ymaps * (h + p),
                                                                                       xmaps * (w + p))
    if p:
        grid = _fg.cat((grid, _fg.full((c, p, grid.size(2)), pad_value, dtype=tensor.dtype)), 1)
        grid = _fg.cat((grid, _fg.full((c, grid.size(1), p), pad_value, dtype=tensor.dtype)), 2)
    return grid


def save_image(tensor, fp: Union[str, pathlib.Path, BinaryIO], format: Optional[str] = None, **kwargs) -> None:
    """make_grid(tensor, **kwargs), scaled from [0, 1] to uint8 (x*255 + 0.5, clamped), saved with Pillow."""
    from PIL import Image
    grid = make_grid(tensor, **kwargs)
    nd = (grid.detach() * 255 + 0.5).clamp(0, 255).permute(1, 2, 0).to(_fg.uint8).numpy()
    if nd.shape[2] == 1:
        nd = nd[:, :, 0]
    Image.fromarray(np.ascontiguousarray(nd)).save(fp, format=format)


def _palette(n: int):
    base = np.array([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1], np.int64)
    return [tuple(int(v) for v in (i * base) % 255) for i in range(n)]


def _color(c):
    from PIL import ImageColor
    return ImageColor.getrgb(c) if isinstance(c, str) else tuple(int(v) for v in c)


def _parse_colors(colors, n: int):
    if colors is None:
        return _palette(n)
    if isinstance(colors, list):
        if len(colors) < n:
            raise ValueError(f"Number of colors must be equal or larger than the number of objects, but got "
                             f"{len(colors)} < {n}.")
        return [_color(c) for c in colors[:n]]
    return [_color(colors)] * n


def _check_image(image):
    if not isinstance(image, _fg.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if not (image.dtype == _fg.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.size(0) not in {1, 3}:
        raise ValueError("Only grayscale and RGB images are supported")


def draw_bounding_boxes(image, boxes, labels: Optional[List[str]] = None, colors=None, fill: bool = False,
                        width: int = 1, font: Optional[str] = None, font_size: Optional[int] = None,
                        label_colors=None):
    """Draw (xmin, ymin, xmax, ymax) boxes (and labels) on a (C, H, W) uint8 or float image with Pillow."""
    from PIL import Image, ImageDraw, ImageFont
    _check_image(image)
    if boxes.dim() != 2 or boxes.size(1) != 4:
        raise ValueError(f"boxes must be of shape (num_boxes, 4), got {tuple(boxes.shape)}")
    b = boxes.detach().numpy()
    if ((b[:, 0] > b[:, 2]) | (b[:, 1] > b[:, 3])).any():
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use torchvision.ops.box_convert "
                         "to convert them")
    n = b.shape[0]
    if n == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * n
    elif len(labels) != n:
        raise ValueError(f"Number of boxes ({n}) and labels ({len(labels)}) mismatch. Please specify labels for "
                         "each box.")
    cols = _parse_colors(colors, n)
    lcols = _parse_colors(label_colors, n) if label_colors is not None else cols
    txt_font = (ImageFont.load_default() if font is None
                else ImageFont.truetype(font=font, size=font_size or 10))
    orig_dtype = image.dtype
    if image.is_floating_point():
        image = (image * 255).to(_fg.uint8)
    if image.size(0) == 1:
        image = image.expand(3, -1, -1)
    nd = np.ascontiguousarray(image.detach().permute(1, 2, 0).numpy())
    img = Image.fromarray(nd)
    draw = ImageDraw.Draw(img, "RGBA" if fill else None)
    for box, color, lcolor, label in zip(b.astype(np.int64).tolist(), cols, lcols, labels):
        if fill:
            draw.rectangle(box, width=width, outline=color, fill=color + (100,))
        else:
            draw.rectangle(box, width=width, outline=color)
        if label is not None:
            margin = width + 1
            draw.text((box[0] + margin, box[1] + margin), label, fill=lcolor, font=txt_font)
    out = _fg.from_numpy(np.ascontiguousarray(np.array(img).transpose(2, 0, 1)))
    if orig_dtype.is_floating_point:
        out = out.to(orig_dtype) / 255
    return out


def draw_segmentation_masks(image, masks, alpha: float = 0.8, colors=None):
    """Blend boolean masks ((N, H, W) or (H, W)) onto an RGB image: out = image*(1-alpha) + colored*alpha,
    later masks painted over earlier ones."""
    _check_image(image)
    if image.size(0) != 3:
        raise ValueError("Pass an RGB image. Other Image formats are not supported")
    if masks.ndim == 2:
        masks = masks[None]
    if masks.ndim != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if masks.dtype != _fg.bool:
        raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
    if tuple(masks.shape[-2:]) != tuple(image.shape[-2:]):
        raise ValueError("The image and the masks must have the same height and width")
    n = masks.size(0)
    if n == 0:
        warnings.warn("masks doesn't contain any mask. No mask was drawn")
        return image
    cols = _parse_colors(colors, n)
    out_dtype = image.dtype
    scale = 1.0 if out_dtype == _fg.uint8 else 1.0 / 255
    colored = image
    for mask, color in zip(masks.unbind(0), cols):
        c = _fg.tensor([v * scale for v in color], dtype=out_dtype).view(3, 1, 1)
        colored = _fg.where(mask.unsqueeze(0), c, colored)
    out = image * (1 - alpha) + colored * alpha
    return out.to(out_dtype)
