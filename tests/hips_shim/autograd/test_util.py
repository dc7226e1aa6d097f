"""HIPS's test_util over funcgrad.testing.check_grads (HIPS's argnum convention and failure wording)."""
import re
from itertools import product

import funcgrad.testing

from .core import vspace
from .wrap_util import get_name, unary_to_nary

TOL = 1e-6
RTOL = 1e-6


def scalar_close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


@unary_to_nary
def check_grads(f, x, modes=["fwd", "rev"], order=2):
    """funcgrad.testing.check_grads(f, (x,), order, modes); a failure is reported as HIPS words it,
    "Derivative (VJP) check of vjp_f failed", naming the derivative function that failed."""
    assert all(m in ["fwd", "rev"] for m in modes)
    try:
        funcgrad.testing.check_grads(f, (x,), order=order, modes=modes)
    except AssertionError as e:
        msg = str(e)
        kind = "VJP" if "reverse mode" in msg else "JVP"
        m = re.search(r"order (\d+)", msg)
        level = int(m.group(1)) if m else 1
        name = (kind.lower() + "_") * (level - 1) + get_name(f)
        raise AssertionError(f"Derivative ({kind}) check of {name} failed with arg {x}:\n{msg}") from None


def check_equivalent(x, y):
    x_vs, y_vs = vspace(x), vspace(y)
    assert x_vs == y_vs, f"VSpace mismatch:\nx: {x_vs}\ny: {y_vs}"
    v = x_vs.randn()
    assert scalar_close(x_vs.inner_prod(x, v), x_vs.inner_prod(y, v)), f"Value mismatch:\nx: {x}\ny: {y}"


def combo_check(fun, *args, **kwargs):
    """Check grads for every combination of the listed argument values and keyword values."""
    def _combo_check(*arg_lists, **kwarg_lists):
        kv = [[(k, v) for v in vs] for k, vs in kwarg_lists.items()]
        for a in product(*arg_lists):
            for k in product(*kv):
                check_grads(fun, *args, **kwargs)(*a, **dict(k))
    return _combo_check
