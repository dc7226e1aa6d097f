"""Tensor: a mutable, PyTorch-style handle over backend storage, and how tensors are made.

Layout (as PyTorch's): a `_Storage` (one writable NumPy buffer plus one version counter, shared by every
view of it) and the tensor's own NumPy view of that buffer (`_v`). Views made by NumPy slicing, reshape,
transpose, ... alias the buffer, so a write through either side is seen by both. Every operation hands
the functional core a zero-copy read-only `Array` over the view (`_arr()`), computes with funcgrad's
primitives, and wraps the result in a new tensor (`_wrap`, `_make` here). Under `funcgrad.func` transforms
(and jit) a tensor may instead hold a tracer (`_v is None`): then views and in-place ops are functionalised
as torch.func does it -- a view stays linked to its base and a write through either updates both (see
`_functional`).

The rest of the torch face's tensor machinery builds on this module: `_dispatch` (running an op and
recording it for autograd), `_views` (views and in-place ops), `_printing` (repr, set_printoptions).
"""
from __future__ import annotations

import weakref

import numpy as np

from ..autograd import graph as _graph
from ..autograd.grad_mode import state as _gs
from .._src.core.array import Array
from .._src.core.errors import ConcretizationError, user_location
from .._src.core.trace import Tracer, concrete_value
from .._src.core.props import fixed_property
from . import _dtype as D
from . import _functional as _fn
from ._errors import _INF_INPLACE_MSG
from ._formats import strided
from ._printing import _repr
from ..autograd import backward

_new_obj = object.__new__
_NP2T = D._NP2T
# re-make a view's grad_fn after its base was modified in place: set by ._views, which records through
# ._dispatch (both build on this module, so this one cannot import them)
_view_regen = None


class _Storage:
    """One writable buffer and its version counter, shared by a tensor and all its views; `mv` once a multi-view
    op (split, unbind) made views of it (see Tensor._bump)."""
    __slots__ = ("buf", "version", "mv", "__weakref__")

    def __init__(self, buf):
        self.buf = buf
        self.version = 0
        self.mv = False


class Tensor:
    """A multi-dimensional array with autograd, as torch.Tensor. See the module docstring for layout.

    Make one with torch.tensor / zeros / randn / from_numpy; a leaf with requires_grad=True collects the gradient
    of a later .backward() in .grad.

    Examples:
        >>> import funcgrad as torch
        >>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> x.shape, x.dtype
        (torch.Size([2, 2]), torch.float32)
        >>> (x ** 2).sum().backward()
        >>> x.grad
        tensor([[2., 4.],
                [6., 8.]])
    """
    __slots__ = ("_v", "_a", "_st", "_rg", "_gfn", "__dict__", "__weakref__")
    __array_priority__ = 1000

    # rarely set attributes live in the instance __dict__ (these are the defaults)
    _base = None        # the tensor this one is a view of (the root of the view chain)
    _vfn = None         # Array-level function: base value -> this view's value
    _onr = 0            # which output of grad_fn this tensor is
    _grad = None
    _retain = False
    _hooks = None
    _accref = None      # weakref to the leaf's AccumulateGrad node
    _rebases = 0        # (on a base) how many times an in-place op re-pointed its grad_fn
    _vrb = 0            # (on a view) the base's _rebases when this view's grad_fn was made
    _pahooks = None
    _is_param = False
    _inf = False        # an inference tensor (made in inference_mode)
    _sh = None          # (traced) NumPy layout stand-in linking views to their root (see _functional)
    _lv = None          # (traced root) weak references to its live views
    _mv = None          # (op name, output number[, no_grad kind]) for an output of a multi-view op
                        # (split, unbind) or a view of one: torch refuses in-place writes into it under grad
    _fw = None          # (dual level, tangent tensor) under forward AD (see funcgrad.autograd.forward_ad)

    def __new__(cls, *args, **kwargs):
        """torch.Tensor(*sizes), torch.Tensor(data), torch.Tensor(): a tensor of the default dtype (uninitialised
        -- here zero -- for sizes); torch.Tensor(tensor) aliases that tensor's storage."""
        if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
            src = args[0]
            t = _make_as(cls, src._v)
            t._a = src._a
            t._st = src._storage() if src._v is not None else None
            return t
        from ._legacy import legacy_new
        v = legacy_new("Tensor", D.default_float(), args, dict(kwargs))._v
        return _make_as(cls, v)

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """A `cls` instance sharing `data`'s storage (how nn.Parameter is made)."""
        t = _new_obj(cls)
        if data._v is None:
            t._v, t._a, t._st = None, data._a, None
        else:
            t._v, t._a, t._st = data._v, data._a, data._storage()
        t._rg = False
        t._gfn = None
        if require_grad:
            t.requires_grad_(True)
        return t

    # --- the functional core's view of this tensor --------------------------------------------------
    def _arr(self):
        a = self._a
        if a is None:
            r = self._v.view()
            r.flags.writeable = False
            a = self._a = Array(r)
        return a

    def _np_dtype(self) -> np.dtype:
        v = self._v
        return v.dtype if v is not None else self._a.dtype

    def _storage(self) -> _Storage:
        st = self._st
        if st is None:
            st = self._st = _Storage(self._v)
        return st

    def _bump(self) -> None:
        if self._inf and not _gs.inference:
            raise RuntimeError(_INF_INPLACE_MSG)
        st = self._st
        if st is None:
            st = self._st = _Storage(self._v)
        st.version += 1
        if st.mv and not _gs.enabled:
            # a write under no_grad into a storage with multi-view outputs: as torch's (which sees the version
            # change), its views' grad_fns are re-made on their next use, which the multi-view outputs refuse
            b = self._base if self._base is not None else self
            if b._rg:
                b._rebases += 1

    @property
    def _version(self) -> int:
        st = self._st
        return 0 if st is None else st.version

    # --- metadata --------------------------------------------------------------------------------------
    @property
    def dtype(self):
        v = self._v
        return _NP2T[v.dtype if v is not None else self._a.dtype]

    @property
    def shape(self):
        v = self._v
        return tuple.__new__(D.Size, v.shape if v is not None else self._a.shape)

    def size(self, dim=None):
        s = self._v.shape if self._v is not None else self._a.shape
        if dim is None:
            return tuple.__new__(D.Size, s)
        return s[_dim(dim, len(s))]

    def dim(self) -> int:
        return (self._v if self._v is not None else self._a).ndim

    def ndimension(self) -> int:  # (torch's alias of dim, a method of its own: Tensor.ndimension is not Tensor.dim)
        return (self._v if self._v is not None else self._a).ndim

    @property
    def ndim(self) -> int:
        return (self._v if self._v is not None else self._a).ndim

    def numel(self) -> int:
        return int((self._v if self._v is not None else self._a).size)

    def nelement(self) -> int:  # (torch's alias of numel, a method of its own)
        return int((self._v if self._v is not None else self._a).size)

    def element_size(self) -> int:
        return self._np_dtype().itemsize

    @property
    def itemsize(self) -> int:
        return self._np_dtype().itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._np_dtype().itemsize

    # funcgrad's tensors are dense, strided and on the CPU
    device = fixed_property(D.CPU)
    is_cpu = fixed_property(True)
    is_cuda = is_sparse = is_quantized = is_meta = fixed_property(False)
    layout = fixed_property(strided)

    def is_floating_point(self) -> bool:
        return self._np_dtype().kind == "f" or self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._np_dtype().kind == "c"

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def get_device(self) -> int:
        return -1

    def stride(self, dim=None):
        v = self._v if self._v is not None else self._sh
        if v is None:
            st = _contig_strides(self._a.shape)
        else:
            isz = v.itemsize
            st = tuple(s // isz for s in v.strides)
        return st if dim is None else st[_dim(dim, len(st))]

    def storage_offset(self) -> int:
        v = self._v
        if v is None:
            v = self._sh
            if v is None or self._base is None:
                return 0
            base = self._base._sh
            return (v.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // v.itemsize
        base = self._storage().buf
        return (v.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // v.itemsize

    def data_ptr(self) -> int:
        return self._v.__array_interface__["data"][0] if self._v is not None else 0

    def untyped_storage(self):
        return self._storage()

    def is_contiguous(self, memory_format=None) -> bool:
        v = self._v if self._v is not None else self._sh
        if v is None:
            return True
        return _is_contig(v)

    def is_set_to(self, other) -> bool:
        return self._v is not None and other._v is not None and self._v.__array_interface__ == \
            other._v.__array_interface__

    # --- autograd attributes ---------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        if self._base is not None and self._vrb != self._base._rebases:
            if self._mv is not None:  # (torch reads it without re-making the grad_fn a multi-view output refuses)
                return self._rg or self._base._rg
            self._grad_fn_now()
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True):
        requires_grad = bool(requires_grad)
        if self._gfn is not None and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                               "use a computed variable in a subgraph that doesn't require differentiation "
                               "use var_no_grad = var.detach().")
        if requires_grad and not _differentiable(self._np_dtype()):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if requires_grad and self._inf and not _gs.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not "
                               "allowed.")
        if self._gfn is None:
            self._rg = requires_grad
        return self

    @property
    def grad_fn(self):
        return self._grad_fn_now()

    def _grad_fn_now(self):
        b = self._base
        if b is not None and self._vrb != b._rebases and b._rg:
            # the base was modified in place since this view's grad_fn was made: replay the view on it
            _view_regen(self, b)
        return self._gfn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn_now() is None

    @property
    def grad(self):
        if self._gfn is not None and not self._retain and self._grad is None:
            import warnings
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                          ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                          "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                          "non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value._np_dtype() != self._np_dtype():
                raise RuntimeError("assigned grad has data of a different type")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return bool(self._retain)

    def retain_grad(self) -> None:
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        g = self._grad_fn_now()
        if g is None or self._retain:
            return
        self._retain = True
        g._register_retain(self._onr, self)

    def register_hook(self, hook):
        """hook(grad) -> None or a replacement grad, called when the gradient for this tensor is computed."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        g = self._grad_fn_now()
        if g is not None:
            return g._register_tensor_hook(self._onr, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _graph.RemovableHandle._of_list(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        if self._gfn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._pahooks is None:
            self._pahooks = []
        self._pahooks.append(hook)
        return _graph.RemovableHandle._of_list(self._pahooks, hook)

    def _acc_node(self, create: bool = True):
        ref = self._accref
        acc = ref() if ref is not None else None
        if acc is None and create:
            acc = _graph.AccumulateGrad(self)
            self._accref = weakref.ref(acc)
        return acc

    def detach(self):
        """A tensor sharing this one's storage (and version counter), outside the graph."""
        if self._v is None:  # under a transform: the value with every gradient level stopped
            return _traced(_fn.detached(self._a))
        t = _make(self._v)
        t._a = self._a
        t._st = self._storage()
        if self._inf:
            t._inf = True
        return t

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made under inference_mode, never to be recorded for backward
        nor modified in place outside inference mode."""
        return self._inf

    def detach_(self):
        if self._base is not None and self._base._rg:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._gfn = None
        self._rg = False
        if "_onr" in self.__dict__:
            del self.__dict__["_onr"]
        return self

    @property
    def data(self):
        """The tensor's data, detached, with a separate version counter (as torch's .data)."""
        if self._v is None:
            return _traced(self._a)
        t = _make(self._v)
        t._a = self._a
        t._st = _Storage(self._storage().buf)
        if self._inf:
            t._inf = True
        return t

    @data.setter
    def data(self, value) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._v = value._v
        self._a = value._a
        self._st = value._storage() if value._v is not None else None

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into each leaf's .grad (gradient: the vector for a non-scalar self).

        retain_graph keeps the graph for another backward; create_graph records the backward pass itself, for
        higher derivatives; inputs limits which leaves accumulate.

        Examples:
            >>> import funcgrad as torch
            >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
            >>> loss = (w * w).sum()
            >>> loss.backward()
            >>> w.grad
            tensor([ 2., -4.])
        """
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # --- conversion to Python / NumPy --------------------------------------------------------------------
    def _host(self) -> np.ndarray:
        """The value as a NumPy array: funcgrad's own reads of static values (shapes, indices, counts) and
        the Python conversions torch allows inside torch.func's grad transforms (item(), float(), tolist()).
        A tensor inside vmap/jit has no value: RuntimeError, as torch.func raises."""
        if self._v is None:
            a = self._a
            return np.asarray(a if a.__class__ is Array else _concrete(a, "item"))
        return self._v

    def item(self):
        v = self._host()
        if v.size != 1:
            raise RuntimeError(f"a Tensor with {v.size} elements cannot be converted to Scalar")
        return v.reshape(()).item()

    def tolist(self):
        return self._host().tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._rg and not force and _gs.enabled:  # as torch: allowed under no_grad (and in Function.forward)
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        if self._v is None and self._a.__class__ is not Array and not force:
            _traced_numpy_error(self._a)
        return self._host()

    def __array__(self, dtype=None, copy=None):
        if self._v is None and self._a.__class__ is not Array:
            _traced_numpy_error(self._a)
        v = self._host()
        if dtype is not None and v.dtype != dtype:
            return v.astype(dtype)
        if copy:
            return v.copy()
        return v

    def __float__(self) -> float:
        self._python_scalar_check()
        if self._rg:  # (torch warns for float() only, not int(), complex() or item())
            import warnings
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                          "Consider using tensor.detach() first.", UserWarning, stacklevel=2)
        return float(self._scalar("float"))

    def __int__(self) -> int:
        self._python_scalar_check()
        return int(self._scalar("int"))

    def _python_scalar_check(self) -> None:
        """float() / int() / complex() of a tensor of several elements: torch's ValueError (item() raises a
        RuntimeError instead)."""
        if (self._v if self._v is not None else self._a).size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")

    def __bool__(self) -> bool:
        v = self._v if self._v is not None else self._a
        if v.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._scalar("bool"))

    def __complex__(self) -> complex:
        self._python_scalar_check()
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self._np_dtype().kind not in "iub" or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._scalar("int"))

    def _scalar(self, kind):
        if self._v is None:
            a = self._a
            if a.size != 1:
                raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
            if a.__class__ is not Array:  # inside torch.func transforms: torch converts the value
                a = _concrete(a, kind)
            return getattr(a.reshape(()) if a.ndim else a, "__" + kind + "__")()
        v = self._v
        if v.size != 1:
            raise RuntimeError(f"a Tensor with {v.size} elements cannot be converted to Scalar")
        return v.reshape(()).item()

    def __len__(self) -> int:
        s = self._v.shape if self._v is not None else self._a.shape
        if not s:
            raise TypeError("len() of a 0-d tensor")
        return s[0]

    def __iter__(self):
        s = self._v.shape if self._v is not None else self._a.shape
        if not s:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element) -> bool:
        return bool((self == element).any())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return _repr(self)

    def __format__(self, spec) -> str:
        if self.dim() == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec) if not spec else format(str(self), spec)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._host().copy(), self._rg))

    def __deepcopy__(self, memo):
        if self._gfn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                               "deepcopy protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        t = _make_as(type(self), self._host().copy())
        t.__dict__.update({k: v for k, v in self.__dict__.items() if k in ("_is_param",)})
        t._rg = self._rg
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    # --- misc --------------------------------------------------------------------------------------
    def _is_view(self) -> bool:
        return self._base is not None

    def share_memory_(self):
        """Move the storage into shared memory (in place; see funcgrad.multiprocessing). Returns self."""
        from ..multiprocessing import reductions
        return reductions.share_memory_(self)

    def is_shared(self) -> bool:
        from ..multiprocessing import reductions
        return reductions.is_shared(self)

    def __setstate__(self, state):
        pass


def _rebuild(host, rg):
    t = _make(np.array(host))
    t._rg = rg
    return t


def _dim(d, n) -> int:
    if d.__class__ is not int:
        try:
            d = d.__index__()  # ints, NumPy integers, integer tensors; never a float (torch: TypeError)
        except (AttributeError, TypeError):
            raise TypeError(f"dim must be an int, got {type(d).__name__} {d!r}") from None
    m = max(n, 1)
    if not -m <= d < m:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got {d})")
    return d % m if n else 0


def _contig_strides(shape) -> tuple:
    st, acc = [], 1
    for d in reversed(shape):
        st.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(st))


def _is_contig(v) -> bool:
    if v.flags.c_contiguous:
        return True
    # torch ignores strides of size-1 dims
    exp = v.itemsize
    for d, s in zip(reversed(v.shape), reversed(v.strides)):
        if d != 1 and s != exp:
            return False
        exp *= d
    return True



# --- construction ---------------------------------------------------------------------------------------

def _make(v):
    t = _new_obj(Tensor)
    t._v = v
    t._a = None
    t._st = None
    t._rg = False
    t._gfn = None
    if _gs.inference:
        t._inf = True
    return t


def _make_as(cls, v):
    t = _new_obj(cls)
    t._v = v
    t._a = None
    t._st = None
    t._rg = False
    t._gfn = None
    return t


class _TracedTensorError(RuntimeError, ConcretizationError):
    """torch.func's RuntimeError for reading a tensor's data inside a transform where it has none; also a
    ConcretizationError, so funcgrad's own fallbacks (autograd.Function's forward run as a host callback)
    recognise it."""


def _concrete(a, kind: str):
    """The concrete Array under tracer `a` (inside torch.func's grad/jvp/vjp), or torch.func's RuntimeError
    where it has none (vmap; jit)."""
    c = concrete_value(a)
    if c is not None:
        return c
    while isinstance(a, Tracer) and a.val is not None:
        a = a.val
    name = a._trace.name if isinstance(a, Tracer) else "vmap"
    if kind == "bool":
        raise _TracedTensorError(
            f"{name}: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
            "We don't support that yet: use torch.where (or torch.cond) instead of Python if/while on a "
            f"tensor's value (at {user_location(2)}).")
    raise _TracedTensorError(
        f"{name}: It looks like you're calling .item() on a Tensor. We don't support {name} over calling "
        ".item() on a Tensor, please try to rewrite what you're doing with other operations (at "
        f"{user_location(2)}).")


def _traced_numpy_error(a):
    """torch.func's RuntimeError for numpy() / numpy.asarray of a tensor inside a transform."""
    c = concrete_value(a)
    if c is not None and a._trace.name != "jvp":
        raise _TracedTensorError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                 f"instead (at {user_location(2)}).")
    raise _TracedTensorError("Cannot access data pointer of Tensor that doesn't have storage: inside a "
                             "torch.func transform a tensor's data cannot be read as NumPy; use torch "
                             f"operations, or tensor.detach() (at {user_location(2)}).")


def _traced(a):
    t = _new_obj(Tensor)
    t._v = None
    t._a = a
    t._st = None
    t._rg = False
    t._gfn = None
    return t


def _wrap(out):
    """A new tensor over a freshly computed Array (copied into its own buffer if it is not one)."""
    if out.__class__ is Array:
        b = out._buf
        if b.base is not None or not b.flags.writeable:
            if type(b) is not np.ndarray:
                b = np.asarray(b)
            b = b.copy()
        return _make(b)
    if isinstance(out, Tracer):
        return _traced(out)
    if isinstance(out, np.ndarray):
        return _make(out if out.flags.writeable and out.base is None else out.copy())
    raise TypeError(f"cannot wrap {type(out).__name__} as a Tensor")


def _fresh(t):
    """A detached copy of t in a buffer of its own."""
    if t._v is None:
        return _traced(t._a)
    return _make(np.array(t._v))



def _differentiable(dt) -> bool:
    """Whether tensors of NumPy dtype dt carry gradients: floating (bfloat16 too: ml_dtypes' kind 'V') or complex."""
    return dt.kind in "fc" or dt.name == "bfloat16"


_graph._TENSOR = __import__(__name__, fromlist=["_wrap"])
