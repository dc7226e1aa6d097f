"""torch.ao.quantization.observer: modules that watch the values flowing through a model and choose a scale and
zero point for them (MinMaxObserver, MovingAverageMinMaxObserver, PerChannelMinMaxObserver,
MovingAveragePerChannelMinMaxObserver, HistogramObserver, PlaceholderObserver), with torch's defaults.

Observing is bookkeeping, not a differentiable computation: statistics are kept in float32 buffers (so they
travel in state_dicts as torch's do) and computed with NumPy in float32, as torch's kernels compute them.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict
from functools import partial

import numpy as np

import funcgrad._torch as _fg
from ...nn.modules.module import Module
from ..._torch._quantized import (QRANGE, per_channel_affine, per_channel_affine_float_qparams,
                                   per_channel_symmetric, per_tensor_affine, per_tensor_symmetric, qint8, qint32,
                                   quint8)

__all__ = ["ObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
           "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "PlaceholderObserver", "NoopObserver",
           "default_observer", "default_weight_observer", "default_per_channel_weight_observer",
           "default_histogram_observer", "default_dynamic_quant_observer", "default_placeholder_observer",
           "default_float_qparams_observer", "default_float_qparams_observer_4bit",
           "weight_observer_range_neg_127_to_127",
           "per_channel_weight_observer_range_neg_127_to_127", "get_observer_state_dict", "load_observer_state_dict"]

_EPS = float(np.finfo(np.float32).eps)
_F32 = np.float32


class _PartialWrapper:
    """A class with bound constructor arguments (Observer.with_args(...)): calling it makes an instance."""

    def __init__(self, p):
        self.p = p

    def __call__(self, *args, **kwargs):
        return self.p(*args, **kwargs)

    def __repr__(self):
        return self.p.__repr__()

    with_args = None  # set below


def _with_args(cls_or_self, **kwargs):
    """cls.with_args(**kwargs): a factory of instances built with those arguments (torch's _with_args)."""
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _wrapper_with_args(self, **kwargs):
    return _PartialWrapper(partial(self.p, **kwargs))


_PartialWrapper.with_args = _wrapper_with_args


def _np(t) -> np.ndarray:
    return np.asarray(t.detach()._host() if isinstance(t, _fg.Tensor) else t)


def _qmin_qmax(quant_min, quant_max, dtype, reduce_range):
    """torch's calculate_qmin_qmax."""
    if quant_min is not None and quant_max is not None:
        if not quant_min <= 0 <= quant_max:
            raise AssertionError("Used-specified quantization range must include 0.")
        if quant_min >= quant_max:
            raise AssertionError("qmin must be strictly less than qmax for user-specified quantization range.")
        if reduce_range:
            return quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype in (qint8, _fg.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (quint8, _fg.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (qint32, _fg.int32):
        return -2 ** 31, 2 ** 31 - 1
    lo, hi = QRANGE.get(dtype, (0, 15))
    return lo, hi


class ResizableBuffers(Module):
    """A module whose buffers named in `_resizable` (per-channel statistics, qparams) may change size: a load
    takes the saved tensors whole before the ordinary load."""
    _resizable: tuple = ()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for name in self._resizable:
            if prefix + name in state_dict:
                setattr(self, name, state_dict[prefix + name].clone())
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class ObserverBase(Module):
    """Base of the observers: a module that records statistics of what it sees and returns its input."""

    with_args = classmethod(_with_args)

    def __init__(self, dtype=quint8, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic


class UniformQuantizationObserverBase(ObserverBase):
    """Observers that choose an affine (scale, zero point) from a min and a max."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for observers.                     "
                          "reduce_range will be deprecated in a future release of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", _fg.tensor([eps], dtype=_fg.float32))
        if qscheme not in (per_tensor_affine, per_tensor_symmetric, per_channel_affine, per_channel_symmetric,
                           per_channel_affine_float_qparams):
            raise AssertionError("Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                                 "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                                 "quantization scheme")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        self.quant_min, self.quant_max = _qmin_qmax(quant_min, quant_max, dtype, reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """(scale float32, zero_point int64) tensors for the observed min and max (torch's arithmetic, in float32)."""
        lo, hi = np.atleast_1d(_np(min_val).astype(_F32)), np.atleast_1d(_np(max_val).astype(_F32))
        if lo.size == 0 or np.any(np.isinf(lo) & (lo > 0)) or np.any(np.isinf(hi) & (hi < 0)):
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.",
                          stacklevel=3)
            return _fg.tensor([1.0]), _fg.tensor([0])
        qmin, qmax = self.quant_min, self.quant_max
        neg, pos = np.minimum(lo, _F32(0)), np.maximum(hi, _F32(0))
        eps = _np(self.eps).astype(_F32)
        zp = np.zeros(lo.shape, np.int64)
        if self.qscheme in (per_tensor_symmetric, per_channel_symmetric):
            pos = np.maximum(-neg, pos)
            scale = np.maximum(pos / _F32((qmax - qmin) / 2), eps)
            if self.dtype in (quint8, _fg.uint8):
                zp[:] = (qmin + qmax) // 2 if self.has_customized_qrange else 128
        elif self.qscheme is per_channel_affine_float_qparams:
            scale = (hi - lo) / _F32(qmax - qmin)
            scale = np.where(scale > eps, scale, _F32(1))
            zp = -1 * lo / scale
        else:
            scale = np.maximum((pos - neg) / _F32(qmax - qmin), eps)
            zp = qmin - np.rint(neg / scale).astype(np.int32).astype(np.int64)
            zp = np.clip(zp, qmin, qmax)
        scale = scale.reshape(lo.shape)
        return _fg.tensor(scale.astype(_F32)), _fg.tensor(zp)

    def calculate_qparams(self):
        """(scale, zero_point) tensors from the observed min_val and max_val."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        self.min_val.copy_(_fg.tensor(float("inf")))
        self.max_val.copy_(_fg.tensor(float("-inf")))


class MinMaxObserver(UniformQuantizationObserverBase):
    """Records the running min and max of what it sees; qparams from them."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic)
        self.register_buffer("min_val", _fg.tensor(float("inf")))
        self.register_buffer("max_val", _fg.tensor(float("-inf")))

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = _np(x_orig).astype(_F32)
        lo = min(_F32(self.min_val.item()), _F32(x.min()))
        hi = max(_F32(self.max_val.item()), _F32(x.max()))
        self.min_val.copy_(_fg.tensor(float(lo)))
        self.max_val.copy_(_fg.tensor(float(hi)))
        return x_orig



class MovingAverageMinMaxObserver(MinMaxObserver):
    """min and max as exponential moving averages (averaging_constant c: m <- m + c (new - m))."""

    def __init__(self, averaging_constant=0.01, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = _np(x_orig).astype(_F32)
        lo, hi = _F32(x.min()), _F32(x.max())
        cur_lo, cur_hi = _F32(self.min_val.item()), _F32(self.max_val.item())
        if not (cur_lo == np.inf and cur_hi == -np.inf):
            c = _F32(self.averaging_constant)
            lo, hi = cur_lo + c * (lo - cur_lo), cur_hi + c * (hi - cur_hi)
        self.min_val.copy_(_fg.tensor(float(lo)))
        self.max_val.copy_(_fg.tensor(float(hi)))
        return x_orig


class PerChannelMinMaxObserver(ResizableBuffers, UniformQuantizationObserverBase):
    """Running min and max per index along ch_axis; per-channel qparams."""
    _resizable = ("min_val", "max_val")

    def __init__(self, ch_axis=0, dtype=quint8, qscheme=per_channel_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        if qscheme not in (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams):
            raise NotImplementedError("Cannot reduce range for symmetric quantization for per channel quantization"
                                      if False else f"PerChannelMinMaxObserver needs a per-channel qscheme, got "
                                      f"{qscheme}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", _fg.tensor([]))
        self.register_buffer("max_val", _fg.tensor([]))

    def _channel_min_max(self, x):
        y = np.moveaxis(x, self.ch_axis, 0).reshape(x.shape[self.ch_axis], -1)
        return y.min(1), y.max(1)

    def _update(self, lo, hi):
        self.min_val = _fg.tensor(lo.astype(_F32))
        self.max_val = _fg.tensor(hi.astype(_F32))

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        lo, hi = self._channel_min_max(_np(x_orig).astype(_F32))
        if self.min_val.numel() and self.max_val.numel():
            lo, hi = np.minimum(_np(self.min_val), lo), np.maximum(_np(self.max_val), hi)
        self._update(lo, hi)
        return x_orig



class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel min and max as exponential moving averages."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=quint8, qscheme=per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        lo, hi = self._channel_min_max(_np(x_orig).astype(_F32))
        if self.min_val.numel() and self.max_val.numel():
            c = _F32(self.averaging_constant)
            cur_lo, cur_hi = _np(self.min_val), _np(self.max_val)
            lo, hi = cur_lo + c * (lo - cur_lo), cur_hi + c * (hi - cur_hi)
        self._update(lo, hi)
        return x_orig


class HistogramObserver(UniformQuantizationObserverBase):
    """A running histogram of what it sees (`bins` bins over the running min..max); qparams from the range that
    minimises the L2 quantization error of the histogram (torch's non-linear search)."""

    def __init__(self, bins=2048, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic)
        self.bins = bins
        self.register_buffer("histogram", _fg.zeros(bins))
        self.register_buffer("min_val", _fg.tensor(float("inf")))
        self.register_buffer("max_val", _fg.tensor(float("-inf")))
        self.dst_nbins = 2 ** 8 if dtype in (quint8, qint8, _fg.uint8, _fg.int8) else 2 ** 32
        self.upsample_rate = 16

    @staticmethod
    def _histc(x, bins, lo, hi):
        """torch.histc in float32: values in [lo, hi] counted into `bins` equal bins (the last one closed)."""
        if lo == hi:
            lo, hi = lo - _F32(1), hi + _F32(1)
        x = x[(x >= lo) & (x <= hi)]
        idx = ((x - lo) * _F32(bins) / (hi - lo)).astype(np.int64)
        idx = np.clip(idx, 0, bins - 1)
        return np.bincount(idx, minlength=bins).astype(_F32)

    def _compute_quantization_error(self, next_start_bin, next_end_bin, hist, lo, hi):
        bin_width = (float(hi) - float(lo)) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = np.arange(self.bins)
        begin = ((src_bin - next_start_bin) * bin_width).astype(_F32)
        end = begin + _F32(bin_width)
        dw = _F32(dst_bin_width)
        dst_begin = np.clip(np.floor(begin / dw), 0, self.dst_nbins - 1).astype(_F32)
        dst_begin_center = (dst_begin + _F32(0.5)) * dw
        dst_end = np.clip(np.floor(end / dw), 0, self.dst_nbins - 1).astype(_F32)
        density = hist / _F32(bin_width)

        def l2(b, e):
            return density * ((e * e * e - b * b * b) / _F32(3))
        norm = l2(begin - dst_begin_center, np.full(self.bins, dw / 2, _F32))
        norm = norm + (dst_end - dst_begin - 1) * l2(_F32(-dw / 2), _F32(dw / 2))
        dst_end_center = dst_end * dw + dw / 2
        norm = norm + l2(_F32(-dw / 2), end - dst_end_center)
        return float(norm.astype(_F32).sum(dtype=_F32))

    def _non_linear_param_search(self):
        hist = _np(self.histogram).astype(_F32)
        lo, hi = _F32(self.min_val.item()), _F32(self.max_val.item())
        bin_width = (hi - lo) / _F32(self.bins)
        total = float(hist.sum(dtype=_F32))
        csum = np.cumsum(hist, dtype=_F32)
        stepsize, alpha, beta = 1e-5, 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            left, right = start_bin, end_bin
            while left < end_bin and csum[left] < next_alpha * total:
                left += 1
            while right > start_bin and csum[right] > next_beta * total:
                right -= 1
            next_start, next_end = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start, alpha = left, next_alpha
            else:
                next_end, beta = right, next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            norm = self._compute_quantization_error(next_start, next_end, hist, lo, hi)
            if norm > norm_min:
                break
            norm_min, start_bin, end_bin = norm, next_start, next_end
        return lo + bin_width * _F32(start_bin), lo + bin_width * _F32(end_bin + 1)

    def _upscale_histogram(self, hist, orig_min, orig_max, new_min, new_max):
        r = self.upsample_rate
        hist = np.repeat(hist, r) / _F32(r)
        bin_size = (orig_max - orig_min) / _F32(self.bins * r)
        mids = np.linspace(orig_min, orig_max, self.bins * r + 1, dtype=_F32)[:-1] + _F32(0.5) * bin_size
        bounds = np.linspace(new_min, new_max, self.bins + 1, dtype=_F32)
        b = np.clip(np.searchsorted(bounds, mids, side="right") - 1, 0, self.bins - 1)
        return np.bincount(b, weights=hist, minlength=self.bins).astype(_F32)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = _np(x_orig).astype(_F32).reshape(-1)
        if np.isinf(x).any():
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[~np.isinf(x)]
            if x.size == 0:
                return x_orig
        x_min, x_max = _F32(x.min()), _F32(x.max())
        cur_min, cur_max = _F32(self.min_val.item()), _F32(self.max_val.item())
        if cur_min == np.inf or cur_max == -np.inf:
            hist, new_min, new_max = self._histc(x, self.bins, x_min, x_max), x_min, x_max
        else:
            new_min, new_max = min(cur_min, x_min), max(cur_max, x_max)
            update = self._histc(x, self.bins, new_min, new_max)
            old = _np(self.histogram).astype(_F32)
            if new_min == cur_min and new_max == cur_max:
                hist = old + update
            elif cur_min == cur_max:
                hist = self._histc(np.array([cur_min], _F32), self.bins, new_min, new_max) * old.sum() + update
            else:
                hist = update + self._upscale_histogram(old, cur_min, cur_max, new_min, new_max)
        self.histogram = _fg.tensor(hist.astype(_F32))
        self.min_val.copy_(_fg.tensor(float(new_min)))
        self.max_val.copy_(_fg.tensor(float(new_max)))
        return x_orig

    def calculate_qparams(self):
        if self.min_val.item() == float("inf") and self.max_val.item() == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams.                                    "
                          "Returning default scale and zero point ", stacklevel=2)
            return _fg.tensor([1.0]), _fg.tensor([0])
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(_fg.tensor(float(new_min)), _fg.tensor(float(new_max)))



class _PassThrough(ObserverBase):
    """An observer that records nothing and has no qparams to give."""

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception(f"calculate_qparams should not be called for {type(self).__name__}")  # noqa: TRY002


class PlaceholderObserver(_PassThrough):
    """Records nothing; carries the dtype (float16 or dynamic quantization) to convert."""

    def __init__(self, dtype=_fg.float32, custom_op_name="", compute_dtype=None, quant_min=None, quant_max=None,
                 qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = per_tensor_affine if qscheme is None else qscheme
        self.quant_min, self.quant_max, self.eps = quant_min, quant_max, eps
        self.custom_op = custom_op_name


class NoopObserver(_PassThrough):
    """Passes values through and records nothing."""

    def __init__(self, dtype=_fg.float16, custom_op_name=""):
        super().__init__(dtype=dtype)
        self.custom_op = custom_op_name


def get_observer_state_dict(mod):
    """The state_dict entries of every observer in `mod`."""
    return OrderedDict((k, v) for k, v in mod.state_dict().items() if "activation_post_process" in k)


def load_observer_state_dict(mod, obs_dict):
    """Load observer statistics saved by get_observer_state_dict."""
    missing, unexpected = [], []
    for name, module in mod.named_modules():
        prefix = name + "."
        if isinstance(module, ObserverBase):
            module._load_from_state_dict(obs_dict, prefix, {}, False, missing, unexpected, [])
    for k in missing:
        if "observer_enabled" not in k and "fake_quant_enabled" not in k:
            raise Exception(f"Missing keys for observer {k} in state_dict")  # noqa: TRY002


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = None
default_weight_observer = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric,
                                                                quant_min=-127, quant_max=127, eps=2 ** -12)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(dtype=qint8,
                                                                         qscheme=per_channel_symmetric)
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype=qint8, qscheme=per_channel_symmetric, quant_min=-127, quant_max=127, eps=2 ** -12)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=quint8, quant_min=0, quant_max=255,
                                                               is_dynamic=True)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=quint8, qscheme=per_channel_affine_float_qparams, ch_axis=0)
default_float_qparams_observer_4bit = PerChannelMinMaxObserver.with_args(
    dtype=_fg.quint4x2, qscheme=per_channel_affine_float_qparams, ch_axis=0)
