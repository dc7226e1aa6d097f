"""torch's TypeError for a non-tensor where a function wants a tensor:
"addcmul(): argument 'input' (position 1) must be Tensor, not int"."""
from __future__ import annotations

import functools
import inspect

from ._tensor import Tensor

# parameter names that always take a tensor in the functions wrapped here
_TENSOR_PARAMS = frozenset({"input", "tensor1", "tensor2", "batch1", "batch2", "vec1", "vec2", "A", "y", "LU_data",
                            "LU_pivots", "mask", "source", "src", "log_probs", "theta", "grid"})


def require_tensors(fn, prefix: str = ""):
    """fn with its tensor parameters (by name, among the first few) checked to be Tensors."""
    if getattr(fn, "_numbers_ok", False):  # torch accepts a Number for either operand (xlogy, zeta)
        return fn
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return fn
    checked = [(i, p.name) for i, p in enumerate(params[:4])
               if p.name in _TENSOR_PARAMS and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.default is inspect.Parameter.empty]
    if not checked:
        return fn
    label = prefix + fn.__name__
    shift = getattr(fn, "_number_first", None)  # a deprecated overload's extra leading Number (addcmul's value)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        a = args
        if shift is not None and len(args) == len(checked) + 1 and not isinstance(args[shift], Tensor):
            a = args[:shift] + args[shift + 1:]
        for i, name in checked:
            v = a[i] if i < len(a) else kwargs.get(name, None)
            if not isinstance(v, Tensor) and (i < len(a) or name in kwargs):
                raise TypeError(f"{label}(): argument '{name}' (position {i + 1}) must be Tensor, not "
                                f"{type(v).__name__}")
        return fn(*args, **kwargs)
    return wrapper


def wrap_module(mod, names, prefix: str = "") -> None:
    """Replace mod's functions `names` by their checked versions."""
    for n in names:
        f = getattr(mod, n, None)
        if inspect.isfunction(f):
            setattr(mod, n, require_tensors(f, prefix))


# --- dtype agreement -------------------------------------------------------------------------------------
# torch spells a dtype three ways in its messages: the ScalarType name ("Double"), the C++ type name that
# caffe2's TypeMeta prints ("double", "c10::Half", "long int") and the Python repr ("torch.float64").
_SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                 "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64", "float16": "Half",
                 "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble"}
_CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
              "int64": "long int", "uint16": "short unsigned int", "uint32": "unsigned int",
              "uint64": "long unsigned int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


class DtypeName:
    """A dtype as torch's messages spell it: f"{d}" -> 'Double' (ScalarType), f"{d:c}" -> 'double' (C++ type),
    f"{d:t}" -> 'torch.float64', f"{d:T}" -> 'torch.DoubleTensor' (legacy tensor type)."""
    __slots__ = ("name",)

    def __init__(self, dt) -> None:
        self.name = getattr(dt, "name", None) or str(dt)

    def __format__(self, spec: str) -> str:
        n = self.name
        if spec == "c":
            return _CPP_NAMES.get(n, n)
        if spec == "t":
            return "torch." + n
        if spec == "T":
            return f"torch.{_SCALAR_NAMES.get(n, n)}Tensor"
        return _SCALAR_NAMES.get(n, n)

    __str__ = __repr__ = lambda self: format(self, "")


def dtype_error(msg: str, *tensors) -> RuntimeError:
    """RuntimeError(msg) with {0}, {1:c}, ... filled by the tensors' dtypes (None for an absent tensor)."""
    return RuntimeError(msg.format(*(None if t is None else DtypeName(t._np_dtype()) for t in tensors)))


def check_same_dtype(msg: str, *tensors) -> None:
    """torch's RuntimeError (msg, formatted as in dtype_error) unless the tensors given (None skipped) share
    one dtype. Compares NumPy dtypes only: no conversion, nothing on the path when they agree."""
    d = None
    for t in tensors:
        if t is not None:
            if d is None:
                d = t._np_dtype()
            elif t._np_dtype() != d:
                raise dtype_error(msg, *tensors)


def check_out_dtype(out, result_dtype, msg: str = "Expected out tensor to have dtype {1:c}, but got {0:c} instead"
                    ) -> None:
    """torch's structured ops (mm, bmm, addmm, ...) want out= of exactly the result's dtype."""
    if out is not None and out._np_dtype() != result_dtype:
        raise RuntimeError(msg.format(DtypeName(out._np_dtype()), DtypeName(result_dtype)))
