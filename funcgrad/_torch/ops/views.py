"""Shapes and views: view/reshape (a view when the strides allow), flatten/unflatten, squeeze/unsqueeze,
permute/transpose/movedim, expand/broadcast_to, contiguous/clone, repeat/tile/repeat_interleave, and the
reorderings flip, roll and rot90."""
from __future__ import annotations

import math

import numpy as np

from .. import _jnp as jnp, _dtype as D, _functional
from ..._src.core.array import Array
from .._tensor import Tensor, _dim, _wrap
from .._dispatch import _apply1
from .._errors import _legacy
from .._views import _view
from ._common import _bshape, _int, _range


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple, D.Size)):
        return tuple(_int(s) for s in args[0])
    return tuple(_int(s) for s in args)


def _infer(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    if neg:
        known = 1
        for i, s in enumerate(shape):
            if i != neg[0]:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _np_view_reshape(v, shape):
    """v reshaped without copying; ValueError when that needs a copy."""
    try:
        return np.reshape(v, shape, copy=False)
    except TypeError:  # NumPy < 2.1 has no copy= argument
        r = v.view()
        try:
            r.shape = shape
        except AttributeError:
            raise ValueError("Unable to avoid creating a copy while reshaping.") from None
        return r


def _reshape_arr(shape):
    return lambda a: jnp.reshape(a, shape)


def view(input, *shape):
    """The same data in a new shape, sharing memory (one size may be -1); view(dtype) reinterprets the bytes.

    As torch, it raises when the strides cannot express the new shape (use reshape); writes through a view
    reach the base tensor.

    Examples:
        >>> import funcgrad as torch
        >>> x = torch.arange(6.0)
        >>> v = x.view(2, -1)
        >>> v
        tensor([[0., 1., 2.],
                [3., 4., 5.]])
        >>> v[0, 0] = 10.0
        >>> x
        tensor([10.,  1.,  2.,  3.,  4.,  5.])
    """
    if len(shape) == 1 and isinstance(shape[0], (D.dtype, np.dtype, type)):
        return _view_dtype(input, shape[0])
    shape = _infer(_shape_args(shape), input.numel())
    v = input._v if input._v is not None else _functional.shadow(input)
    try:
        nv = _np_view_reshape(v, shape)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") \
            from None
    return _view("View", input, lambda x: nv if x is v else _np_view_reshape(x, shape), _reshape_arr(shape))


def _view_dtype(input, dtype):
    dt = D.to_np(dtype)
    if input._v is None:
        raise NotImplementedError("view(dtype) of a traced tensor")
    src, dst = input._np_dtype().itemsize, dt.itemsize
    if src != dst:
        if input.ndim == 0:
            raise RuntimeError("self.dim() cannot be 0 to view " + str(input.dtype) + " as " + str(dtype) +
                               " (different element sizes)")
        if dst > src and input.shape[-1] % (dst // src):
            raise RuntimeError(f"self.size(-1) must be divisible by {dst // src} to view {input.dtype} as {dtype} "
                               "(different element sizes), but got " + str(input.shape[-1]))
        if input.ndim and input.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {input.dtype} as {dtype} (different element "
                               "sizes), but got " + str(input.stride(-1)))
    return _view("ViewDtype", input, lambda x: x.view(dt), lambda a: jnp.asarray(np.asarray(a).view(dt)))


def reshape(input, *shape):
    """The elements in a new shape (one size may be -1): a view when the strides allow, else a copy.

    Examples:
        >>> import funcgrad as torch
        >>> torch.arange(6).reshape(3, 2)
        tensor([[0, 1],
                [2, 3],
                [4, 5]])
        >>> torch.zeros(2, 3, 4).reshape(-1, 4).shape
        torch.Size([6, 4])
    """
    shape = _infer(_shape_args(shape), input.numel())
    v = input._v if input._v is not None else _functional.shadow(input)
    try:
        nv = _np_view_reshape(v, shape)
    except ValueError:
        return _apply1("UnsafeView", _reshape_arr(shape), input)
    return _view("View", input, lambda x: nv if x is v else _np_view_reshape(x, shape), _reshape_arr(shape))


def view_as(input, other):
    return view(input, other.shape)


def reshape_as(input, other):
    return reshape(input, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.ndim
    if nd == 0:  # (the dims are still checked, against [-1, 0])
        _dim(start_dim, 0), _dim(end_dim, 0)
        return reshape(input, (1,))
    s = _dim(start_dim, nd)
    e = _dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input.shape
    return reshape(input, shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])


def unflatten(input, dim, sizes):
    d = _dim(dim, input.ndim)
    shp = input.shape
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes and known == 0 and shp[d] == 0:
        raise RuntimeError(f"unflatten got an unexpected error:\ncannot reshape tensor of 0 elements into shape "
                           f"{sizes} because the unspecified dimension size -1 can be any value and is ambiguous")
    if -1 in sizes:
        bad = shp[d] % known != 0 if known else shp[d] != 0
    else:
        bad = known != shp[d]
    if bad:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {d} ({shp[d]}) "
                           "in the input tensor")
    if -1 in sizes:
        sizes[sizes.index(-1)] = shp[d] // known
    return view(input, shp[:d] + tuple(sizes) + shp[d + 1:])


def ravel(input):
    return reshape(input, (-1,))


def squeeze(input, dim=None):
    shp = input.shape
    if dim is None:
        axes = tuple(i for i, s in enumerate(shp) if s == 1)
    else:
        dims = dim if isinstance(dim, (list, tuple)) else (dim,)
        wrapped = [_dim(d, len(shp)) for d in dims]
        for i, d in enumerate(wrapped):
            if d in wrapped[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        axes = tuple(sorted(d for d in wrapped if shp and shp[d] == 1))
    nm = "Squeeze" if dim is None else ("Squeeze1" if not isinstance(dim, (list, tuple)) else "Squeeze2")
    if not axes:
        return _view(nm, input, lambda x: x.view(), lambda a: a)
    return _view(nm, input, lambda x: np.squeeze(x, axes), lambda a: jnp.squeeze(a, axes))


def unsqueeze(input, dim):
    nd = input.ndim
    if not -nd - 1 <= dim <= nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd - 1}, {nd}], but got {dim})")
    d = dim % (nd + 1)
    return _view("Unsqueeze", input, lambda x: _unsqueeze_np(x, d), lambda a: jnp.expand_dims(a, d))


def _unsqueeze_np(x, d):
    """np.expand_dims with torch's strides: the new dim's is size * stride of the dim it precedes (1 at the end),
    and the other dims keep theirs (NumPy's reshape may rewrite a size-1 dim's)."""
    new = x.shape[d] * x.strides[d] if d < x.ndim else x.itemsize
    return np.lib.stride_tricks.as_strided(x, x.shape[:d] + (1,) + x.shape[d:], x.strides[:d] + (new,) +
                                           x.strides[d:], writeable=x.flags.writeable)


def permute(input, *dims):
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_args(dims)
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
                           f"to len(dims) = {len(dims)}")
    p = tuple(_dim(d, nd) for d in dims)
    if len(set(p)) != nd:
        raise RuntimeError(f"permute(): duplicate dims are not allowed, got dims {tuple(dims)} for a tensor of "
                           f"shape {list(input.shape)}")
    return _view("Permute", input, lambda x: np.transpose(x, p), lambda a: jnp.transpose(a, p))


def transpose(input, dim0, dim1):
    nd = input.ndim
    if nd == 0:
        return _view("Transpose", input, lambda x: x.view(), lambda a: a)
    d0, d1 = _dim(dim0, nd), _dim(dim1, nd)
    p = list(_range(nd))
    p[d0], p[d1] = p[d1], p[d0]
    p = tuple(p)
    return _view("Transpose", input, lambda x: np.transpose(x, p), lambda a: jnp.transpose(a, p))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    if input.ndim < 2:
        return _view("T", input, lambda x: x.view(), lambda a: a)
    return _view("T", input, lambda x: np.transpose(x, (1, 0)), lambda a: jnp.transpose(a, (1, 0)))


def movedim(input, source, destination):
    nd = input.ndim
    src = [source] if isinstance(source, _int) else list(source)
    dst = [destination] if isinstance(destination, _int) else list(destination)
    src = [_dim(s, nd) for s in src]
    dst = [_dim(s, nd) for s in dst]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
                           f"the same number of dims as destination ({dst} dims)")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src}) or `destination` ({dst})")
    if nd == 0:
        return input.view(input.shape)
    order = [n for n in _range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


moveaxis = movedim


def expand(input, *sizes):
    sizes = _shape_args(sizes)
    nd = input.ndim
    if len(sizes) < nd:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(input.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({nd})")
    shp = input.shape
    out = []
    off = len(sizes) - nd
    for i, s in enumerate(sizes):
        if i < off:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            out.append(s)
        else:
            cur = shp[i - off]
            if s == -1:
                out.append(cur)
            elif cur == 1 or cur == s:
                out.append(s)
            else:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) "
                                   f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                                   f"{list(shp)}")
    out = tuple(out)
    return _view("Expand", input, lambda x: _expand_np(x, out), lambda a: jnp.broadcast_to(a, out))


def _expand_np(x, shape):
    """np.broadcast_to (read-only) with torch's strides: 0 on the new and the expanded dims only (NumPy's gives
    every size-1 dim stride 0, so `x.unsqueeze(0).expand(2, 1, 3).stride()` would differ from torch's)."""
    off = len(shape) - x.ndim
    st = tuple(0 if i < off or x.shape[i - off] != n else x.strides[i - off] for i, n in enumerate(shape))
    return np.lib.stride_tricks.as_strided(x, shape, st, writeable=False)


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, size):
    return expand(input, size)


def broadcast_tensors(*tensors):
    shape = ()
    for x in tensors:
        shape = _bshape(shape, x.shape)
    return tuple(expand(x, shape) for x in tensors)  # (a tuple, as torch)


def broadcast_shapes(*shapes):
    out = ()
    for s in shapes:
        out = _bshape(out, (s,) if isinstance(s, _int) else tuple(s))
    return D.Size(out)


def contiguous(input, memory_format=None):
    if input.is_contiguous():
        return input
    return clone(input)


def clone(input, *, memory_format=None):
    return _apply1("Clone", _identity, input)


def _identity(a):
    return a


def repeat(input, *sizes):
    sizes = _shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return _apply1("Repeat", lambda a: jnp.tile(a, sizes), input)


def tile(input, dims):
    """torch.tile: repeat with ones prepended to dims up to input's rank (so, as torch's, a RepeatBackward0)."""
    if not isinstance(dims, (list, tuple, D.Size)):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    dims = _shape_args((dims,))
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def _repeats_vector(r: Tensor, accept: str) -> list:
    """A repeats tensor's counts, with torch's checks: an integer dtype, `accept`'s dims, none negative."""
    if r._np_dtype().kind not in "iu":
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_legacy(r._np_dtype())}'")
    if (r.ndim != 1) if accept == "vector" else r.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat" if accept == "vector" else
                           "repeats must be 0-dim or 1-dim tensor")
    counts = r.tolist() if r.ndim else r.item()
    if min(counts if isinstance(counts, list) else [counts], default=0) < 0:
        raise RuntimeError("repeats can not be negative")
    return counts


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # (input is the repeats: each index repeated its count of times)
        r = _repeats_vector(input, "vector")
        return _wrap(Array(np.repeat(np.arange(len(r)), r).astype(np.int64)))
    tensor_repeats = isinstance(repeats, Tensor)
    if tensor_repeats:
        repeats = _repeats_vector(repeats, "0-dim or 1-dim")
    elif repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if input.ndim == 0 and dim is not None:
        if tensor_repeats:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        _dim(dim, 0)  # (torch's check, made on the input as a vector, names dim 1)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    n = input.numel() if dim is None else input.shape[_dim(dim, input.ndim)]
    if isinstance(repeats, list) and len(repeats) not in (1, n):
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{len(repeats)} and input.size({0 if dim is None else dim}) = {n}")
    if output_size is not None:
        total = sum(repeats) * (n if len(repeats) == 1 else 1) if isinstance(repeats, list) else repeats * n
        if output_size != total:
            raise RuntimeError("allocated size does not match required size" if tensor_repeats else
                               f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}")
    if dim is None:
        return _apply1("RepeatInterleave", lambda a: jnp.repeat(jnp.ravel(a), repeats), input)
    d = _dim(dim, input.ndim)
    return _apply1("RepeatInterleave", lambda a: jnp.repeat(a, repeats, axis=d), input)


def flip(input, dims):
    dims = (dims,) if isinstance(dims, _int) else tuple(dims)
    axes = tuple(_dim(d, input.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("dims has duplicates, original flip dims size=" + str(len(dims)))
    if input.ndim == 0:
        axes = ()
    return _apply1("Flip", lambda a: jnp.flip(a, axes) if axes else a, input)


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    ns = len(shifts) if isinstance(shifts, (list, tuple)) else 1
    nd = 0 if dims is None else len(dims) if isinstance(dims, (list, tuple)) else 1
    if ns == 0:
        raise RuntimeError("`shifts` required")
    if ns != nd and not (ns == 1 and nd == 0):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {ns}, dims:{nd}")
    if dims is None and isinstance(shifts, (list, tuple)):
        shifts = shifts[0]
    if input.numel() == 0:  # torch returns an empty input as it is, whatever dims says
        return clone(input)
    if input.ndim == 0 and dims is not None:
        raise IndexError(f"Dimension specified as {dims} but tensor has no dimensions")
    if dims is None:
        return _apply1("Roll", lambda a: jnp.reshape(jnp.roll(jnp.ravel(a), shifts), a.shape), input)
    dims = _dim(dims, input.ndim) if isinstance(dims, _int) else tuple(_dim(d, input.ndim) for d in dims)
    return _apply1("Roll", lambda a: jnp.roll(a, shifts, axis=dims), input)


def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _dim(dims[0], input.ndim), _dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    dims = (d0, d1)
    return _apply1("Rot90", lambda a: jnp.rot90(a, k, axes=tuple(dims)), input)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods (flip, tile and broadcast_to, whose methods take sizes as varargs, are written there)
METHODS = ("view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "ravel", "squeeze", "unsqueeze",
           "permute", "transpose", "swapaxes", "swapdims", "t", "movedim", "moveaxis", "expand", "expand_as",
           "contiguous", "clone", "repeat", "repeat_interleave", "fliplr", "flipud", "roll", "rot90")
INPLACE = ()

__all__ = ["broadcast_shapes", "broadcast_tensors", "broadcast_to", "clone", "contiguous", "expand", "expand_as",
           "flatten", "flip", "fliplr", "flipud", "moveaxis", "movedim", "permute", "ravel", "repeat",
           "repeat_interleave", "reshape", "reshape_as", "roll", "rot90", "squeeze", "swapaxes", "swapdims", "t",
           "tile", "transpose", "unflatten", "unsqueeze", "view", "view_as"]
