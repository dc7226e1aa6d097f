"""Recurrent layers: RNN, LSTM, GRU and their cells.

A layer computes its input projection for every time step in one matmul, then runs the recurrence as one
scan primitive recorded as a single autograd node (`_apply`): the per-step work is one small matmul and the
gate arithmetic, and backward is the scan's own vjp. The step body is traced once per configuration and
its jaxpr reused, so the scan's compiled forward code is cached across calls.
Packed sequences run padded, with a per-step mask that freezes the state of finished sequences (and, going
in reverse, keeps h0 until a sequence starts)."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from funcgrad._torch import _jnp  # funcgrad.numpy with torch's dtypes (see tensor/_jnp.py)
from ... import lax as _lax
from ..._src.core.array import get_aval as _get_aval
from ..._src.core.aval import ShapedArray as _ShapedArray
from ..._src.core.jaxpr import Jaxpr as _Jaxpr
from ..._src.prims import elementwise as _ew, linalg as _linalg, shape as _sh
from ..._src.control.scan import scan_p as _scan_p
from ..._src.control._bodies import trace_flat as _trace_flat
from ..._torch._argcheck import dtype_error as _dtype_error
from ..._torch._dispatch import _apply
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _pack_index, pad_packed_sequence
from .module import Module, _changed_settings

__all__ = ['RNNBase', 'RNN', 'LSTM', 'GRU', 'RNNCellBase', 'RNNCell', 'LSTMCell', 'GRUCell']

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# --- the recurrence, at the Array level -----------------------------------------------------------------
def _step(mode, x, h, c, whh_t, bhh, whr_t):
    """One time step given the precomputed input projection x (biases folded in, except GRU's b_hh)."""
    if mode == "LSTM":
        g = x + _jnp.matmul(h, whh_t)
        H = g.shape[-1] // 4
        # (each gate on its own slice, as torch: the backward then assembles the gates' cotangents as one
        # concatenation, where one logistic over all four left a full-size padded sum and wasted a quarter)
        i, f = _lax.logistic(g[:, :H]), _lax.logistic(g[:, H:2 * H])
        gg, o = _jnp.tanh(g[:, 2 * H:3 * H]), _lax.logistic(g[:, 3 * H:])
        c = f * c + i * gg
        h = o * _jnp.tanh(c)
        if whr_t is not None:
            h = _jnp.matmul(h, whr_t)
        return h, c
    if mode == "GRU":
        gh = _jnp.matmul(h, whh_t)
        if bhh is not None:
            gh = gh + bhh
        H = gh.shape[-1] // 3
        r = _lax.logistic(x[:, :H] + gh[:, :H])
        z = _lax.logistic(x[:, H:2 * H] + gh[:, H:2 * H])
        n = _jnp.tanh(x[:, 2 * H:] + r * gh[:, 2 * H:])
        return n + z * (h - n), None
    g = x + _jnp.matmul(h, whh_t)
    return (_jnp.tanh(g) if mode == "RNN_TANH" else _jnp.maximum(g, 0)), None


_XWT = (((1,), (1,)), ((), ()))  # x W^T: contract x's columns with W's rows' entries


def _lstm_cell(x, h, c, w_ih, w_hh, b_ih=None, b_hh=None):
    """(h', c') of one LSTMCell step on Arrays, the binds of the unfused step in its order (x W^T plus bias
    for each input, one linear bind each; their sum, the four gate slices, c' = s(f) c + s(i) tanh(g),
    h' = s(o) tanh(c')), so its values are those of the op-by-op step."""
    if b_ih is not None:  # (linear's card: x W^T plus the bias, one bind each)
        gi, gh = _linalg.linear(x, w_ih, b_ih), _linalg.linear(h, w_hh, b_hh)
    else:
        gi, gh = _lax.dot_general(x, w_ih, _XWT), _lax.dot_general(h, w_hh, _XWT)
    g = _ew.add(gi, gh)
    B, H = g.shape[0], g.shape[1] // 4
    i, f, gg, o = [_sh.slice(g, (0, k * H), (B, (k + 1) * H)) for k in range(4)]
    c2 = _ew.add(_ew.mul(_ew.logistic(f), c), _ew.mul(_ew.logistic(i), _ew.tanh(gg)))
    return [_ew.mul(_ew.logistic(o), _ew.tanh(c2)), c2]


_JAXPRS: dict = {}  # traced step bodies by (mode, flags, operand types): their compiled code is kept on them


def _step_jaxpr(mode, has_c, has_bhh, has_whr, masked, avals):
    """The scan body (consts..., carry..., xs...) -> (carry..., y) traced once per configuration."""
    key = (mode, has_c, has_bhh, has_whr, masked, tuple((a.shape, str(a.dtype), a.weak_type) for a in avals))
    hit = _JAXPRS.get(key)
    if hit is not None:
        return hit

    def body(*a):
        it = iter(a)
        whh_t = next(it)
        bhh = next(it) if has_bhh else None
        whr_t = next(it) if has_whr else None
        h = next(it)
        c = next(it) if has_c else None
        x = next(it)
        m = next(it) if masked else None
        h2, c2 = _step(mode, x, h, c, whh_t, bhh, whr_t)
        if masked:
            h2 = _jnp.where(m, h2, h)
            if has_c:
                c2 = _jnp.where(m, c2, c)
        return [h2, c2, h2] if has_c else [h2, h2]

    closed = _trace_flat(body, list(avals), "scan")
    open_j = _Jaxpr([], [], list(closed.constvars) + list(closed.invars), closed.eqns, closed.outvars)
    if len(_JAXPRS) > 256:
        _JAXPRS.clear()
    _JAXPRS[key] = hit = (open_j, list(closed.consts))
    return hit


def _layer_fn(mode, reverse, has_c, has_bhh, has_whr, masked):
    """Array function (xp, h0, [c0], whh_t, [bhh], [whr_t], [mask]) -> (ys, h_n, [c_n]) over all steps:
    one scan whose body jaxpr (and so its compiled code) is reused across calls of the same shapes."""
    def fn(*args):
        it = iter(args)
        xp, h0 = next(it), next(it)
        carry = [h0, next(it)] if has_c else [h0]
        consts = [next(it)]
        if has_bhh:
            consts.append(next(it))
        if has_whr:
            consts.append(next(it))
        xs = [xp, next(it)] if masked else [xp]
        avals = ([_get_aval(a) for a in consts + carry]
                 + [_ShapedArray(_get_aval(x).shape[1:], _get_aval(x).dtype, _get_aval(x).weak_type) for x in xs])
        jaxpr, hoisted = _step_jaxpr(mode, has_c, has_bhh, has_whr, masked, avals)
        outs = _scan_p.bind(*hoisted, *consts, *carry, *xs, jaxpr=jaxpr, n_consts=len(hoisted) + len(consts),
                            n_carry=len(carry), length=int(xp.shape[0]), reverse=bool(reverse))
        k = len(carry)
        return (outs[k], *outs[:k])
    fn.records_on_a_tape = True  # one scan: the Tensor engine records it on a tape straight away
    return fn


# --- modules ------------------------------------------------------------------------------------------------

def _reset_uniform(self) -> None:
    """reset_parameters of the recurrent layers and cells: every parameter uniform in [-k, k], k =
    1 / sqrt(hidden_size) (as torch)."""
    stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
    for w in self.parameters():
        init.uniform_(w, -stdv, stdv)


class RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU: parameters named as torch's (weight_ih_l{k}[_reverse], ...)."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", UserWarning, stacklevel=2)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        D = 2 if bidirectional else 1
        real_h = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for d in range(D):
                in_sz = input_size if layer == 0 else real_h * D
                sfx = f"_l{layer}" + ("_reverse" if d == 1 else "")
                shapes = [("weight_ih", (gate, in_sz)), ("weight_hh", (gate, real_h))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    setattr(self, base + sfx, Parameter(_fg.empty(shape, dtype=dtype)))
                    names.append(base + sfx)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    reset_parameters = _reset_uniform

    def flatten_parameters(self) -> None:
        """No-op (no cuDNN weight buffer to compact)."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + _changed_settings(self, {
            "proj_size": 0, "num_layers": 1, "bias": True, "batch_first": False, "dropout": 0, "bidirectional": False})

    # -- forward ---------------------------------------------------------------------------------------------
    def _name(self) -> str:
        return {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)

    def _check_hidden(self, hx, expected, what="hidden"):
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(f"Expected {what} size {tuple(expected)}, got {list(hx.shape)}")

    def forward(self, input, hx=None):
        is_lstm = self.mode == "LSTM"
        D = 2 if self.bidirectional else 1
        real_h = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        if packed:
            ps = input
            sorted_ps = PackedSequence(ps.data, ps.batch_sizes, None, None)
            x, lengths = pad_packed_sequence(sorted_ps)  # (T, B, I), batch in sorted order
            lens = np.asarray(lengths.numpy(), np.int64)
            mask = _fg.from_numpy(np.arange(x.shape[0])[:, None, None] < lens[None, :, None])
            batched = True
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got {input.dim()}D instead")
            batched = input.dim() == 3
            x = input if batched else input.unsqueeze(1)
            if batched and self.batch_first:
                x = x.transpose(0, 1)
            mask = None
        w_dtype = self.weight_ih_l0.dtype
        if x.dtype != w_dtype:
            raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype ({w_dtype}). Convert "
                             f"input: input.to({w_dtype}), or convert model: model.to({x.dtype})")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {x.shape[-1]}")
        B = x.shape[1]
        if hx is None:
            h0 = _fg.zeros(self.num_layers * D, B, real_h, dtype=x.dtype)
            c0 = _fg.zeros(self.num_layers * D, B, self.hidden_size, dtype=x.dtype) if is_lstm else None
        else:
            h0, c0 = hx if is_lstm else (hx, None)
            if not packed:
                want, kind = (3, "batched 3-D") if batched else (2, "unbatched 2-D")
                if is_lstm and (h0.dim() != want or c0.dim() != want):
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                       f"({h0.dim()}-D, {c0.dim()}-D) tensors")
                if not is_lstm and h0.dim() != want:
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {h0.dim()}-D tensor")
                if not batched:
                    h0 = h0.unsqueeze(1)
                    c0 = c0.unsqueeze(1) if is_lstm else None
            else:
                if ps.sorted_indices is not None:
                    h0 = h0.index_select(1, ps.sorted_indices)
                    c0 = c0.index_select(1, ps.sorted_indices) if is_lstm else None
            if is_lstm:
                self._check_hidden(h0, (self.num_layers * D, B, real_h), "hidden[0]")
                self._check_hidden(c0, (self.num_layers * D, B, self.hidden_size), "hidden[1]")
            else:
                self._check_hidden(h0, (self.num_layers * D, B, real_h))
            for st in (h0, c0):  # (torch's error from h @ W_hh^T + b_hh)
                if st is not None and st._np_dtype() != x._np_dtype():
                    raise _dtype_error("mat1 and mat2 must have the same dtype, but got {0} and {1}" if self.bias else
                                       "expected m1 and m2 to have the same dtype, but got: {0:c} != {1:c}", st, x)
        out, hs, cs = x, [], []
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                out = F.dropout(out, self.dropout, True)
            dirs = []
            for d in range(D):
                k = layer * D + d
                names = self._all_weights[k]
                w_ih, w_hh = getattr(self, names[0]), getattr(self, names[1])
                b_ih = getattr(self, names[2]) if self.bias else None
                b_hh = getattr(self, names[3]) if self.bias else None
                w_hr = getattr(self, names[-1]) if self.proj_size > 0 else None
                xp = _fg.matmul(out, w_ih.t())
                fold = b_hh is not None and self.mode != "GRU"
                if b_ih is not None:
                    xp = xp + (b_ih + b_hh if fold else b_ih)
                args = [xp, h0[k]] + ([c0[k]] if is_lstm else []) + [w_hh.t()]
                has_bhh = b_hh is not None and not fold
                if has_bhh:
                    args.append(b_hh)
                if w_hr is not None:
                    args.append(w_hr.t())
                if mask is not None:
                    args.append(mask)
                fn = _layer_fn(self.mode, d == 1, is_lstm, has_bhh, w_hr is not None, mask is not None)
                res = _apply(self._name(), fn, tuple(args))
                dirs.append(res[0])
                hs.append(res[1])
                if is_lstm:
                    cs.append(res[2])
            out = dirs[0] if D == 1 else _fg.cat(dirs, -1)
        h_n = _fg.stack(hs, 0)
        c_n = _fg.stack(cs, 0) if is_lstm else None
        if packed:
            lens_sorted = lens
            flat, _ = _pack_index(lens_sorted, out.shape[0], False, B, np.arange(B))
            data = out.reshape((-1, out.shape[-1])).index_select(0, _fg.from_numpy(flat))
            output = PackedSequence(data, ps.batch_sizes, ps.sorted_indices, ps.unsorted_indices)
            if ps.unsorted_indices is not None:
                h_n = h_n.index_select(1, ps.unsorted_indices)
                c_n = c_n.index_select(1, ps.unsorted_indices) if is_lstm else None
        else:
            output = out
            if not batched:
                output, h_n = output.squeeze(1), h_n.squeeze(1)
                c_n = c_n.squeeze(1) if is_lstm else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return (output, (h_n, c_n)) if is_lstm else (output, h_n)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh or relu(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o), with optional output projection (proj_size).

    Takes (L, N, H_in) input ((N, L, H_in) with batch_first, or a PackedSequence) and optional (h_0, c_0); returns
    the output and (h_n, c_n).

    Examples:
        >>> import funcgrad as torch
        >>> lstm = torch.nn.LSTM(input_size=4, hidden_size=8, num_layers=2, batch_first=True)
        >>> out, (h, c) = lstm(torch.zeros(3, 5, 4))
        >>> out.shape, h.shape, c.shape
        (torch.Size([3, 5, 8]), torch.Size([2, 3, 8]), torch.Size([2, 3, 8]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)


# --- cells ----------------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """Parameters weight_ih, weight_hh, bias_ih, bias_hh of a single recurrent step."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_fg.empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(_fg.empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_fg.empty((num_chunks * hidden_size,), dtype=dtype))
            self.bias_hh = Parameter(_fg.empty((num_chunks * hidden_size,), dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = _reset_uniform

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + _changed_settings(self, {"bias": True,
                                                                                   "nonlinearity": "tanh"})

    def _prepare(self, input, hx, n_state=1):
        """Check shapes; add the batch dim to unbatched input; default the state to zeros."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = hx if n_state > 1 else (hx,)
        if hx is not None:
            for i, s in enumerate(states):
                if s.dim() not in (1, 2):
                    what = f"hx[{i}]" if n_state > 1 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                               f"{self.input_size}")
        if hx is None:
            states = tuple(_fg.zeros(input.shape[0], self.hidden_size, dtype=input.dtype) for _ in range(n_state))
        else:
            states = tuple(s if batched else s.unsqueeze(0) for s in states)
            for i, s in enumerate(states):
                if s.shape[0] != input.shape[0]:
                    raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                                       f"{s.shape[0]}")
                if s.shape[1] != self.hidden_size:
                    raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, expected "
                                       f"{self.hidden_size}")
        return input, states, batched

    def _gates(self, input, h):
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        gh = F.linear(h, self.weight_hh, self.bias_hh)
        return gi, gh


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh or relu(W_ih x + b_ih + W_hh h + b_hh)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, (h,), batched = self._prepare(input, hx)
        gi, gh = self._gates(input, h)
        out = _fg.tanh(gi + gh) if self.nonlinearity == "tanh" else _fg.relu(gi + gh)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._prepare(input, hx, 2)
        ws = (self.weight_ih, self.weight_hh) + ((self.bias_ih, self.bias_hh) if self.bias else ())
        dt = input._np_dtype()
        if dt.kind == "f" and dt.itemsize >= 4 and all(t._np_dtype() == dt for t in (h, c) + ws):
            # one recorded node for the whole step (torch's fused cell): its backward is one compiled walk
            h2, c2 = _apply("LSTMCell", _lstm_cell, (input, h, c) + ws)
        else:  # (float16/bfloat16, mixed dtypes: linear's rounding and errors)
            gi, gh = self._gates(input, h)
            i, f, g, o = (gi + gh).chunk(4, 1)
            c2 = _fg.sigmoid(f) * c + _fg.sigmoid(i) * _fg.tanh(g)
            h2 = _fg.sigmoid(o) * _fg.tanh(c2)
        return (h2, c2) if batched else (h2.squeeze(0), c2.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: r, z gates and candidate n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, hx)
        gi, gh = self._gates(input, h)
        ir, iz, in_ = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r = _fg.sigmoid(ir + hr)
        z = _fg.sigmoid(iz + hz)
        n = _fg.tanh(in_ + r * hn)
        out = n + z * (h - n)
        return out if batched else out.squeeze(0)
