"""torch.ao.nn.quantized.dynamic: Linear and LSTM with qint8 weights whose float inputs are quantized on the fly
(quint8, scale and zero point from each input's min and max, the range reduced to 7 bits as torch's x86/fbgemm
engine does), multiplied in integers and returned as float, as torch's `quantize_dynamic` makes them: the
products are quantized::linear_dynamic's (funcgrad/_torch/_quantized_packed.py), bit-identical to torch's.
Both also take float16 weights (quantize_dynamic(..., dtype=torch.float16): quantized::linear_dynamic_fp16's
float16 GEMM)."""
from __future__ import annotations

import numpy as np

import funcgrad._torch as _fg
from .....nn.modules.container import ModuleList
from .....nn.modules.module import Module
from ....quantization.observer import MinMaxObserver
from ....._torch._quantized import QTensor, _QParams, make_qtensor, qint8
from ....._torch._quantized_packed import (gemm_fp16_np, linear_dynamic_np, linear_prepack_fp16, q_linear_dynamic,
                                           q_linear_dynamic_fp16)
from .....nn.modules import linear as _nnm_linear
from ..modules import Linear as _QLinear, _quantize_weight

__all__ = ["Linear", "LSTM", "PackedParameter"]

_F32 = np.float32


def _weight_observer(mod, weight):
    obs = mod.qconfig.weight() if getattr(mod, "qconfig", None) is not None else MinMaxObserver(
        dtype=qint8, qscheme=_fg.per_tensor_symmetric)
    obs(weight)
    return obs


class Linear(_QLinear):
    """Dynamically quantized Linear: float in, float out; a qint8 weight (the input quantized per call) or a
    float16 one (dtype=torch.float16: fbgemm's float16 GEMM). torch's subclasses the quantized Linear too: the
    same packed parameters, state_dict keys and repr."""
    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        self.version = 4

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        s = f"in_features={self.in_features}, out_features={self.out_features}, dtype={self._packed_params.dtype}"
        if self._packed_params.dtype is qint8:
            s += f", qscheme={self.weight().qscheme()}"
        return s

    def forward(self, x):
        if self._packed_params.dtype is qint8:
            return q_linear_dynamic(x, self._packed_params._packed_params,
                                    reduce_range=self.version is not None and self.version >= 4)
        return q_linear_dynamic_fp16(x, self._packed_params._packed_params)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.version = local_metadata.get("version", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The dynamically quantized Linear of a float (or fused LinearReLU) module with a qconfig: its weight
        observer's dtype picks qint8 (quantized with the observer's qparams) or float16."""
        from ...intrinsic import LinearReLU
        float_modules = (_nnm_linear.Linear, _nnm_linear.NonDynamicallyQuantizableLinear, LinearReLU)
        if type(mod) not in float_modules:
            raise AssertionError(f"nn.quantized.dynamic.Linear.from_float only works for one of"
                                 f"{[m.__name__ for m in float_modules]}, got {type(mod)}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if type(mod) is LinearReLU:
            mod = mod[0]
        obs = _weight_observer(mod, mod.weight)
        if obs.dtype is not qint8 and obs.dtype != _fg.float16:
            raise AssertionError(f"The only supported dtypes for dynamic quantized linear are qint8 and float16, "
                                 f"got: {obs.dtype}")
        w = _quantize_weight(mod.weight, obs) if obs.dtype is qint8 else mod.weight.detach().float()
        q = cls(mod.in_features, mod.out_features, dtype=obs.dtype)
        q.set_weight_bias(w, None if mod.bias is None else mod.bias.detach().clone())
        return q

    @classmethod
    def from_reference(cls, ref_qlinear):
        """The dynamically quantized Linear of a reference quantized one (its get_quantized_weight())."""
        q = cls(ref_qlinear.in_features, ref_qlinear.out_features, dtype=ref_qlinear.weight_dtype)
        q.set_weight_bias(ref_qlinear.get_quantized_weight(), ref_qlinear.bias)
        return q


def _project(x: np.ndarray, w, b) -> np.ndarray:
    """x @ w.T + b as the dynamic LSTM's cells compute it: linear_dynamic's integer product for a qint8 weight,
    fbgemm's float16 GEMM then + b for a float16 one."""
    if isinstance(w, QTensor):
        return linear_dynamic_np(x, w, b, True)
    out = gemm_fp16_np(np.asarray(x, _F32), np.asarray(w.detach()._host(), _F32))
    return out if b is None else (out + np.asarray(b.detach()._host(), _F32)).astype(_F32)


class PackedParameter(Module):
    """One layer-direction's weights of a dynamically quantized LSTM, `param` = (w_ih, w_hh, b_ih, b_hh), in
    the state_dict under `<prefix>param` as torch's (whose value there is its packed CellParams object; here the
    tuple of tensors, which save / load(weights_only=True) carry)."""

    def __init__(self, param):
        super().__init__()
        self.param = param

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "param"] = self.param

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        if prefix + "param" in state_dict:
            self.param = tuple(state_dict.pop(prefix + "param"))
        elif strict:
            missing_keys.append(prefix + "param")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)


def _placeholder_weight(rows, cols, dtype):
    """A zero weight of the LSTM's kind until from_float or load_state_dict sets the real one."""
    if dtype is qint8:
        return make_qtensor(np.zeros((rows, cols), np.int8), _QParams(qint8, _fg.per_tensor_affine, 1.0, 0))
    return linear_prepack_fp16(_fg.zeros(rows, cols)).weight


class LSTM(Module):
    """Dynamically quantized LSTM (torch.quantized_lstm): each layer's input projection of the whole sequence and
    each step's hidden projection are linear_dynamic products (qint8 weights) or float16 GEMMs (dtype
    torch.float16); the gates are computed in float32."""
    _FLOAT_MODULE = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=qint8):
        super().__init__()
        self.mode, self.input_size, self.hidden_size = "LSTM", input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.dtype = float(dropout), bidirectional, dtype
        self.version = 2
        self.proj_size = 0
        D, G = (2 if bidirectional else 1), 4 * hidden_size
        params = []  # per layer and direction: (w_ih, w_hh, b_ih, b_hh)
        for layer in range(num_layers):
            n_in = input_size if layer == 0 else hidden_size * D
            for _ in range(D):
                b = (_fg.zeros(G), _fg.zeros(G)) if bias else (None, None)
                params.append(PackedParameter((_placeholder_weight(G, n_in, dtype),
                                               _placeholder_weight(G, hidden_size, dtype)) + b))
        self._all_weight_values = ModuleList(params)

    def _get_name(self):
        return "DynamicQuantizedLSTM"

    def __repr__(self):  # torch's: the packed weights (a ModuleList) are not shown
        return f"{self._get_name()}({self.extra_repr()})"

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def _direction(self, x, params, h, c, reverse):
        w_ih, w_hh, b_ih, b_hh = params
        T = x.shape[0]
        gx = _project(x.reshape(T * x.shape[1], -1), w_ih, b_ih).reshape(T, x.shape[1], -1)
        out = np.empty((T, x.shape[1], self.hidden_size), _F32)
        steps = range(T - 1, -1, -1) if reverse else range(T)
        for t in steps:
            g = gx[t] + _project(h, w_hh, b_hh)
            i, f, gg, o = np.split(g, 4, axis=1)
            i, f, o = (_F32(1) / (_F32(1) + np.exp(-v)) for v in (i, f, o))
            c = f * c + i * np.tanh(gg)
            h = (o * np.tanh(c)).astype(_F32)
            out[t] = h
        return out, h, c

    def forward(self, input, hx=None):
        if isinstance(input, tuple) or type(input).__name__ == "PackedSequence":
            raise NotImplementedError("funcgrad's dynamically quantized LSTM takes padded tensors, not "
                                      "PackedSequence")
        x = np.asarray(input.detach()._host(), _F32)
        batched = x.ndim == 3
        if not batched:
            x = x[:, None]
        elif self.batch_first:
            x = x.transpose(1, 0, 2)
        D = 2 if self.bidirectional else 1
        B = x.shape[1]
        if hx is None:
            h0 = c0 = np.zeros((self.num_layers * D, B, self.hidden_size), _F32)
        else:
            h0, c0 = (np.asarray(v.detach()._host(), _F32) for v in hx)
            if not batched:
                h0, c0 = h0[:, None], c0[:, None]
        hs, cs = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                k = layer * D + d
                o, h, c = self._direction(layer_in, self._all_weight_values[k].param, h0[k], c0[k],
                                          d == 1)
                outs.append(o)
                hs.append(h)
                cs.append(c)
            layer_in = np.concatenate(outs, axis=2) if D == 2 else outs[0]
        out = layer_in
        if not batched:
            out = out[:, 0]
            hn, cn = np.stack(hs)[:, 0], np.stack(cs)[:, 0]
        else:
            if self.batch_first:
                out = out.transpose(1, 0, 2)
            hn, cn = np.stack(hs), np.stack(cs)
        return _fg.tensor(np.ascontiguousarray(out)), (_fg.tensor(hn), _fg.tensor(cn))

    def _weight_bias(self):
        names = {}
        for layer in range(self.num_layers):
            for d in range(2 if self.bidirectional else 1):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                w_ih, w_hh, b_ih, b_hh = self._all_weight_values[layer * (2 if self.bidirectional else 1) + d].param
                names.update({"weight_ih" + sfx: w_ih, "weight_hh" + sfx: w_hh, "bias_ih" + sfx: b_ih,
                              "bias_hh" + sfx: b_hh})
        return names

    def get_weight(self):
        return {k: v for k, v in self._weight_bias().items() if k.startswith("weight")}

    def get_bias(self):
        return {k: v for k, v in self._weight_bias().items() if k.startswith("bias")}

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError("funcgrad's dynamically quantized LSTM has no proj_size")
        dtype = mod.qconfig.weight().dtype if getattr(mod, "qconfig", None) is not None else qint8
        if dtype is not qint8 and dtype != _fg.float16:
            raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
        q = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first, mod.dropout,
                mod.bidirectional, dtype)
        for layer in range(mod.num_layers):
            for d in range(2 if mod.bidirectional else 1):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                ws = []
                for name in ("weight_ih", "weight_hh"):
                    w = getattr(mod, name + sfx)
                    ws.append(_quantize_weight(w, _weight_observer(mod, w)) if dtype is qint8 else
                              linear_prepack_fp16(w.detach().float()).weight)
                bs = [getattr(mod, name + sfx).detach().clone() if mod.bias else None
                      for name in ("bias_ih", "bias_hh")]
                k = layer * (2 if mod.bidirectional else 1) + d
                q._all_weight_values[k].param = (ws[0], ws[1], bs[0], bs[1])
        return q
