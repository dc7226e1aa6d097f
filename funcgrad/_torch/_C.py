"""torch._C: the names of torch's C extension that funcgrad provides (the `__torch_function__` protocol's switches
and helpers; their code is in overrides.py)."""
from .overrides import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401
                        _disabled_torch_function_impl, _is_torch_function_all_disabled, _is_torch_function_enabled)
from .overrides import (has_torch_function as _has_torch_function,  # noqa: F401
                        has_torch_function_unary as _has_torch_function_unary,
                        has_torch_function_variadic as _has_torch_function_variadic)

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "_is_torch_function_all_disabled", "_is_torch_function_enabled", "_has_torch_function",
           "_has_torch_function_unary", "_has_torch_function_variadic"]
