"""torch.ao.quantization's eager-mode workflow: propagate_qconfig_, prepare (attach observers), convert (swap
float modules for quantized ones), quantize, quantize_dynamic, prepare_qat / quantize_qat, and fuse_modules."""
from __future__ import annotations

import copy
import functools
import warnings

import funcgrad._torch as _fg
from ...nn.parameter import Parameter as _Parameter
from ...nn import modules as _nnm
from ...nn.modules.module import Module
from ..._torch._quantized import qint8
from .. import nn as _aonn
from ..nn import intrinsic as nni, qat as nnqat, quantized as nnq
from ..nn.quantized import dynamic as nnqd
from .observer import MovingAveragePerChannelMinMaxObserver, PerChannelMinMaxObserver
from .qconfig import (default_dynamic_qconfig, float16_dynamic_qconfig, float_qparams_weight_only_qconfig,
                      float_qparams_weight_only_qconfig_4bit)
from .stubs import DeQuantStub, QuantStub, QuantWrapper

__all__ = ["propagate_qconfig_", "prepare", "convert", "quantize", "quantize_dynamic", "prepare_qat",
           "quantize_qat", "fuse_modules", "get_default_static_quant_module_mappings",
           "get_default_dynamic_quant_module_mappings", "get_default_qat_module_mappings", "swap_module",
           "add_quant_dequant"]

_ = _aonn


DEPRECATION_WARNING = (
    "torch.ao.quantization is deprecated and will be removed in 2.10. \n"
    "For migrations of users: \n"
    "1. Eager mode quantization (torch.ao.quantization.quantize, "
    "torch.ao.quantization.quantize_dynamic), please migrate to use torchao eager mode "
    "quantize_ API instead \n"
    "2. FX graph mode quantization (torch.ao.quantization.quantize_fx.prepare_fx,"
    "torch.ao.quantization.quantize_fx.convert_fx, please migrate to use torchao pt2e quantization "
    "API instead (prepare_pt2e, convert_pt2e) \n"
    "3. pt2e quantization has been migrated to torchao "
    "(https://github.com/pytorch/ao/tree/main/torchao/quantization/pt2e) \n"
    "see https://github.com/pytorch/ao/issues/2259 for more details"
)


def _deprecated(fn):
    """torch 2.13 marks the eager-mode entry points deprecated (typing_extensions.deprecated): each call warns
    DeprecationWarning at its caller, the nested calls (quantize_dynamic's convert) too."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        warnings.warn(DEPRECATION_WARNING, DeprecationWarning, stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__deprecated__ = DEPRECATION_WARNING
    return wrapper


def get_default_static_quant_module_mappings() -> dict:
    """Float (or QAT / fused) module type -> quantized module type, for convert."""
    return {QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize, _nnm.Linear: nnq.Linear, _nnm.Conv1d: nnq.Conv1d,
            _nnm.Conv2d: nnq.Conv2d, _nnm.Conv3d: nnq.Conv3d, _nnm.ConvTranspose1d: nnq.ConvTranspose1d,
            _nnm.ConvTranspose2d: nnq.ConvTranspose2d, _nnm.ConvTranspose3d: nnq.ConvTranspose3d,
            nni.LinearReLU: nni.quantized.LinearReLU, nni.ConvReLU1d: nni.quantized.ConvReLU1d,
            nni.ConvReLU2d: nni.quantized.ConvReLU2d, nni.ConvReLU3d: nni.quantized.ConvReLU3d,
            nnqat.Linear: nnq.Linear, nnqat.Conv2d: nnq.Conv2d, nnqat.LinearReLU: nni.quantized.LinearReLU,
            nnqat.ConvReLU2d: nni.quantized.ConvReLU2d, _nnm.Dropout: _nnm.Identity,
            _nnm.BatchNorm2d: nnq.BatchNorm2d, _nnm.BatchNorm3d: nnq.BatchNorm3d, _nnm.ReLU6: nnq.ReLU6,
            _nnm.Hardswish: nnq.Hardswish, _nnm.LeakyReLU: nnq.LeakyReLU, nnq.FloatFunctional: nnq.QFunctional,
            _nnm.Embedding: nnq.Embedding, _nnm.EmbeddingBag: nnq.EmbeddingBag}


def get_default_dynamic_quant_module_mappings() -> dict:
    return {_nnm.Linear: nnqd.Linear, _nnm.LSTM: nnqd.LSTM, _nnm.Embedding: nnq.Embedding,
            _nnm.EmbeddingBag: nnq.EmbeddingBag}


def get_default_qat_module_mappings() -> dict:
    return {_nnm.Linear: nnqat.Linear, _nnm.Conv2d: nnqat.Conv2d, nni.LinearReLU: nnqat.LinearReLU,
            nni.ConvReLU2d: nnqat.ConvReLU2d}


def _propagation_types():
    return (set(get_default_static_quant_module_mappings()) | set(get_default_qat_module_mappings()) |
            set(get_default_dynamic_quant_module_mappings()) | {_nnm.Sequential})


def _assert_valid_qconfig(qconfig, mod) -> None:
    """torch's check: fbgemm has no per-channel transposed convolution, so a ConvTranspose{1,2,3}d's weight
    observer must be a per-tensor one."""
    if qconfig is None or qconfig.weight is None or not isinstance(
            mod, (_nnm.ConvTranspose1d, _nnm.ConvTranspose2d, _nnm.ConvTranspose3d)):
        return
    if isinstance(qconfig.weight(), (PerChannelMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
        raise AssertionError("Per channel weight observer is not supported yet for ConvTranspose{n}d.")


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None) -> None:
    """Give every submodule a `.qconfig`: its own entry in qconfig_dict (by type, then by qualified name), else
    its parent's; the root's own qconfig (or qconfig_dict[""]) is the default."""
    qconfig_dict = qconfig_dict or {}

    def visit(mod, parent_qconfig, prefix):
        qc = qconfig_dict.get(type(mod), parent_qconfig)
        qc = qconfig_dict.get(prefix, qc)
        qc = getattr(mod, "qconfig", qc) if "qconfig" in mod.__dict__ else qc
        _assert_valid_qconfig(qc, mod)
        mod.qconfig = qc
        for name, child in mod.named_children():
            visit(child, qc, prefix + "." + name if prefix else name)

    visit(module, qconfig_dict.get("", None), "")


def _observer_hook(mod, input, output):
    return mod.activation_post_process(output)


def _needs_observer(mod) -> bool:
    return getattr(mod, "qconfig", None) is not None


def _add_observer_(module, extra_types=()) -> None:
    for name, child in module.named_children():
        if type(child) in (nnq.FloatFunctional, nnq.QFunctional):   # (they call their observer themselves)
            if _needs_observer(child):
                child.activation_post_process = child.qconfig.activation()
        elif isinstance(child, nni._FusedModule) or type(child) in extra_types:
            if _needs_observer(child):
                _insert_observer(child)
        else:
            _add_observer_(child, extra_types)
    if not list(module.children()) and not isinstance(module, (_nnm.Sequential, DeQuantStub)) and \
            type(module) in _propagation_types() and _needs_observer(module):
        _insert_observer(module)


def _insert_observer(mod) -> None:
    mod.add_module("activation_post_process", mod.qconfig.activation())
    mod.register_forward_hook(_observer_hook)
    mod.__dict__["_fg_observer_hooked"] = True


@_deprecated
def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Attach observers (model.qconfig's activation observer) to the modules convert will quantize; run
    calibration data through the result, then convert it."""
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, None)
    if not any(getattr(m, "qconfig", None) for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct configuration "
                      "through `qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules",
                      stacklevel=2)
    _add_observer_(model, tuple(observer_non_leaf_module_list or ()))
    return model


def _remove_observers(module) -> None:
    for child in module.children():
        _remove_observers(child)
    if "activation_post_process" in module._modules:
        del module._modules["activation_post_process"]
    if module.__dict__.pop("_fg_observer_hooked", False):
        hooks = module._forward_hooks
        for k in [k for k, h in hooks.items() if h is _observer_hook]:
            del hooks[k]


def swap_module(mod, mapping, custom_module_class_mapping=None, use_precomputed_fake_quant=False):
    """mapping[type(mod)].from_float(mod) when mod has a qconfig and a mapping entry, else mod."""
    if getattr(mod, "qconfig", None) is not None and type(mod) in mapping:
        return mapping[type(mod)].from_float(mod)
    return mod


def _convert(module, mapping, inplace=True) -> Module:
    if not inplace:
        module = copy.deepcopy(module)
    for name, child in list(module.named_children()):
        if not isinstance(child, nni._FusedModule) and type(child) not in mapping:
            _convert(child, mapping, True)
        new = swap_module(child, mapping)
        if new is not child:
            module._modules[name] = new
    return module


@_deprecated
def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None, use_precomputed_fake_quant=False):
    """Swap each observed float (or QAT) submodule for its quantized counterpart (mapping: the static defaults),
    using its observers' scale and zero point."""
    if is_reference:
        raise NotImplementedError("funcgrad's convert has no reference (is_reference=True) modules")
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, get_default_static_quant_module_mappings() if mapping is None else mapping, True)
    if remove_qconfig:
        for m in module.modules():
            m.__dict__.pop("qconfig", None)
            if "qconfig" in getattr(m, "__dict__", {}):
                del m.qconfig
    return module


@_deprecated
def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """prepare, run_fn(model, *run_args) to calibrate, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args) if isinstance(run_args, (list, tuple)) else run_fn(model, run_args)
    convert(model, mapping, inplace=True)
    return model


_DYNAMIC_DEFAULTS = {qint8: default_dynamic_qconfig, _fg.float16: float16_dynamic_qconfig,
                     _fg.quint8: float_qparams_weight_only_qconfig,
                     _fg.quint4x2: float_qparams_weight_only_qconfig_4bit}


@_deprecated
def quantize_dynamic(model, qconfig_spec=None, dtype=qint8, mapping=None, inplace=False):
    """Replace the submodules named by qconfig_spec (types, names, or a dict to QConfigs) with dynamically
    quantized ones: Linear / LSTM with qint8 weights (activations quantized per call) or float16 weights
    (dtype=torch.float16), Embedding / EmbeddingBag weight-only (quint8; quint4x2: EmbeddingBag)."""
    if qconfig_spec is None:
        if dtype is qint8 or dtype == _fg.float16:
            qconfig_spec = dict.fromkeys((_nnm.Linear, _nnm.LSTM), _DYNAMIC_DEFAULTS[dtype])
        elif dtype is _fg.quint8:
            qconfig_spec = dict.fromkeys((_nnm.EmbeddingBag, _nnm.Embedding), float_qparams_weight_only_qconfig)
        elif dtype is _fg.quint4x2:
            qconfig_spec = {_nnm.EmbeddingBag: float_qparams_weight_only_qconfig_4bit}
        else:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. Provide full qconfig "
                             "please")
    elif isinstance(qconfig_spec, set):
        if dtype not in _DYNAMIC_DEFAULTS:
            raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
        qconfig_spec = dict.fromkeys(qconfig_spec, _DYNAMIC_DEFAULTS[dtype])
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    unsupported = [k for k in qconfig_spec if isinstance(k, type) and k not in mapping]
    if unsupported:
        raise NotImplementedError(f"quantize_dynamic: funcgrad has no dynamically quantized module for "
                                  f"{[k.__name__ for k in unsupported]} (supported: nn.Linear, nn.LSTM, "
                                  "nn.Embedding, nn.EmbeddingBag)")
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model


@_deprecated
def prepare_qat(model, mapping=None, inplace=False):
    """Swap Linear / Conv2d (and fused LinearReLU / ConvReLU2d) for their QAT modules (fake-quantized weights)
    and attach the qconfig's activation fake-quantizers; train, then convert."""
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    mapping = get_default_qat_module_mappings() if mapping is None else mapping
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, None)
    convert(model, mapping, inplace=True, remove_qconfig=False)
    prepare(model, inplace=True, observer_non_leaf_module_list=set(mapping.values()))
    return model


@_deprecated
def quantize_qat(model, run_fn, run_args, inplace=False):
    """prepare_qat, run_fn(model, *run_args) to train, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, inplace=True)
    return model


def add_quant_dequant(module):
    """Wrap every leaf with a qconfig in QuantWrapper (QuantStub, the module, DeQuantStub)."""
    if not list(module.children()) and getattr(module, "qconfig", None):
        return QuantWrapper(module)
    for name, child in module.named_children():
        module._modules[name] = add_quant_dequant(child)
    return module


# --- fusion --------------------------------------------------------------------------------------------
def _fold_bn(conv, bn):
    """conv with the eval-mode batch norm after it folded into its weight and bias."""
    fused = copy.deepcopy(conv)
    w, b = conv.weight.detach(), conv.bias.detach() if conv.bias is not None else _fg.zeros(conv.out_channels)
    inv = (bn.running_var + bn.eps).rsqrt()
    g = bn.weight.detach() if bn.weight is not None else _fg.ones_like(inv)
    beta = bn.bias.detach() if bn.bias is not None else _fg.zeros_like(inv)
    fused.weight = _Parameter(w * (g * inv).reshape(-1, *([1] * (w.ndim - 1))))
    fused.bias = _Parameter((b - bn.running_mean) * inv * g + beta)
    return fused


def _fuse(mods):
    types = tuple(type(m) for m in mods)
    L, R = _nnm.Linear, _nnm.ReLU
    for n in (1, 2, 3):
        C, B = getattr(_nnm, f"Conv{n}d"), getattr(_nnm, f"BatchNorm{n}d")
        conv_relu = getattr(nni, f"ConvReLU{n}d")
        if types in ((C, B), (C, B, R)) and mods[0].training:
            if n != 2:
                raise NotImplementedError(f"fuse_modules: funcgrad has no ConvBn{n}d for quantization-aware "
                                          "training; fuse the model in eval mode (the batch norm is folded)")
            return (nni.ConvBn2d if len(mods) == 2 else nni.ConvBnReLU2d)(*mods)
        if types == (C, B):
            return _fold_bn(*mods)
        if types == (C, B, R):
            return conv_relu(_fold_bn(mods[0], mods[1]), mods[2])
        if types == (C, R):
            return conv_relu(*mods)
    if types == (L, R):
        return nni.LinearReLU(*mods)
    if types == (_nnm.Linear, _nnm.BatchNorm1d) and not mods[0].training:
        return _fold_bn(*mods)
    raise NotImplementedError(f"Cannot fuse modules: {types}")


def _get(model, name):
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set(model, name, value):
    *parents, last = name.split(".")
    for part in parents:
        model = getattr(model, part)
    setattr(model, last, value)


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=None, fuse_custom_config_dict=None):
    """Fuse each list of submodule names (conv-bn, conv-bn-relu, conv-relu for Conv1d / 2d / 3d, linear-relu,
    linear-bn) into the first one; the others become nn.Identity."""
    if not inplace:
        model = copy.deepcopy(model)
    groups = modules_to_fuse if modules_to_fuse and isinstance(modules_to_fuse[0], (list, tuple)) else \
        [modules_to_fuse]
    for names in groups:
        mods = [_get(model, n) for n in names]
        fused = (fuser_func or _fuse)(mods)
        _set(model, names[0], fused)
        for n in names[1:]:
            _set(model, n, _nnm.Identity())
    return model

