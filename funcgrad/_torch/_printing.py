"""Printing tensors as torch does (`repr`, `torch.set_printoptions`)."""
from __future__ import annotations

import numpy as np

from ..autograd import forward_ad as _forward_ad
from . import _dtype as D

_PRINT = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


class _Formatter:
    """Formats the elements of one tensor (or of its real or imaginary parts) at one common width, choosing
    integer, fixed or scientific notation from the values' range, as PyTorch's printer does."""

    def __init__(self, vals: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        prec = _PRINT["precision"]
        if not floating:
            if vals.size:
                self.width = max(len(str(x)) for x in vals.ravel().tolist())
        else:
            v = vals.astype(np.float64).ravel()
            nz = v[np.isfinite(v) & (v != 0)]
            if nz.size:
                a = np.abs(nz)
                lo, hi = a.min(), a.max()
                items = nz.tolist()
                self.int_mode = bool(np.all(nz == np.ceil(nz)))
                wide = hi / lo > 1000.0 or hi > 1.0e8
                sci = wide if self.int_mode else (wide or lo < 1.0e-4)
                if _PRINT["sci_mode"] is not None:
                    sci = bool(_PRINT["sci_mode"])
                self.sci_mode = sci
                if sci:
                    self.width = max(len(f"{x:.{prec}e}") for x in items)
                elif self.int_mode:
                    self.width = max(len(f"{x:.0f}") for x in items) + 1
                else:
                    self.width = max(len(f"{x:.{prec}f}") for x in items)
        if _PRINT["sci_mode"] is not None:
            self.sci_mode = bool(_PRINT["sci_mode"])

    def format(self, x) -> str:
        prec = _PRINT["precision"]
        if self.floating:
            if self.sci_mode:
                s = f"{x:{self.width}.{prec}e}"
            elif self.int_mode:
                s = f"{x:.0f}"
                if x == x and x not in (np.inf, -np.inf):
                    s += "."
            else:
                s = f"{x:.{prec}f}"
        else:
            s = f"{x}"
        return " " * (self.width - len(s)) + s


def _summarized(v: np.ndarray) -> np.ndarray:
    """The elements printing shows: edgeitems at both ends of every long dimension."""
    e = _PRINT["edgeitems"]
    for ax, n in enumerate(v.shape):
        if n > 2 * e:
            idx = np.r_[0:e, n - e:n]
            v = np.take(v, idx, axis=ax)
    return v


def _elem_fmt(f1, f2):
    if f2 is None:
        return lambda x: f1.format(x)

    def fmt(z):
        re_s = f1.format(z.real)
        im_s = (f2.format(z.imag) + "j").lstrip()
        return re_s + im_s if im_s[0] in "+-" else re_s + "+" + im_s
    return fmt


def _vector_str(v, indent, summarize, f1, f2) -> str:
    elem = f1.width + 2 + (f2.width + 1 if f2 is not None else 0)
    per_line = max(1, int((_PRINT["linewidth"] - indent) // elem))
    e = _PRINT["edgeitems"]
    fmt = _elem_fmt(f1, f2)
    if summarize and not e:
        return "[...]"
    items = v.tolist()
    if summarize and len(items) > 2 * e:
        data = [fmt(x) for x in items[:e]] + [" ..."] + [fmt(x) for x in items[len(items) - e:]]
    else:
        data = [fmt(x) for x in items]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(v, indent, summarize, f1, f2) -> str:
    if v.ndim == 0:
        return _elem_fmt(f1, f2)(v.item())
    if v.ndim == 1:
        return _vector_str(v, indent, summarize, f1, f2)
    e = _PRINT["edgeitems"]
    n = v.shape[0]
    if summarize and n > 2 * e:
        rows = [_nd_str(v[i], indent + 1, summarize, f1, f2) for i in range(e)] + ["..."] + \
            [_nd_str(v[i], indent + 1, summarize, f1, f2) for i in range(n - e, n)]
    else:
        rows = [_nd_str(v[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (v.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _body(v: np.ndarray, indent: int) -> str:
    summarize = v.size > _PRINT["threshold"]
    if v.dtype.kind == "f" or D._NP2T[v.dtype].is_floating_point:
        v = v.astype(np.float64) if v.dtype != np.float64 else v
    src = _summarized(v) if summarize else v
    if v.dtype.kind == "c":
        f1 = _Formatter(src.real, True)
        f2 = _Formatter(src.imag, True)
        return _nd_str(v, indent, summarize, f1, f2)
    return _nd_str(v, indent, summarize, _Formatter(src, v.dtype.kind == "f"), None)


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suf in suffixes:
        if last + len(suf) + 2 > _PRINT["linewidth"]:
            parts.append(",\n" + " " * indent + suf)
            last = indent + len(suf)
        else:
            parts.append(", " + suf)
            last += len(suf) + 2
    parts.append(")")
    return "".join(parts)


def _repr(t) -> str:
    if t._v is None:
        return f"Tensor(traced {t._a!r})"
    v = t._v
    dt = t.dtype
    prefix = "tensor("
    indent = len(prefix)
    default = D.get_default_dtype()
    suffixes = []
    if v.size == 0:
        if v.ndim != 1:
            suffixes.append(f"size={tuple(v.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt}")
        body = "[]"
    else:
        if dt not in (default, D.complex128 if default is D.float64 else D.complex64, D.int64, D.bool_):
            suffixes.append(f"dtype={dt}")
        body = _body(v, indent)
    g = t._grad_fn_now()
    if g is not None:
        suffixes.append(f"grad_fn=<{g.name().rsplit('::', 1)[-1]}>")  # (torch::autograd::CopySlices as torch)
    elif t._rg:
        suffixes.append("requires_grad=True")
    if _forward_ad._current is not None:
        tan = _forward_ad.tangent_of(t)
        if tan is not None:
            suffixes.append(f"tangent={tan.item() if tan.ndim == 0 and tan._v is not None else _repr(tan)}")
    return _add_suffixes(prefix + body, suffixes, indent)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    if profile == "default":
        _PRINT.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        _PRINT.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        _PRINT.update(precision=4, threshold=np.inf, edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _PRINT[k] = v
    _PRINT["sci_mode"] = sci_mode

