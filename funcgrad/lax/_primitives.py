"""The primitives under JAX's `*_p` names (jax.lax.add_p, ...), where funcgrad's card computes the same
operation as JAX's primitive."""
from __future__ import annotations

from .._src.core.primitive import registry as _registry

# JAX name -> funcgrad card name. Cards whose operands or params are laid out differently from JAX's
# primitive (gather, scatter, select_n, cond, ...) are left out.
_SAME = ("abs acos acosh add and argmax argmin asin asinh atan atan2 atanh bessel_i0e bessel_i1e "
         "bitcast_convert_type broadcast_in_dim cbrt ceil clamp complex concatenate conj "
         "conv_general_dilated convert_element_type cos cosh cumlogsumexp cummax cummin cumprod cumsum "
         "digamma div dot_general dynamic_slice dynamic_update_slice eq erf erf_inv erfc exp exp2 expm1 fft "
         "floor ge gt igamma igammac imag integer_pow iota is_finite le lgamma log log1p logistic lt max min "
         "mul ne neg nextafter not or pad polygamma population_count pow real reduce_and reduce_max "
         "reduce_min reduce_or reduce_prod reduce_sum reduce_window_max reduce_window_min reduce_window_sum "
         "rem reshape rev round rsqrt shift_left shift_right_arithmetic shift_right_logical sign sin sinh "
         "slice sort sqrt square squeeze stop_gradient sub tan tanh top_k transpose xor").split()
PRIMITIVES = {f"{n}_p": _registry[n] for n in _SAME if n in _registry}
if "regularized_incomplete_beta_p" not in PRIMITIVES and "betainc" in _registry:
    PRIMITIVES["regularized_incomplete_beta_p"] = _registry["betainc"]
globals().update(PRIMITIVES)
__all__ = sorted(PRIMITIVES)
