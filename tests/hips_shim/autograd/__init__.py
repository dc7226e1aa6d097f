"""HIPS autograd's top level on funcgrad (a test shim; see tests/hips_shim/README.md)."""
import funcgrad as _funcgrad

_funcgrad.config.update("jax_enable_x64", True)  # HIPS computes in float64 as NumPy does

from .builtins import dict, isinstance, list, tuple, type  # noqa: E402,F401
from .differential_operators import (  # noqa: E402,F401
    checkpoint, deriv, elementwise_grad, grad, grad_and_aux, grad_named, hessian, hessian_tensor_product,
    hessian_vector_product, holomorphic_grad, jacobian, make_ggnvp, make_hvp, make_jvp, make_vjp,
    multigrad_dict, tensor_jacobian_product, value_and_grad, vector_jacobian_product)
from .tracer import primitive  # noqa: E402,F401
