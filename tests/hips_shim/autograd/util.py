"""HIPS's autograd.util: subvals and the deprecated quick_grad_check."""
import warnings

from .wrap_util import subvals  # noqa: F401


def quick_grad_check(fun, arg0, extra_args=(), kwargs={}, verbose=True, eps=1e-4, rtol=1e-4, atol=1e-6,
                     rs=None):
    """Deprecated in HIPS: a first-order reverse-mode check_grads of fun in its first argument."""
    warnings.warn("quick_grad_check is deprecated; use autograd.test_util.check_grads")
    from .test_util import check_grads
    check_grads(lambda a: fun(a, *extra_args, **kwargs), modes=["rev"], order=1)(arg0)
