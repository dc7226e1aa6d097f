"""HIPS's differential operators, each on a funcgrad transform (vjp, jvp, jacrev, hessian, grad's
has_aux/holomorphic, checkpoint) with HIPS's argnum convention and HIPS's checks."""
import inspect
import warnings
from collections import OrderedDict

import funcgrad
import funcgrad.numpy as np

from .core import make_jvp as _make_jvp
from .core import make_vjp as _make_vjp
from .core import vspace
from .wrap_util import unary_to_nary

make_vjp = unary_to_nary(_make_vjp)
make_jvp = unary_to_nary(_make_jvp)

_SCALAR_ONLY = "only applies to real scalar-output functions. Try jacobian, elementwise_grad or holomorphic_grad."


@unary_to_nary
def grad(fun, x):
    """
    Returns a function which computes the gradient of `fun` with respect to positional argument number
    `argnum` (HIPS's docstring opening, which its tests read). fun's output must be real with one element
    (HIPS allows shape (1,), unlike JAX's grad)."""
    vjp, ans = _make_vjp(fun, x)
    if vspace(ans).size != 1:
        raise TypeError("Grad " + _SCALAR_ONLY)
    return vjp(vspace(ans).ones())


@unary_to_nary
def value_and_grad(fun, x):
    vjp, ans = _make_vjp(fun, x)
    if vspace(ans).size != 1:
        raise TypeError("value_and_grad " + _SCALAR_ONLY)
    return ans, vjp(vspace(ans).ones())


@unary_to_nary
def elementwise_grad(fun, x):
    """The vjp with a cotangent of ones: the Jacobian's column sums (its diagonal when it is diagonal)."""
    vjp, ans = _make_vjp(fun, x)
    if vspace(ans).iscomplex:
        raise TypeError("Elementwise_grad only applies to real-output functions.")
    return vjp(vspace(ans).ones())


@unary_to_nary
def deriv(fun, x):
    return _make_jvp(fun, x)(vspace(x).ones())[1]


@unary_to_nary
def jacobian(fun, x):
    """Shape out.shape + x.shape (funcgrad.jacrev)."""
    return funcgrad.jacrev(fun)(x)


@unary_to_nary
def hessian(fun, x):
    return funcgrad.hessian(fun)(x)


@unary_to_nary
def holomorphic_grad(fun, x):
    """f'(x) for holomorphic f (funcgrad.grad(holomorphic=True)); HIPS only warns for a real input."""
    if not vspace(x).iscomplex:
        warnings.warn("Input to holomorphic_grad is not complex")
        return grad(lambda z: np.real(fun(z)))(x)
    return funcgrad.grad(fun, holomorphic=True)(x)


@unary_to_nary
def grad_and_aux(fun, x):
    return funcgrad.grad(fun, has_aux=True)(x)


def grad_named(fun, argname):
    return grad(fun, inspect.getfullargspec(fun).args.index(argname))


@unary_to_nary
def make_hvp(fun, x):
    """(v -> H v at x, grad(fun)(x)), reusing one forward pass."""
    return _make_vjp(grad(fun), x)


def hessian_tensor_product(fun, argnum=0):
    """(*args, tensor) -> the Hessian of fun at args contracted with tensor."""
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return np.tensordot(fun_grad(*args, **kwargs), vector, np.ndim(vector))
    return grad(vector_dot_grad, argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """(*args, tensor) -> tensor contracted with the Jacobian of fun at args."""
    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return np.tensordot(vector, fun(*args, **kwargs), axes=np.ndim(vector))
    return jacobian(vector_dot_fun, argnum)


vector_jacobian_product = tensor_jacobian_product


@unary_to_nary
def make_jvp_reversemode(fun, x):
    """The jvp as the vjp of a vjp (linear in its cotangent)."""
    vjp, y = _make_vjp(fun, x)
    return _make_vjp(vjp, vspace(y).zeros())[0]


def make_ggnvp(f, g=lambda x: 1.0 / 2 * np.sum(x ** 2, axis=-1), f_argnum=0):
    """Generalised Gauss-Newton-vector products J_f^T H_g J_f v."""
    @unary_to_nary
    def _make_ggnvp(f, x):
        f_vjp, f_x = _make_vjp(f, x)
        g_hvp, grad_g_x = _make_vjp(grad(g), f_x)
        f_jvp, _ = _make_vjp(f_vjp, vspace(grad_g_x).zeros())
        return lambda v: f_vjp(g_hvp(f_jvp(v)))
    return _make_ggnvp(f, f_argnum)


def multigrad_dict(fun):
    """Gradients with respect to all named arguments, as an OrderedDict name -> gradient."""
    sig = inspect.signature(fun)

    def gradfun(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        names = list(bound.arguments)

        def by_name(d):
            b = sig.bind_partial()
            b.arguments.update(d)
            return fun(*b.args, **b.kwargs)
        g = grad(by_name)(dict(bound.arguments))
        return OrderedDict((n, g[n]) for n in names)
    return gradfun


def checkpoint(fun):
    return funcgrad.checkpoint(fun)
