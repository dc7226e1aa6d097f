"""Matrix and tensor products with torch's dtype rules: matmul, mm, bmm, mv, dot, inner, vdot, outer,
addmm/addmv/baddbmm (beta and alpha scaling), einsum, tensordot, kron and cross."""
from __future__ import annotations

import math

import builtins
import collections

import numpy as np

from .. import _jnp as jnp, _dtype as D
from ..._src.prims.linalg import dot_general as _dot_general, dot_general_p as _dot_general_p
from .._argcheck import (check_out_dtype as _check_out_dtype, check_same_dtype as _check_same_dtype,
                         dtype_error as _dtype_error)
from .._tensor import Tensor, _dim
from .._dispatch import _apply, _apply_prim2
from ._common import _bshape, _float, _int, _one_float_dtype, _out, _range
from .arithmetic import mul


_MM_DT = "expected m1 and m2 to have the same dtype, but got: {0:c} != {1:c}"
_DOT_DT = "dot : expected both vectors to have same dtype, but found {0} and {1}"
_SCALAR_DT = "expected scalar type {0} but found {1}"
_MV_DT = "addmv input tensors must have the same dtype, but got {0}, {1}, and {2}"


def _matmul_dtypes(a, b):
    """torch's error for matmul operands of different dtypes, worded as the kernel matmul lowers to words it
    (dot, mv, mm or bmm)."""
    if a._np_dtype() != b._np_dtype():
        if a.ndim == 1 and b.ndim == 1:
            raise _dtype_error(_DOT_DT, a, b)
        if b.ndim == 1:
            raise _dtype_error(_MV_DT, b, a, b)  # (mv's result, allocated like vec, is addmv's self)
        if b.ndim == 2:
            raise _dtype_error(_MM_DT, a, b)
        raise _dtype_error(_SCALAR_DT, a, b)


def matmul(input, other, *, out=None):
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    ka = input.shape[-1]
    kb = other.shape[-2] if other.ndim > 1 else other.shape[0]
    if input.ndim == 1 and other.ndim == 1:  # (dot checks the dtypes first)
        _matmul_dtypes(input, other)
    if ka != kb:
        _matmul_shape_error(input, other, ka, kb)
    _matmul_dtypes(input, other)  # (the other kernels check the shapes first, as matmul's reshapes do)
    _check_out_dtype(out, input._np_dtype())
    if input.ndim <= 2 and other.ndim <= 2 and input._v is not None and other._v is not None and \
            input._v.dtype.kind in "fc" and input._v.dtype.itemsize >= 4:
        # vectors and matrices: one dot_general bind (jnp.matmul's), straight on the buffers or recorded as one
        params = _DOT_PARAMS[input.ndim]
        return _out(_apply_prim2(_matmul_node(input.ndim, other.ndim), _DOT_P,
                                 _mm2 if input.ndim == 2 and other.ndim == 2 else _matmul_fn, input, other, params),
                    out)
    if input.ndim == 2 and other.ndim == 2:
        return _out(_apply("Mm", _mm2, (input, other)), out)
    if input.ndim > 2 or other.ndim > 2:  # the batch dims broadcast (torch's RuntimeError when they cannot)
        _bshape(tuple(input.shape[:-2]), tuple(other.shape[:-2]) if other.ndim > 1 else ())
    return _out(_apply(_matmul_node(input.ndim, other.ndim), lambda a, b: jnp.matmul(a, b), (input, other)), out)


def _matmul_shape_error(input, other, ka, kb):
    """torch's error for matmul operands whose inner sizes differ, worded by the kernel matmul lowers to (mm of
    the folded batch, mv, dot or bmm)."""
    na, nb = input.ndim, other.ndim
    if na == 1 and nb == 1:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{ka}] and src [{kb}] to have the same number "
                           f"of elements, but got {ka} and {kb} elements respectively")
    if na == 2 and nb == 1:
        m = input.shape[0]
        raise RuntimeError(f"size mismatch, got input ({m}), mat ({m}x{ka}), vec ({kb})")
    if nb <= 2:  # (a vector, matrix or batch times a matrix: one mm of the folded rows)
        rows = math.prod(input.shape[:-1])
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{ka} and {kb}x{other.shape[-1]})")
    batch = math.prod(_bshape(tuple(input.shape[:-2]), tuple(other.shape[:-2])))
    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {ka}] but got: "
                       f"[{batch}, {kb}].")


def _matmul_node(na: int, nb: int) -> str:
    """The node torch's matmul leaves for operands of ranks na, nb (the last op of its decomposition): mm,
    mv, dot, the squeeze after a vector-matrix mm, the unsafe view after a batched one (a clone after a matrix
    times a batch)."""
    if na <= 2 and nb <= 2:
        return _RANK_NODES[(na - 1) * 2 + nb - 1]
    return "Clone" if na == 2 else "UnsafeView"


def matmul_dunder(general):
    """Tensor.__matmul__: vectors and matrices of one float dtype (32 bits or more) as one dot_general bind made
    here (matmul's direct path, less its checks' frames); anything else to `general`."""
    def m(self, other):
        yv = other._v if isinstance(other, Tensor) else None
        xv = self._v
        if yv is not None and xv is not None and 0 < xv.ndim <= 2 and 0 < yv.ndim <= 2 and yv.dtype is xv.dtype and \
                xv.dtype.kind in "fc" and xv.dtype.itemsize >= 4 and xv.shape[-1] == yv.shape[0]:
            n = xv.ndim * 2 + yv.ndim - 3  # (0 dot, 1 vector-matrix, 2 matrix-vector, 3 matrix-matrix)
            return _apply_prim2(_RANK_NODES[n], _DOT_P, _mm2 if n == 3 else _matmul_fn, self, other,
                                _DOT_PARAMS[xv.ndim], _DOT_BOUND[xv.ndim])
        return general(self, other)
    m._rejects_kinds = True  # (general has the rules; see _complex_reject.guard_method)
    return m


_MM_DN = (((1,), (0,)), ((), ()))
_DOT_P = _dot_general_p
_DOT_PARAMS = {n: {"dimension_numbers": dn, "preferred_element_type": None}
               for n, dn in ((1, (((0,), (0,)), ((), ()))), (2, _MM_DN))}
# _apply_prim2's `bound` for them: the params' key and the card's impl for that case called bare (its `plain`)
_DOT_BOUND = {n: (tuple(p.items()), _DOT_P.impl.plain) for n, p in _DOT_PARAMS.items()}
_RANK_NODES = ("Dot", "Squeeze4", "Mv", "Mm")  # (_matmul_node's names for ranks 1/2 by 1/2)


def _matmul_fn(a, b):
    return jnp.matmul(a, b)


def _mm2(a, b):
    return _dot_general(a, b, _MM_DN)


def mm(input, mat2, *, out=None):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2, out=out)


def bmm(input, mat2, *, out=None):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _check_same_dtype(_SCALAR_DT, input, mat2)
    _check_out_dtype(out, input._np_dtype())
    return _out(_apply("Bmm", lambda a, b: jnp.matmul(a, b), (input, mat2)), out)


def mv(input, vec, *, out=None):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec.ndim}, {input.ndim}, {vec.ndim}")
    _check_same_dtype(_MV_DT, vec if out is None else out, input, vec)  # (torch's addmv with out as self)
    return matmul(input, vec, out=out)


def dot(input, other, *, out=None):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _check_same_dtype(_DOT_DT, input, other)
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
                           f"and {other.shape[0]} elements respectively")
    _check_out_dtype(out, input._np_dtype(), "result dtype {0} does not match input dtype {1}")
    return _out(_apply("Dot", lambda a, b: jnp.dot(a, b), (input, other)), out)


def inner(input, other, *, out=None):
    """Sum over the last dims of both (a product with a scalar when either is 0-d, promoting as mul does)."""
    if not input.ndim or not other.ndim:
        return mul(input, other, out=out)
    _check_same_dtype("both inputs should have same dtype", input, other)
    _check_out_dtype(out, input._np_dtype(), "tensordot: Expected the output tensor to have dtype {1}, but got an "
                     "output tensor with dtype {0}")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return _out(_apply("Inner", lambda a, b: jnp.inner(a, b), (input, other)), out)


def vdot(input, other):
    _check_same_dtype(_DOT_DT, input, other)
    return _apply("Vdot", lambda a, b: jnp.vdot(a, b), (input, other))


def outer(input, vec2, *, out=None):
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return _out(_apply("Mul", lambda a, b: jnp.outer(a, b), (input, vec2)), out)  # (torch's: a column times b)


ger = outer


def _expandable(input, shape, name):
    """torch's addmm-family rule: input must expand to the product's shape (not broadcast beyond it)."""
    s = tuple(input.shape)
    if len(s) > len(shape) or builtins.any(a not in (1, b) for a, b in builtins.zip(s[::-1], shape[::-1])):
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1] if shape else 0}) must match the "
                           f"existing size ({s[-1] if s else 0}) at non-singleton dimension, in {name}: "
                           f"input {list(s)}, product {list(shape)}")


def _int_coefs(r, beta, alpha):
    """torch takes beta and alpha in an integer result's dtype (truncated) in addmm / addmv / baddbmm."""
    if r._np_dtype().kind in "biu":
        return (_int(beta) if isinstance(beta, _float) else beta), (_int(alpha) if isinstance(alpha, _float) else alpha)
    return beta, alpha


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2)."""
    _check_out_dtype(out, mat2._np_dtype())
    return _out(_addmm(input, mat1, mat2, beta, alpha), out)


def _addmm(input, mat1, mat2, beta, alpha):
    if isinstance(input, Tensor):
        _check_same_dtype("self and mat2 must have the same dtype, but got {0} and {1}", input, mat2)
    _check_same_dtype("mat1 and mat2 must have the same dtype, but got {0} and {1}", mat1, mat2)
    if mat2._np_dtype() == np.float16 or mat2.dtype == D.bfloat16:  # torch's CPU kernel: float32, one rounding
        inp = input.float() if isinstance(input, Tensor) else input
        return _addmm(inp, mat1.float(), mat2.float(), beta, alpha).to(mat2.dtype)
    if _one_node(input, beta, alpha, mat1, mat2) and mat1.ndim == 2 and mat2.ndim == 2 and \
            mat1.shape[1] == mat2.shape[0]:
        _expandable(input, (mat1.shape[0], mat2.shape[1]), "addmm")
        return _scaled_product("Addmm", _MM_DN, input, mat1, mat2, beta, alpha)
    r = mm(mat1, mat2)
    beta, alpha = _int_coefs(r, beta, alpha)
    if isinstance(input, Tensor):
        _expandable(input, tuple(r.shape), "addmm")
    if alpha != 1:
        r = r * alpha
    if beta == 0:  # input is ignored (NaN in it does not propagate), as in torch
        return r
    return (input * beta if beta != 1 else input) + r


def _one_node(input, beta, alpha, *operands) -> bool:
    """Whether an addmm-family op is recorded as one node of its binds (torch's AddmmBackward0, ...): a tensor
    input and operands of one float or complex dtype (see _one_float_dtype), with real Python numbers as beta
    and alpha."""
    return type(beta) in _REAL and type(alpha) in _REAL and _one_float_dtype(input, *operands)


_REAL = (int, float)


def _scaled_product(name, dn, input, a, b, beta, alpha, sum_axis=None):
    """beta * input + alpha * dot_general(a, b, dn) (summed over `sum_axis` when given) as ONE recorded node
    `name` (torch's AddmmBackward0, AddmvBackward0, BaddbmmBackward0, AddbmmBackward0), the derivatives those
    of its binds. With beta == 0 input is not read (NaN in it does not propagate) but stays an input of the
    node, as torch's (its gradient is zero)."""
    def fn(c, x, y):
        r = _dot_general(x, y, dn)
        if sum_axis is not None:
            r = jnp.sum(r, axis=sum_axis)
        if alpha != 1:
            r = r * alpha
        if beta == 0:  # (input, expandable to r's shape, is not read: its gradient is zero)
            return r
        return (c * beta if beta != 1 else c) + r
    return _apply(name, fn, (input, a, b))


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    _check_out_dtype(out, vec._np_dtype())
    return _out(_addmv(input, mat, vec, beta, alpha), out)


def _addmv(input, mat, vec, beta, alpha):
    _check_same_dtype(_MV_DT, input if isinstance(input, Tensor) else None, mat, vec)
    if _one_node(input, beta, alpha, mat, vec) and mat.ndim == 2 and vec.ndim == 1 and mat.shape[1] == vec.shape[0]:
        _expandable(input, (mat.shape[0],), "addmv")
        return _scaled_product("Addmv", _MV_DN, input, mat, vec, beta, alpha)
    r = mv(mat, vec)
    beta, alpha = _int_coefs(r, beta, alpha)
    if isinstance(input, Tensor):
        _expandable(input, tuple(r.shape), "addmv")
    return (input * beta if beta != 1 else input) + (r * alpha if alpha != 1 else r)


_MV_DN = (((1,), (0,)), ((), ()))
_BMM_DN = (((2,), (1,)), ((0,), (0,)))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (batch1 @ batch2), batched."""
    _check_out_dtype(out, batch2._np_dtype())
    return _out(_baddbmm(input, batch1, batch2, beta, alpha), out)


def _baddbmm(input, batch1, batch2, beta, alpha):
    if isinstance(input, Tensor) and input._np_dtype() != batch1._np_dtype():
        raise _dtype_error("Input dtypes must be the same, got: input {0:c}, batch1: {1:c}, batch2: {2:c}", input,
                           batch1, batch2)
    if _one_node(input, beta, alpha, batch1, batch2) and batch1.ndim == 3 and batch2.ndim == 3 and \
            batch1.shape[0] == batch2.shape[0] and batch1.shape[2] == batch2.shape[1]:
        _expandable(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]), "baddbmm")
        return _scaled_product("Baddbmm", _BMM_DN, input, batch1, batch2, beta, alpha)
    r = bmm(batch1, batch2)
    beta, alpha = _int_coefs(r, beta, alpha)
    if isinstance(input, Tensor):
        _expandable(input, tuple(r.shape), "baddbmm")
    return (input * beta if beta != 1 else input) + (r * alpha if alpha != 1 else r)


def _einsum_dtypes(equation, operands):
    """torch contracts with bmm, which wants one dtype: operands of several dtypes raise once any subscript is
    summed over two of them (elementwise products and outer products promote)."""
    dts = [t._np_dtype() for t in operands if isinstance(t, Tensor)]
    if len(dts) < 2 or builtins.all(d == dts[0] for d in dts) or not isinstance(equation, str):
        return
    lhs, _, rhs = equation.replace(" ", "").replace("...", "").partition("->")
    terms = lhs.split(",")
    counts = collections.Counter(c for term in terms for c in set(term))
    out = set(rhs) if "->" in equation else {c for c, n in counts.items() if n == 1}
    if builtins.any(n > 1 and c not in out for c, n in counts.items()):
        other = next(t for t in operands if t._np_dtype() != dts[0])
        raise _dtype_error(_SCALAR_DT, operands[0], other)


def _sublist_equation(args):
    """torch.einsum's sublist form einsum(op1, [0, 1], op2, [1, 2], [0, 2]): (equation, operands); subscripts
    0-51 are the letters a-z, A-Z, and Ellipsis is `...`."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sub):
        out = []
        for i in sub:
            if i is Ellipsis:
                out.append("...")
            elif not 0 <= int(i) < 52:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
            else:
                out.append(letters[int(i)])
        return "".join(out)
    ops, subs = list(args[0::2]), [term(s) for s in args[1::2]]
    rhs = ""
    if len(args) % 2:  # a trailing sublist: the output's subscripts
        ops, rhs = ops[:-1], "->" + term(args[-1])
    return ",".join(subs) + rhs, ops


def einsum(equation, *operands):
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    _einsum_dtypes(equation, operands)
    try:
        return _apply("Einsum", lambda *xs: jnp.einsum(equation, *xs), tuple(operands))
    except ValueError as e:  # (a subscript's sizes disagree, a wrong operand count: torch's RuntimeError)
        raise RuntimeError(f"einsum(): {e}") from None


def tensordot(a, b, dims=2):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, _int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(_range(a.ndim - dims, a.ndim)), list(_range(dims))
    else:
        da, db = ([dims[0]] if isinstance(dims[0], _int) else list(dims[0]),
                  [dims[1]] if isinstance(dims[1], _int) else list(dims[1]))
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    _check_same_dtype("both inputs should have same dtype", a, b)
    for i, j in zip(da, db):
        sa, sb = a.shape[_dim(i, a.ndim)], b.shape[_dim(j, b.ndim)]
        if sa != sb and 1 in (sa, sb):  # torch broadcasts a contracted dim of size 1
            if sa == 1:
                a = a.expand(*[sb if k == _dim(i, a.ndim) else -1 for k in _range(a.ndim)])
            else:
                b = b.expand(*[sa if k == _dim(j, b.ndim) else -1 for k in _range(b.ndim)])
        elif sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {i} and "
                               f"second has size {sb} in dim {j}")
    # (one node, named as the last of torch's decomposition (an mm's result viewed in the output shape):
    # "View0" is ViewBackward0, as an op that reads its inputs, unlike a view)
    return _apply("View0", lambda x, y: jnp.tensordot(x, y, axes=dims), (a, b))


def kron(input, other):
    """The Kronecker product, one node named as the last of torch's decomposition (reshapes, a product, an
    unsafe view: UnsafeViewBackward0)."""
    return _apply("UnsafeView", lambda a, b: jnp.kron(a, b), (input, other))


def cross(input, other, dim=None):
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    _check_same_dtype(_SCALAR_DT, input, other)
    shape = _bshape(tuple(input.shape), tuple(other.shape))
    if dim is None:  # torch.cross's default: the first dim of size 3
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    d = _dim(dim, len(shape))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return _apply("LinalgCross", lambda a, b: jnp.cross(a, b, axis=d), (input, other))


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("matmul", "mm", "bmm", "mv", "dot", "inner", "vdot", "outer", "ger", "addmm", "addmv", "baddbmm", "kron",
           "cross")
INPLACE = ()

__all__ = ["addmm", "addmv", "baddbmm", "bmm", "cross", "dot", "einsum", "ger", "inner", "kron", "matmul", "mm", "mv",
           "outer", "tensordot", "vdot"]
