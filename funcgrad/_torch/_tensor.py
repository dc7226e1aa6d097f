"""Tensor: a mutable, PyTorch-style handle over backend storage, and the dispatch every op goes through.

Layout (as PyTorch's): a `_Storage` (one writable NumPy buffer plus one version counter, shared by every
view of it) and the tensor's own NumPy view of that buffer (`_v`). Views made by NumPy slicing, reshape,
transpose, ... alias the buffer, so a write through either side is seen by both. Every operation hands
the functional core a zero-copy read-only `Array` over the view (`_arr()`), computes with funcgrad's
primitives, and wraps the result in a new tensor. Under `funcgrad.func` transforms (and jit) a tensor may
instead hold a tracer (`_v is None`): then views and in-place ops are functionalised as torch.func does it --
a view stays linked to its base and a write through either updates both (see `_functional`).

Autograd: when grad mode is on and an input requires grad, the op's Array-level function is run eagerly
while its primitive binds are listed (`funcgrad._src.core.primitive.record_eager`) and the list becomes a graph
`Node` whose backward applies the primitives' vjp rules directly (see funcgrad.autograd.graph). Functions
over sub-computations (control flow, jit, custom rules) are recorded on a tape (`ad.record`) instead.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..autograd import graph as _graph
from ..autograd.graph import Recorded as _Recorded
from ..autograd.grad_mode import state as _gs
from .._src.core.array import Array, ArrayBase as _ArrayBase
from .._src.core.primitive import _rec_state, record_eager as _record_eager
from .._src.core.errors import ConcretizationError, user_location
from .._src.core.trace import Tracer, _state as _trace_state, concrete_value
from .._src.prims import elementwise as _ew
from .._src.interpreters import ad as _ad
from . import _dtype as D
from . import _functional as _fn
# (_methods, _index, ops/ and nn/ import these from here too)
from ._errors import (_INF_INPLACE_MSG, _LEAF_MSG, _OVERLAP_MSG, _VIEW_LEAF_MSG, _check_cast, _legacy,
                      _shape_mismatch)
from .._src.core.jaxpr import Jaxpr
from .._src.core.props import fixed_property
from ..autograd.grad_mode import _force_grad
from ._formats import strided
from ..autograd import backward

_new_obj = object.__new__
_NP2T = D._NP2T
_fw_on = False  # a forward-AD dual level is active (set by funcgrad.autograd.forward_ad, which is _fwd)
_fwd = None


class _Storage:
    """One writable buffer and its version counter, shared by a tensor and all its views."""
    __slots__ = ("buf", "version", "__weakref__")

    def __init__(self, buf):
        self.buf = buf
        self.version = 0


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
    _mv = None          # (traced view) (op name, output number) when made by a multi-view op (split, unbind)
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

    ndimension = dim

    @property
    def ndim(self) -> int:
        return (self._v if self._v is not None else self._a).ndim

    def numel(self) -> int:
        return int((self._v if self._v is not None else self._a).size)

    nelement = numel

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


# --- dispatch --------------------------------------------------------------------------------------------

def _req(t) -> bool:
    """Whether t requires grad, refreshing a view whose base was modified in place (with gradients)
    since the view was made."""
    if t._rg:
        return True
    b = t._base
    if b is not None and t._vrb != b._rebases and b._rg:
        t._grad_fn_now()
        return t._rg
    return False


def _edge(t):
    if t._base is None:
        g = t._gfn
    else:
        g = t._grad_fn_now()
    if g is not None:
        return (g, t._onr)
    ref = t._accref
    if ref is not None:
        acc = ref()
        if acc is not None:
            return (acc, 0)
    acc = _graph.AccumulateGrad(t)  # (Tensor._acc_node, inlined: once per op on a leaf)
    t._accref = weakref.ref(acc)
    return (acc, 0)


_NODE_CLS: dict = {}


def _record(name, fn, ts):
    """Record fn(*arrays of ts) as a graph node. Returns (node, list of output Arrays, multi)."""
    for t in ts:
        if t._inf and name not in _NOT_SAVED:
            raise RuntimeError(_INF_SAVED_MSG)
    arrs = [t._arr() for t in ts]
    diff = [i for i, t in enumerate(ts) if t._rg]
    if getattr(fn, "records_on_a_tape", False):  # fn declares a primitive over sub-computations (a scan):
        tape, vals, multi = _record_traced(fn, arrs, diff)  # the eager record would be run and discarded
        return _make_node(name, tape, fn, ts, diff), vals, multi
    # the common case: run fn eagerly, listing the primitive binds it makes (no trace, no tracers)
    for i in diff:  # fresh handles, so that the differentiable inputs are told apart by identity
        a = arrs[i]
        arrs[i] = Array(a._buf, a.weak_type)
    out, binds = _record_eager(fn, arrs)
    multi = isinstance(out, (list, tuple))
    vals = list(out) if multi else [out]
    if _recorded_ok(binds, vals, arrs, diff):
        tape = _graph.Recorded([arrs[i] for i in diff], binds, list(vals))
        node = _make_node(name, tape, fn, ts, diff)
        if not _fw_on:  # keep only what the vjp rules read (as torch saves only what its formulas use)
            dropped, kept = _graph.prune(tape)
            if kept is not None:  # (else a backward building a graph recomputes the op: inputs stay)
                node.inputs = tuple([_make(_graph.placeholder(a)._buf) if id(a) in dropped else t
                                     for a, t in zip(arrs, ts)])
        return node, vals, multi
    # a composite the eager record cannot stand for (custom rules, values made outside binds)
    tape, vals, multi = _record_traced(fn, arrs, diff)
    return _make_node(name, tape, fn, ts, diff), vals, multi


def _recorded_ok(binds, vals, arrs, diff) -> bool:
    """Whether the eager record of fn is complete: every output is an Array made by a recorded bind (or is
    an input), and no recorded primitive needs a tape of its own (custom_vjp, scan)."""
    if len(binds) == 1 and len(vals) == 1 and vals[0] is binds[0][3] and \
            _HIGHER_ORDER.get(binds[0][0]) is False:
        return True  # the common case: one first-order primitive
    made = set()
    for b in binds:
        ho = _HIGHER_ORDER.get(b[0])
        if ho is None:
            ho = _HIGHER_ORDER[b[0]] = _is_higher_order(b[0], b[1])
        if ho:
            return False
        if b[0].multiple_results:
            made.update(id(o) for o in b[3])
        else:
            made.add(id(b[3]))
    for v in vals:
        if type(v) is not Array:
            return False
        if id(v) not in made and not any(v is arrs[i] for i in diff):
            return False
    return True


_HIGHER_ORDER: dict = {}  # Primitive -> whether it carries sub-computations (then the tape path is used)
_HO_NAMES = frozenset({"cond", "while", "scan", "pjit", "custom_jvp_call", "custom_vjp_call", "remat"})


def _is_higher_order(prim, params) -> bool:
    """A primitive over sub-computations (control flow, jit, custom rules): its differentiation on a tape
    differs from its eager bind (a while_loop over concrete values is unrolled on the tape, say)."""
    return prim.tape_rule is not None or prim.name in _HO_NAMES or \
        any(isinstance(v, Jaxpr) for v in params.values())


def _make_node(name, tape, fn, ts, diff):
    edges = [_edge(ts[i]) for i in diff]
    versions = [0 if t._st is None else t._st.version for t in ts]
    cls = _NODE_CLS.get(name)
    if cls is None:
        cls = _node_cls(name)
    return cls(tape, fn, ts, diff, edges, versions)


def _node_cls(name):
    """The Node class for op `name`: "Max1" names torch's overload MaxBackward1; a plain name Backward0."""
    cls = _NODE_CLS[name] = _graph.node_class(name[:-1] + "Backward" + name[-1] if name[-1].isdigit()
                                              else name + "Backward0")
    return cls


def _record_traced(fn, arrs, diff):
    """Record fn on tracers (an `ad.Tape`): the general path. Returns (tape, output Arrays, multi)."""
    multi = [False]
    if len(diff) == len(arrs):
        def flat(*xs):
            r = fn(*xs)
            if isinstance(r, (list, tuple)):
                multi[0] = True
                return list(r)
            return [r]
        prim = arrs
    else:
        def flat(*xs):
            full = list(arrs)
            for i, x in zip(diff, xs):
                full[i] = x
            r = fn(*full)
            if isinstance(r, (list, tuple)):
                multi[0] = True
                return list(r)
            return [r]
        prim = [arrs[i] for i in diff]
    tape = _fast_record(flat, prim, "autograd")
    return tape, tape.out_values(), multi[0]


try:  # ad.record without its user-facing niceties (the origin line of the trace) on the hot path
    from .._src.core.trace import Trace as _Trace, _state as _trace_state

    def _fast_record(flat, prims, name):
        stack = _trace_state.stack
        trace = _Trace(len(stack) + 1, True, name, "")
        stack.append(trace)
        try:
            ins = [trace.new_arg(p.aval, p) for p in prims]
            outs = [o if isinstance(o, _ArrayBase) else _ad._as_array(o) for o in flat(*ins)]
        finally:
            trace.alive = False
            stack.pop()
        return _ad.Tape(trace, ins, outs)
except ImportError:  # pragma: no cover - if the trace internals change, use the public entry point
    _fast_record = _ad.record


def _differentiable(dt) -> bool:
    """Whether tensors of NumPy dtype dt carry gradients: floating (bfloat16 too: ml_dtypes' kind 'V') or complex."""
    return dt.kind in "fc" or dt.name == "bfloat16"


def _outputs(node, vals):
    if len(vals) == 1:
        t = _wrap(vals[0])
        if _differentiable(t._np_dtype()):
            t._rg = True
            t._gfn = node
        if t._v is not None:
            node.bind_outputs1(t)
        else:
            node.bind_outputs([t])
        return [t]
    outs = []
    for k, val in enumerate(vals):
        t = _wrap(val)
        if _differentiable(t._np_dtype()):
            t._rg = True
            t._gfn = node
            if k:
                t._onr = k
        outs.append(t)
    node.bind_outputs(outs)
    return outs


def _apply(name, fn, ts):
    """The result tensor(s) of the Array-level fn applied to tensors ts (recording when needed)."""
    if _fw_on and _fwd.has_tangent(ts):
        return _fwd.apply(name, fn, ts)
    return _apply0(name, fn, ts)


def _apply0(name, fn, ts):
    """_apply without tangents."""
    if _gs.enabled:
        for t in ts:
            if t._rg or (t._base is not None and _req(t)):
                # (tensors holding tracers of funcgrad.func transforms are differentiated by those)
                if all(u._v is not None for u in ts):
                    node, vals, multi = _record(name, fn, ts)
                    outs = _outputs(node, vals)
                    return outs if multi else outs[0]
                break
    out = fn(*[t._arr() for t in ts])
    if isinstance(out, (list, tuple)):
        return [_wrap(o) for o in out]
    return _wrap(out)


_NOPARAMS: dict = {}


def _apply_prim(name, prim, fn, ts, params=_NOPARAMS):
    """The result tensor of fn on tensors ts, where fn(*arrays) is exactly one bind of `prim` on the
    arrays in order with `params` (e.g. an elementwise op on operands of one dtype). Unrecorded, the
    primitive's impl runs straight on the tensors' buffers; recorded, the node is built without listing
    binds (see _record_prim). The primitive's impl must return a new array (not a view of an operand)."""
    if _fw_on and _fwd.has_tangent(ts):
        return _fwd.apply(name, fn, ts)
    if _gs.enabled:
        for t in ts:
            if t._rg or (t._base is not None and _req(t)):
                for u in ts:
                    if u._v is None:  # tensors holding tracers: their transform differentiates
                        return _wrap(fn(*[u._arr() if u._v is not None else u._a for u in ts]))
                return _record_prim(name, prim, fn, ts, params)
    vs = []
    for t in ts:
        v = t._v
        if v is None:
            return _wrap(fn(*[u._arr() if u._v is not None else u._a for u in ts]))
        vs.append(v)
    try:
        r = prim.impl(*vs, **params)
    except Exception:  # the primitive's bind reports it in its own words
        return _wrap(fn(*[t._arr() for t in ts]))
    if r.__class__ is not np.ndarray or r.base is not None:
        r = np.array(r)
    return _make(r)


def _apply_prim_scalar(name, prim, afn, t, s, left):
    """afn(t, s) (afn(s, t) when left) for a float tensor t and a Python number s taken in t's dtype, where
    afn is one bind of prim: as _apply_prim, the number entering as a constant."""
    if _fw_on and _fwd.has_tangent((t,)):
        c = Array(np.array(s, t._v.dtype))
        return _fwd.apply(name, (lambda q: afn(c, q)) if left else (lambda p: afn(p, c)), (t,))
    if _gs.enabled and (t._rg or (t._base is not None and _req(t))):
        dt = t._v.dtype
        c = Array(np.array(s, dt))
        fn = (lambda q: afn(c, q)) if left else (lambda p: afn(p, c))
        return _record_prim(name, prim, fn, (c, t) if left else (t, c))
    v = t._v
    c = v.dtype.type(s)
    try:
        r = prim.impl(c, v) if left else prim.impl(v, c)
    except Exception:  # the primitive's bind reports it in its own words
        c = Array(np.array(s, v.dtype))
        return _wrap(afn(c, t._arr()) if left else afn(t._arr(), c))
    if r.__class__ is not np.ndarray or r.base is not None:
        r = np.array(r)
    return _make(r)


_PLANS: dict = {}  # _record_prim's plans: (name, prim, params, each operand's shape, dtype, role) -> plan


def _record_prim(name, prim, fn, ts, params=_NOPARAMS):
    """Record fn = one bind of prim on the arrays of ts (tensors; an Array in ts is a constant operand) as a
    graph node: a `Recorded` of that bind. Returns the output tensor.

    The node's inputs enter the record as their tensors' own read-only Arrays, or as fresh handles on the
    same buffers where one Array would stand for two operands (x * x) or be weakly typed, and outside the
    common case: identity is how the backward tells operands apart. What the node keeps follows a plan (see
    _plan): which operands and whether the output its vjp rule reads (the others replaced by placeholders),
    its node class and the backward's `needs` and operand-to-input map. In the common case (no enclosing
    recording, forward AD, anomaly mode, saved-tensor hooks or multiple results) the plan is cached per op
    name, primitive, params and operand signature (shape, dtype, role), so recording costs one dict lookup
    beyond building the node; otherwise it is made for the one call."""
    fast = _rec_state.rec is None and not _fw_on and not _gs.anomaly and not _gs.saved_hooks and \
        not prim.multiple_results
    key = [name, prim, tuple(params.items()) if params else None]
    args = []
    bufs = []
    ins = []
    diff = []
    edges = []
    versions = []
    tensors = []
    for t in ts:
        if t.__class__ is Array:
            b = t._buf
            key += (b.shape, b.dtype, 3 if t.weak_type else 2)
            args.append(t)
            bufs.append(b)
            continue
        if t._inf and name not in _NOT_SAVED:
            raise RuntimeError(_INF_SAVED_MSG)
        a = t._a
        if a is None:
            a = t._arr()
        v = t._v
        if t._rg or (t._base is not None and _req(t)):
            key += (v.shape, v.dtype, 1)
            if not fast or a.weak_type:
                a = Array(a._buf)
            elif args:
                for x in args:
                    if x is a:  # (one Array for two operands: identity must tell them apart)
                        a = Array(a._buf)
                        break
            ins.append(a)
            diff.append(len(tensors))
            g = t._gfn
            if g is None:  # a leaf: its AccumulateGrad while the graph holds it (else _edge makes one)
                g = t._accref
                g = g() if g is not None else None
                edges.append((g, 0) if g is not None and t._base is None else _edge(t))
            else:
                edges.append((g, t._onr) if t._base is None else _edge(t))
        else:
            key += (v.shape, v.dtype, 4 if a.weak_type else 0)
            if args:
                for x in args:
                    if x is a:
                        a = Array(a._buf, a.weak_type)
                        break
        st = t._st
        versions.append(0 if st is None else st.version)
        tensors.append(t)
        args.append(a)
        bufs.append(v)
    plan = r = ans = None
    if fast:
        try:
            key = tuple(key)
            plan = _PLANS.get(key)
            r = prim.impl(*bufs, **params) if params else prim.impl(*bufs)
        except Exception:  # unhashable params; or the impl failed: bind raises it in the primitive's words
            fast = False
    elif _rec_state.rec is None:  # (else bind, which also lists the bind for the enclosing recording)
        try:
            r = prim.impl(*bufs, **params) if params else prim.impl(*bufs)
        except Exception:
            pass  # bind raises it in the primitive's words
    if r is None:
        ans = prim.bind(*args, **params)
        r = ans._buf
    elif r.__class__ is not np.ndarray:
        r = np.asarray(r)
    if plan is None:
        plan = _plan(key if fast else None, name, prim, params, args, ins, Array(r) if ans is None else ans)
    cls, ph_args, ph_ans, ph_ts, kept, rplan = plan
    if ph_args is not None:  # each operand the rule does not read becomes its placeholder
        ipos = rplan[1]
        k = j = 0
        for t in ts:
            p = ph_args[k]
            if p is not None:
                args[k] = p
                if ipos[k] >= 0:
                    ins[ipos[k]] = p
                if t.__class__ is not Array:  # (and the node's input tensor: a tensor over it)
                    tensors[j] = ph_ts[k] if ph_ts is not None else _make(p._buf)
            if t.__class__ is not Array:
                j += 1
            k += 1
    if ph_ans is not None:
        rans = ph_ans
    elif ans is None:
        rans = Array(r)
    else:
        rans = ans
    rec = _Recorded(ins, ((prim, params, tuple(args), rans),), (rans,), kept, rplan)
    if fast:
        node = _new_obj(cls)  # (Node.__init__, inlined: no anomaly stack, no saved-tensor hooks here)
        node.tape = rec
        node.fn = fn
        node.inputs = tuple(tensors)
        node.diff = diff
        node.edges = edges
        node.versions = versions
        node.out_meta = None
        node.seq = next(_graph._seq)
    else:
        node = cls(rec, fn, tuple(tensors), diff, edges, versions)
    if r.base is None and r.flags.writeable:
        out = _new_obj(Tensor)
        out._v = r
        out._a = None
        out._st = None
        if _gs.inference:
            out._inf = True
    else:
        out = _wrap(Array(r))
    if r.dtype.kind in "fc" or r.dtype.name == "bfloat16":  # (_differentiable, inlined)
        out._rg = True
        out._gfn = node
    else:
        out._rg = False
        out._gfn = None
    node.out_refs = (_weakref(out),)  # (node.bind_outputs1(out), inlined: a fresh tensor, version 0)
    node.out_versions = _V0
    return out


def _plan(key, name, prim, params, args, ins, ans):
    """_record_prim's plan for one call: (node class, placeholder per operand (None where kept; None for all
    when every operand is kept), the output's placeholder (None where kept), placeholder tensor per operand
    (for the node's inputs), kept (Recorded.kept), Recorded.plan (needs, the input position of each operand
    or -1, the compiled backward's state)). Cached under `key` (placeholders included: a placeholder is never
    written) unless key is None: then made for this call alone (under forward AD everything is kept, for
    the tangents' rules)."""
    p = None if _fw_on else _graph.prune_one(prim, params, args, ans, list(ins))
    ph_args = ph_ans = ph_ts = kept = None
    if p is not None:
        nargs, nans, _, dropped, kept = p
        if dropped:
            ph_args = [None] * len(args)
            for k in dropped:
                ph_args[k] = nargs[k]
            ph_args = tuple(ph_args)
            if key is not None:
                ph_ts = tuple(None if p is None else _make(p._buf) for p in ph_args)
        if nans is not ans:
            ph_ans = nans
    needs = tuple(_graph._needs(args, ins))
    ipos = tuple(next((i for i, x in enumerate(ins) if x is a), -1) for a in args)
    cls = _NODE_CLS.get(name)
    if cls is None:
        cls = _node_cls(name)
    plan = (cls, ph_args, ph_ans, ph_ts, kept, (needs, ipos, _graph.NodeBackward() if key is not None else None))
    if key is not None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


_weakref = weakref.ref
_V0 = (0,)


def _apply1(name, fn, x):
    if _fw_on and _fwd.has_tangent((x,)):
        return _fwd.apply(name, fn, (x,))
    if (x._rg or (x._base is not None and _req(x))) and _gs.enabled:
        return _apply(name, fn, (x,))
    a = x._a
    if a is None:
        a = x._arr()
    return _wrap(fn(a))


def _apply_multi(name, fn, ts):
    r = _apply(name, fn, ts)
    return r if isinstance(r, list) else [r]


def _apply_nograd(fn, ts):
    """An op whose outputs never carry gradients (comparisons, argmax, ...): nothing is recorded."""
    out = fn(*[t._arr() for t in ts])
    if isinstance(out, (list, tuple)):
        return [_wrap(o) for o in out]
    return _wrap(out)


# --- views ------------------------------------------------------------------------------------------------

def _compose(f, g):
    if f is None:
        return g
    return lambda a: g(f(a))


def _view(name, x, np_fn, arr_fn):
    """A view of x: np_fn on its NumPy view (aliasing the storage); arr_fn is the same on Arrays."""
    v = x._v
    if v is None:
        return _fn.view(x, _traced(arr_fn(x._a)), np_fn, arr_fn, name)
    nv = np_fn(v)
    t = _new_obj(Tensor)
    t._v = nv
    t._a = None
    t._st = x._st if x._st is not None else x._storage()
    t._rg = False
    t._gfn = None
    base = x._base
    if base is None:
        base = x
        t._vfn = arr_fn
    else:
        t._vfn = _compose(x._vfn, arr_fn)
    t._base = base
    if base._rebases:
        t._vrb = base._rebases
    if x._inf:
        t._inf = True
    if _trace_state.stack:
        _fn.track_eager(base, t)
    if base._rg and _gs.enabled and _req(x):
        node, vals, _ = _record(name, arr_fn, (x,))
        t._rg = True
        t._gfn = node
        node.bind_outputs([t])
    if _fw_on:
        _fwd.view(x, t, name, np_fn, arr_fn)
    return t


def _views(name, x, np_fns, arr_fn):
    """Several views of x at once (split, chunk, unbind): arr_fn returns the list of their values."""
    v = x._v
    if v is None:
        return _fn.views(x, [_traced(val) for val in arr_fn(x._a)], np_fns, arr_fn, name)
    st = x._st if x._st is not None else x._storage()
    base = x._base if x._base is not None else x
    outs = []
    for k, f in enumerate(np_fns):
        t = _make(f(v))
        t._st = st
        t._base = base
        t._vfn = _compose(x._vfn, (lambda k: lambda a: arr_fn(a)[k])(k))
        outs.append(t)
    if base._rebases:
        for t in outs:
            t._vrb = base._rebases
    if _trace_state.stack:
        for t in outs:
            _fn.track_eager(base, t)
    if x._inf:
        for t in outs:
            t._inf = True
    if base._rg and _gs.enabled and _req(x):
        node, vals, _ = _record(name, arr_fn, (x,))
        for k, t in enumerate(outs):
            t._rg = True
            t._gfn = node
            if k:
                t._onr = k
        node.bind_outputs(outs)
    if _fw_on:
        _fwd.views(x, outs, name, np_fns, arr_fn)
    return outs


def _view_regen(view, base):
    """Re-make a view's grad_fn from its base's current one (after an in-place op on the base)."""
    view._vrb = base._rebases
    with _force_grad(True):
        node, vals, _ = _record("AsStrided", view._vfn, (base,))
    view._rg = True
    view._gfn = node
    if "_onr" in view.__dict__:
        del view.__dict__["_onr"]
    node.bind_outputs([view])


# --- in-place ----------------------------------------------------------------------------------------------

_INF_SAVED_MSG = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                  "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                  "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                  "`torch.inference_mode()`.")
# ops whose backward never reads their inputs: an inference tensor may take part in them (as in torch)
_NOT_SAVED = frozenset(("Add", "Sub", "Neg", "Sum", "Cat", "Stack", "Clone", "Expand", "View", "Reshape"))
def _inplace(name, t, fn, others=(), reads_self=True):
    """t <- fn(t's value, *others' values), written into t's buffer; fn is Array-level and its result is
    cast to t's dtype. Records a node (re-pointing t's or its base's grad_fn) when gradients flow.
    reads_self=False promises that fn's derivatives never read t's old value (copy_, fill_, index_put_),
    so no snapshot of it is kept. Under forward AD t's tangent is updated in place too."""
    if _fw_on and t._v is not None and _fwd.has_tangent((t, t._base) + tuple(others)):
        new_tan = _fwd.inplace_tangent(name, t, fn, others)
        _inplace0(name, t, fn, others, reads_self)
        _fwd.inplace_write(t, new_tan)
        return t
    return _inplace0(name, t, fn, others, reads_self)


def _inplace0(name, t, fn, others=(), reads_self=True):
    """_inplace without tangents."""
    v = t._v
    dt = t._np_dtype()
    if v is None:  # a traced tensor: a functional update of its root (see _functional)
        new = fn(t._a, *[o._arr() for o in others])
        _check_cast(new.dtype, dt, name)
        if new.shape != t._a.shape:
            _shape_mismatch(t._a.shape, new.shape)
        if _fn.overlaps(t._sh) and (name not in _fn.FILLS or _fn.requires_grad(t)):  # (torch's rules)
            raise RuntimeError(_OVERLAP_MSG)
        _fn.write(t, _ew.convert_element_type(new, dt), name)
        return t
    if not v.flags.writeable:  # a view of an expanded tensor
        if _gs.enabled and (t._rg or (t._base is not None and t._base._rg) or any(_req(o) for o in others)):
            return _inplace_readonly(name, t, fn, others, reads_self)
        _fn.write_readonly(t, fn, others, name)
        return t
    if t._inf and not _gs.inference:
        raise RuntimeError(_INF_INPLACE_MSG)
    if _gs.enabled and (t._rg or (t._base is not None and t._base._rg) or any(_req(o) for o in others)):
        new, node, base = _rebase(name, t, fn, others, reads_self)
    else:
        node = None
        new = fn(t._arr(), *[o._arr() for o in others])
        _check_cast(new.dtype, dt, name)
        if new.shape != v.shape:
            _shape_mismatch(v.shape, new.shape)
    if new.__class__ is Array:
        np.copyto(v, new._buf, casting="unsafe")
    elif isinstance(new, Tracer):  # a traced value written into a buffer: the tensor becomes traced
        _fn.promote(t, _ew.convert_element_type(new, dt), name)
        return t
    else:
        np.copyto(v, np.asarray(new), casting="unsafe")
    t._bump()
    if node is not None:
        node.bind_outputs([base])
    return t


def _inplace_readonly(name, t, fn, others, reads_self):
    """A recorded in-place op on a view of an expanded tensor whose elements do not share locations (torch's
    backward refuses the others: its CopySlices writes the view region of the base's cotangent back through the
    view): the new values go through the root's buffer."""
    root = t._base
    rv = root._v if root is not None else None
    if _fn.overlaps(t._v) or rv is None or not rv.flags.writeable or not rv.flags.c_contiguous:
        raise RuntimeError(_OVERLAP_MSG)
    if t._inf and not _gs.inference:
        raise RuntimeError(_INF_INPLACE_MSG)
    new, node, base = _rebase(name, t, fn, others, reads_self)
    if isinstance(new, Tracer):
        raise RuntimeError(_OVERLAP_MSG)
    rv.reshape(-1)[_fn._index_map(t._v, rv).reshape(-1)] = np.asarray(new).reshape(-1)
    t._bump()
    node.bind_outputs([base])
    return t


def _rebase(name, t, fn, others, reads_self):
    """Record an in-place op on t (a whole tensor, or a view of a base) and re-point the base's grad_fn.

    On a whole tensor the node is the op itself, applied to the tensor's old value. On a view the node is
    a CopySlices: the op is recorded on the view's old value only (slice-sized), and backward routes the
    base's cotangent around the view region (see graph.CopySlices)."""
    base = t._base if t._base is not None else t
    if base._rg and base._gfn is None:
        raise RuntimeError(_VIEW_LEAF_MSG if t is not base else _LEAF_MSG)
    if t is not base and t._rg and t._gfn is None and not base._rg:
        raise RuntimeError(_LEAF_MSG)
    dt = t._np_dtype()
    # the op's input: t's old value (a private snapshot when the op's derivative reads it; else an alias)
    # carrying t's current graph edge
    old = _make(np.array(t._v) if reads_self else t._v)
    if t is base:
        if base._rg:
            old._rg = True
            old._gfn = base._grad_fn_now()
            if base._onr:
                old._onr = base._onr
    elif _req(t) and (reads_self or name == "IndexPut"):
        # (an index_put_ keeps the view's unwritten elements: their cotangent goes back through t's graph;
        # the other reads_self=False ops overwrite the whole view, so t's old value gets none)
        old._rg = True
        old._gfn = t._grad_fn_now()
        if t._onr:
            old._onr = t._onr

    def f(a, *os):
        r = fn(a, *os)
        _check_cast(r.dtype, dt, name)
        if r.shape != a.shape:
            _shape_mismatch(a.shape, r.shape)
        return _ew.convert_element_type(r, dt)

    with _force_grad(True):
        node, vals, _ = _record(name, f, (old,) + tuple(others))
    new = vals[0]
    if t is not base:
        base_edge = _edge(base) if base._rg else None
        node = _graph.CopySlices(node, t._vfn, base_edge, base)
    base._gfn = node
    base._rg = True
    if "_onr" in base.__dict__:
        del base.__dict__["_onr"]
    base._rebases += 1
    return new, node, base


# --- printing ------------------------------------------------------------------------------------------

_PRINT = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}



class _Formatter:
    """Formats the elements of one tensor (or of its real or imaginary parts) at one common width, choosing
    integer, fixed or scientific notation from the values' range, as PyTorch's printer does."""

    def __init__(self, vals: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        prec = _PRINT["precision"]
        if not floating:
            if vals.size:
                self.width = max(len(str(x)) for x in vals.ravel().tolist())
        else:
            v = vals.astype(np.float64).ravel()
            nz = v[np.isfinite(v) & (v != 0)]
            if nz.size:
                a = np.abs(nz)
                lo, hi = a.min(), a.max()
                items = nz.tolist()
                self.int_mode = bool(np.all(nz == np.ceil(nz)))
                wide = hi / lo > 1000.0 or hi > 1.0e8
                sci = wide if self.int_mode else (wide or lo < 1.0e-4)
                if _PRINT["sci_mode"] is not None:
                    sci = bool(_PRINT["sci_mode"])
                self.sci_mode = sci
                if sci:
                    self.width = max(len(f"{x:.{prec}e}") for x in items)
                elif self.int_mode:
                    self.width = max(len(f"{x:.0f}") for x in items) + 1
                else:
                    self.width = max(len(f"{x:.{prec}f}") for x in items)
        if _PRINT["sci_mode"] is not None:
            self.sci_mode = bool(_PRINT["sci_mode"])

    def format(self, x) -> str:
        prec = _PRINT["precision"]
        if self.floating:
            if self.sci_mode:
                s = f"{x:{self.width}.{prec}e}"
            elif self.int_mode:
                s = f"{x:.0f}"
                if x == x and x not in (np.inf, -np.inf):
                    s += "."
            else:
                s = f"{x:.{prec}f}"
        else:
            s = f"{x}"
        return " " * (self.width - len(s)) + s


def _summarized(v: np.ndarray) -> np.ndarray:
    """The elements printing shows: edgeitems at both ends of every long dimension."""
    e = _PRINT["edgeitems"]
    for ax, n in enumerate(v.shape):
        if n > 2 * e:
            idx = np.r_[0:e, n - e:n]
            v = np.take(v, idx, axis=ax)
    return v


def _elem_fmt(f1, f2):
    if f2 is None:
        return lambda x: f1.format(x)

    def fmt(z):
        re_s = f1.format(z.real)
        im_s = (f2.format(z.imag) + "j").lstrip()
        return re_s + im_s if im_s[0] in "+-" else re_s + "+" + im_s
    return fmt


def _vector_str(v, indent, summarize, f1, f2) -> str:
    elem = f1.width + 2 + (f2.width + 1 if f2 is not None else 0)
    per_line = max(1, int((_PRINT["linewidth"] - indent) // elem))
    e = _PRINT["edgeitems"]
    fmt = _elem_fmt(f1, f2)
    if summarize and not e:
        return "[...]"
    items = v.tolist()
    if summarize and len(items) > 2 * e:
        data = [fmt(x) for x in items[:e]] + [" ..."] + [fmt(x) for x in items[len(items) - e:]]
    else:
        data = [fmt(x) for x in items]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(v, indent, summarize, f1, f2) -> str:
    if v.ndim == 0:
        return _elem_fmt(f1, f2)(v.item())
    if v.ndim == 1:
        return _vector_str(v, indent, summarize, f1, f2)
    e = _PRINT["edgeitems"]
    n = v.shape[0]
    if summarize and n > 2 * e:
        rows = [_nd_str(v[i], indent + 1, summarize, f1, f2) for i in range(e)] + ["..."] + \
            [_nd_str(v[i], indent + 1, summarize, f1, f2) for i in range(n - e, n)]
    else:
        rows = [_nd_str(v[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (v.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _body(v: np.ndarray, indent: int) -> str:
    summarize = v.size > _PRINT["threshold"]
    if v.dtype.kind == "f" or D._NP2T[v.dtype].is_floating_point:
        v = v.astype(np.float64) if v.dtype != np.float64 else v
    src = _summarized(v) if summarize else v
    if v.dtype.kind == "c":
        f1 = _Formatter(src.real, True)
        f2 = _Formatter(src.imag, True)
        return _nd_str(v, indent, summarize, f1, f2)
    return _nd_str(v, indent, summarize, _Formatter(src, v.dtype.kind == "f"), None)


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suf in suffixes:
        if last + len(suf) + 2 > _PRINT["linewidth"]:
            parts.append(",\n" + " " * indent + suf)
            last = indent + len(suf)
        else:
            parts.append(", " + suf)
            last += len(suf) + 2
    parts.append(")")
    return "".join(parts)


def _repr(t) -> str:
    if t._v is None:
        return f"Tensor(traced {t._a!r})"
    v = t._v
    dt = t.dtype
    prefix = "tensor("
    indent = len(prefix)
    default = D.get_default_dtype()
    suffixes = []
    if v.size == 0:
        if v.ndim != 1:
            suffixes.append(f"size={tuple(v.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt}")
        body = "[]"
    else:
        if dt not in (default, D.complex128 if default is D.float64 else D.complex64, D.int64, D.bool_):
            suffixes.append(f"dtype={dt}")
        body = _body(v, indent)
    g = t._grad_fn_now()
    if g is not None:
        suffixes.append(f"grad_fn=<{g.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    if _fw_on:
        tan = _fwd.tangent_of(t)
        if tan is not None:
            suffixes.append(f"tangent={tan.item() if tan.ndim == 0 and tan._v is not None else _repr(tan)}")
    return _add_suffixes(prefix + body, suffixes, indent)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    if profile == "default":
        _PRINT.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        _PRINT.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        _PRINT.update(precision=4, threshold=np.inf, edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _PRINT[k] = v
    _PRINT["sci_mode"] = sci_mode


_graph._TENSOR = __import__(__name__, fromlist=["_wrap"])
