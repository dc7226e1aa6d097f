"""Tensor methods that change a tensor's shape or storage in place, or reach its storage: resize_ / resize_as_
(and torch's deprecated out-of-place resize / resize_as), the in-place view ops (t_, transpose_, swapaxes_,
squeeze_, unsqueeze_, as_strided_), storage / untyped_storage, the legacy constructor `new`, as_subclass, map_,
sum_to_size and unfold; plus the attributes torch has for other devices and layouts (is_xpu, ..., all False)."""
from __future__ import annotations

import warnings

import numpy as np

from ..autograd import graph as _graph
from ..autograd.grad_mode import state
from . import _views
from ._errors import _LEAF_MSG, _VIEW_LEAF_MSG
from . import _creation as C, _jnp
from .._src.core.array import Array
from .ops import join_split, reductions, shape, views
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Tensor, _dim


# torch's grad_fn of an in-place view op, by the out-of-place view's node: t_ -> TBackward1, squeeze_(dim) ->
# SqueezeBackward4, ...
_INPLACE_NODE = {"TBackward0": "TBackward1", "TransposeBackward0": "TransposeBackward1",
                 "UnsqueezeBackward0": "UnsqueezeBackward1", "SqueezeBackward0": "SqueezeBackward3",
                 "SqueezeBackward1": "SqueezeBackward4", "SqueezeBackward2": "SqueezeBackward5",
                 "AsStridedBackward0": "AsStridedBackward1"}


def _inplace_view(op, name):
    """The in-place form of view op `op`: self becomes op's view of itself (a bumped version). Under grad mode
    a tensor that requires grad gets the view's grad_fn (renamed as torch's, e.g. TBackward1) and stays a view
    of its base if it was one; a leaf, a view of a leaf or an output of a multi-view op is refused as in torch."""
    def method(self, *args, **kwargs):
        if state.enabled and self.requires_grad:
            _views.check_multi_view(self)
            base = self._base
            if self._gfn is None or (base is not None and base._rg and base._gfn is None):
                raise RuntimeError(_LEAF_MSG if base is None else _VIEW_LEAF_MSG)
            v = op(self, *args, **kwargs)
            if self._v is None:
                self._a = v._a
                return self
            node = v._gfn
            node.__class__ = _graph.node_class(_INPLACE_NODE.get(type(node).__name__, type(node).__name__))
            if base is not None:
                self._vfn = v._vfn
                self._vrb = v._vrb
            self._gfn = node
            if "_onr" in self.__dict__:
                del self.__dict__["_onr"]
            self._v = v._v
            self._a = None
            self._bump()
            node.bind_outputs([self])
            return self
        v = op(self, *args, **kwargs)
        if self._v is None:
            self._a = v._a
            return self
        if self._base is not None:
            self._vfn = v._vfn
        self._v = v._v
        self._a = None
        self._bump()
        return self
    method.__name__ = name
    return method


def _unsafe(op):
    """unsafe_split / unsafe_chunk: op's outputs with their in-place writes allowed (torch's autograd does not
    track them as views of a multi-view op)."""
    def method(self, *args, **kwargs):
        outs = op(self, *args, **kwargs)
        for t in outs:
            t._mv = None
        return outs
    method.__name__ = "unsafe_" + op.__name__
    return method


def _as_strided_(self, size, stride, storage_offset=None):
    return _inplace_view(shape.as_strided, "as_strided_")(self, size, stride, storage_offset)


def resize_(self, *sizes, memory_format=None):
    """Give the tensor the shape `sizes` (contiguous): kept values where the element count allows, the
    storage reallocated (new elements uninitialised: zero here) when it grows."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    v = self._v
    if v is None:
        raise RuntimeError("resize_ is not supported inside funcgrad.func transforms")
    n = int(np.prod(sizes))
    if n == v.size and v.flags.c_contiguous:
        self._v = v.reshape(sizes)
    else:
        buf = self._storage().buf
        if n <= buf.size and v.flags.c_contiguous and self.storage_offset() == 0 and buf.flags.c_contiguous:
            self._v = buf.reshape(-1)[:n].reshape(sizes)
        else:
            new = np.zeros(sizes, v.dtype)
            flat = np.ascontiguousarray(v).reshape(-1)
            k = min(n, flat.size)
            new.reshape(-1)[:k] = flat[:k]
            self._v = new
            self._st = None
    self._a = None
    self._bump()
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, tuple(the_template.shape))


def _resize(self, *sizes):
    """Tensor.resize / resize_as, torch's deprecated out-of-place forms (torch.autograd._functions.Resize):
    the element count must stay; the result is a view of self with shape `sizes` (of a contiguous copy when
    self is not contiguous), differentiable as a view."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    n = int(np.prod(sizes, dtype=np.int64))
    if self.numel() != n:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but the given tensor has a "
            f"size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). autograd's resize can only "
            "change the shape of a given tensor, while preserving the number of elements. ")
    return self.contiguous().view(sizes)


def _resize_as(self, tensor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = _resize(self, tuple(tensor.shape))
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return out


def new(self, *args, **kwargs):
    """Legacy constructor: new() is empty, new(sizes...) uninitialised, new(data) a copy of data, all of
    self's dtype."""
    dt = kwargs.pop("dtype", None) or self.dtype
    if not args:
        return C.empty(0, dtype=dt)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(dt) if args[0].dtype != dt else args[0]
    if all(isinstance(a, int) for a in args) or (len(args) == 1 and isinstance(args[0], tuple)
                                               and type(args[0]).__name__ == "Size"):
        return C.empty(*args, dtype=dt)
    return C.tensor(args[0], dtype=dt)


def _sum_to_size(self, *size):
    """The sum of self down to `size` (which self must be expandable from)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    shape = tuple(self.shape)
    if len(size) > len(shape) or any(s != 1 and s != d for s, d in zip(size[::-1], shape[::-1])):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    r = reductions.sum(self, dims, keepdim=True) if dims else self
    return r.reshape(size) if lead else r


def _unfold(self, dimension, size, step):
    """A view of all the length-`size` slices of dimension `dimension` taken every `step`, as a new last
    dimension; one node named as torch's (UnfoldBackward0), whose derivative is a gather's (the windows'
    positions: its rule scatter-adds, as torch's unfold_backward)."""
    d = _dim(dimension, max(self.ndim, 1))
    n = self.shape[d] if self.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if self.ndim == 0:
        return _views._view("Unfold", self, lambda x: x.reshape(1), lambda a: _jnp.reshape(a, (1,)))
    count = (n - size) // step + 1
    shape_ = tuple(self.shape[:d]) + (count,) + tuple(self.shape[d + 1:]) + (size,)
    at = Array((np.arange(count) * step)[:, None] + np.arange(size))

    def np_fn(x):
        st = x.strides
        return np.lib.stride_tricks.as_strided(x, shape_, st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],),
                                               writeable=x.flags.writeable)

    def arr_fn(a):
        return _jnp.moveaxis(_jnp.take(a, at, axis=d), d + 1, -1)
    return _views._view("Unfold", self, np_fn, arr_fn)


def _storage_m(self):
    return TypedStorage._of(self)


def _untyped_storage_m(self):
    return UntypedStorage._of(self)


def _as_subclass(self, cls):
    """self's data (shared) as an instance of the Tensor subclass cls, outside the graph."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass: expected a Tensor subclass, got {cls}")
    t = self.detach()
    t.__class__ = cls
    return t


def _map_(self, tensor, callable):  # noqa: A002 - torch's parameter name
    """self[i] = callable(self[i], tensor[i]) for every element (Python floats/ints), in place."""
    other = tensor.expand_as(self)._host() if tensor.shape != self.shape else tensor._host()
    mine = self._host()
    vals = [callable(a, b) for a, b in zip(mine.reshape(-1).tolist(), np.asarray(other).reshape(-1).tolist())]
    self.copy_(C.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def _dlpack(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of self's memory (shared, as torch's): NumPy's export of the buffer, which it also
    describes when strided. A tensor that requires grad is refused, as in torch (detach it first)."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream not in (None, -1):
        raise BufferError(f"__dlpack__: stream={stream!r} is not supported for CPU tensors (use None)")
    kwargs = {"copy": copy, "dl_device": dl_device}
    if max_version is not None:
        kwargs["max_version"] = max_version
    return self.numpy().__dlpack__(**kwargs)


def _dlpack_device(self) -> tuple:
    """(kDLCPU, 0): every funcgrad tensor lives in host memory."""
    from ..utils.dlpack import DLDeviceType
    return (DLDeviceType.kDLCPU, 0)


def _to_padded_dense(self, padding, output_size=None):
    """torch's refusal: only a nested tensor (funcgrad.nested.NestedTensor) has a padded form."""
    raise NotImplementedError("Could not run 'aten::to_padded_tensor' with arguments from the 'CPU' backend: "
                              "to_padded_tensor() needs a nested tensor (torch.nested.nested_tensor)")


def methods() -> dict:
    """This module's Tensor attributes (name -> method, property or value), installed by _methods.install."""
    m = {}
    for name in ("swapaxes", "swapdims", "transpose", "t", "squeeze", "unsqueeze"):
        m[name + "_"] = _inplace_view(getattr(views, name), name + "_")
    m.update({"as_strided_": _as_strided_, "resize_": resize_, "resize_as_": resize_as_, "resize": _resize,
              "resize_as": _resize_as, "new": new,
              "is_nonzero": lambda self: __import__("funcgrad._torch", fromlist=["is_nonzero"]).is_nonzero(self),
              "sum_to_size": _sum_to_size, "unfold": _unfold, "storage": _storage_m, "__dlpack__": _dlpack,
              "__dlpack_device__": _dlpack_device, "untyped_storage": _untyped_storage_m})
    m["adjoint"] = lambda self: self.mH
    m["hardshrink"] = lambda self, lambd=0.5: __import__("funcgrad.nn.functional", fromlist=["x"]).hardshrink(
        self, lambd)
    m["prelu"] = lambda self, weight: __import__("funcgrad.nn.functional", fromlist=["x"]).prelu(self, weight)
    m.update({"narrow_copy": lambda self, dim, start, length: join_split.narrow(self, dim, start, length).clone(),
              "unsafe_chunk": _unsafe(join_split.chunk), "unsafe_split": _unsafe(join_split.split),
              "unsafe_split_with_sizes": _unsafe(shape.split_with_sizes),
              "output_nr": property(lambda self: self._onr), "as_subclass": _as_subclass, "map_": _map_,
              "const_data_ptr": lambda self: self.data_ptr(), "record_stream": lambda self, stream: None,
              "is_distributed": lambda self: False, "storage_type": lambda self: type(self.storage()), "name": None,
              "volatile": property(lambda self: False)})
    m["is_xpu"] = m["is_mps"] = m["is_ipu"] = m["is_xla"] = m["is_vulkan"] = m["is_maia"] = m["is_mtia"] = m["is_mkldnn"] = \
        m["is_nested"] = m["is_sparse_csr"] = property(lambda self: False)
    m["to_padded_tensor"] = _to_padded_dense
    return m
