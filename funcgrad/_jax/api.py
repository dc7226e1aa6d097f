"""JAX's smaller top-level names: shapes without computing (`eval_shape`, `ShapeDtypeStruct`, `typeof`),
devices and processes (`device_count`, `local_devices`, `device_get`, ...), jit controls (`disable_jit`,
`clear_caches`, `ensure_compile_time_eval`, `named_scope`, `named_call`), `linear_transpose`,
`closure_convert`, `custom_gradient`, host callbacks (`pure_callback`), `print_environment_info`, and JAX's
config context managers (`with jax.debug_nans(True): ...`), each of which sets a funcgrad.config option for
the duration of the block.

funcgrad runs on the devices `funcgrad.devices()` lists (the CPU, plus CUDA GPUs when CuPy sees them); in
a multi-process job (funcgrad.distributed.initialize) that list has every process's CPU, and
`local_devices()` this process's.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import platform
import sys
from typing import Callable

import numpy as np

from .._src.core.config import config
from .._src.core import dtypes as _dt
from .._src.core import processes
from .._src.core.array import Array, ArrayBase, get_aval
from .._src.core.aval import ShapeDtypeStruct, ShapedArray
from .._src.core.backend import CPU, Device, devices
from .._src.core.backend import backend_devices as _backend_devices
from .._src.core.jaxpr import eval_jaxpr
from .._src.core.sharding import NamedSharding, Sharding
from .._src.core.tree_util import tree_flatten, tree_map, tree_unflatten
from ..numpy import asarray, stack
from .._src.prims.callbacks import pure_callback_p
from .._src.prims.shape import full
from .._src.interpreters.jit import JitFunction, config as _jit_config
from .._src.interpreters.ad import vjp
from .._src.interpreters.batching import trace_to_jaxpr
from .._src.interpreters.custom import custom_vjp

__all__ = ["device_put", "default_device", "block_until_ready", "ShapeDtypeStruct", "eval_shape", "typeof", "device_count", "local_devices", "local_device_count",
           "default_backend", "process_index", "process_count", "Device", "device_get", "disable_jit",
           "clear_caches", "ensure_compile_time_eval", "named_scope", "named_call", "linear_transpose",
           "closure_convert", "print_environment_info", "pure_callback", "device_put_replicated",
           "device_put_sharded", "custom_gradient", "host_count", "host_id", "host_ids", "process_indices",
           "effects_barrier", "numpy_rank_promotion", "debug_nans", "debug_infs", "enable_x64",
           "default_matmul_precision", "log_compiles", "numpy_dtype_promotion", "default_prng_impl", "enable_checks",
           "checking_leaks", "transfer_guard"]


def _to_struct(av: ShapedArray) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(av.shape, av.dtype, weak_type=av.weak_type)


def eval_shape(fun: Callable, *args, **kwargs):
    """The shapes and dtypes `fun(*args, **kwargs)` would return, as a pytree of ShapeDtypeStructs,
    found by tracing abstractly (nothing is computed). Array leaves may be arrays or anything with
    `.shape` and `.dtype` (ShapeDtypeStruct).

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> jax.eval_shape(lambda x: x @ x.T, jnp.ones((3, 2)))
        ShapeDtypeStruct(shape=(3, 3), dtype=float32)
        >>> jax.eval_shape(jnp.sum, jax.ShapeDtypeStruct((1000, 1000), jnp.float32))
        ShapeDtypeStruct(shape=(), dtype=float32)
    """
    leaves, in_tree = tree_flatten((args, kwargs))
    avals = []
    for x in leaves:
        if isinstance(x, (ArrayBase, ShapeDtypeStruct, bool, int, float, complex, np.ndarray, np.generic)):
            avals.append(get_aval(x))
        elif hasattr(x, "shape") and hasattr(x, "dtype"):
            avals.append(ShapedArray(x.shape, _dt.canonicalize(x.dtype)))
        else:
            avals.append(get_aval(x))
    store = []

    def flat(*ins):
        a, k = tree_unflatten(in_tree, ins)
        out_leaves, out_tree = tree_flatten(fun(*a, **k))
        store.append(out_tree)
        return out_leaves

    jaxpr = trace_to_jaxpr(flat, avals, "eval_shape")
    return tree_unflatten(store[-1], [_to_struct(v.aval) for v in jaxpr.outvars])


def typeof(x) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of an array, tracer or Python scalar."""
    return get_aval(x)


# --- devices and processes -------------------------------------------------------------------------

def default_backend() -> str:
    """'gpu' when a CUDA device is visible (through CuPy), else 'cpu'."""
    return "gpu" if any(d.platform != "cpu" for d in devices()) else "cpu"


def device_count(backend=None) -> int:
    """The number of devices of the default backend (or of `backend`) in the whole job: every process has
    the same devices, so this process's count times process_count()."""
    return len(_backend_devices(backend)) * processes.count()


def local_devices(process_index: int | None = None, backend=None, host_id=None) -> list:
    """The devices of this process (or of process `process_index`: another process's CPU) for the default
    backend."""
    k = process_index if process_index is not None else host_id
    if k is None or k == processes.index():
        return _backend_devices(backend)
    return [d for d in devices("cpu") if d.process_index == k]


def local_device_count(backend=None) -> int:
    """The number of devices this process can use (the CPU, plus CUDA devices when CuPy sees them)."""
    return len(_backend_devices(backend))


def process_index(backend=None) -> int:
    """This process' index in its job (funcgrad.distributed); 0 for a single process."""
    return processes.index()


def process_count(backend=None) -> int:
    """The number of processes of the job (funcgrad.distributed); 1 for a single process."""
    return processes.count()


def process_indices(backend=None) -> list:
    """The indices of every process of the job."""
    return list(range(processes.count()))


def host_count(backend=None) -> int:
    """The older name of process_count."""
    return processes.count()


def host_id(backend=None) -> int:
    """The older name of process_index."""
    return processes.index()


def host_ids(backend=None) -> list:
    """The indices of the job's hosts (one per process); the older name of process_indices."""
    return list(range(processes.count()))


def effects_barrier() -> None:
    """Wait until every pending effect (debug prints, callbacks) has run: funcgrad runs them when they
    are reached, so there is never anything to wait for."""


def device_get(x):
    """Copy a pytree's arrays to host NumPy arrays (other leaves pass through)."""
    def get(v):
        if isinstance(v, ArrayBase):
            return np.asarray(v)
        if hasattr(v, "get") and type(v).__module__.startswith("cupy"):
            return v.get()
        return v
    return tree_map(get, x)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Place x (a pytree) on a device as Arrays: `device` is a Device, a Sharding of one device, or None
    (the array's own device, else the default one)."""
    sharding = None
    if device is not None and not isinstance(device, Device):
        if not isinstance(device, Sharding):
            raise TypeError(f"device_put: device must be a Device or a Sharding, got {type(device).__name__}")
        sharding = device if isinstance(device, NamedSharding) else None
        device = device.single_device("device_put")
    if device is None:
        device = _default_device.value
    if sharding is None:
        return tree_map(lambda v: asarray(v, device=device), x)
    return tree_map(lambda v: _put_named(asarray(v, device=device), sharding), x)


def _put_named(a, sharding):
    """a as an Array carrying `sharding` (its buffer shared), after JAX's check of the spec's rank."""
    if len(sharding.spec) > a.ndim:
        raise ValueError(f"One of device_put args is incompatible with its sharding annotation {sharding!r}: "
                         f"Sharding {sharding!r} is only valid for values of rank at least {len(sharding.spec)}, "
                         f"but was applied to a value of rank {a.ndim}."
                         + (" For scalars the PartitionSpec should be P()" if a.ndim == 0 else ""))
    if type(a) is not Array:   # (a tracer under a transform: placed as it is)
        return a
    out = Array(a._buf, a.weak_type)
    out._sharding = sharding
    return out


class _DefaultDevice:
    value = None


_default_device = _DefaultDevice()


@contextlib.contextmanager
def default_device(device):
    """Inside this context, device_put without a device places arrays on `device` (a Device or None)."""
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"default_device: expected a Device or None, got {type(device).__name__}")
    prev = _default_device.value
    _default_device.value = device
    try:
        yield
    finally:
        _default_device.value = prev


def block_until_ready(x):
    """x (a pytree) once its arrays are computed (funcgrad computes eagerly: they are)."""
    return tree_map(lambda v: v.block_until_ready() if hasattr(v, "block_until_ready") else v, x)


def device_put_replicated(x, devices: list):
    """x (a pytree) stacked len(devices) times along a new leading axis, for pmap over those devices."""
    if not devices:
        raise ValueError("device_put_replicated: `devices` must be a non-empty sequence")
    return tree_map(lambda v: stack([asarray(v)] * len(devices)), x)


def device_put_sharded(shards: list, devices: list):
    """The pytrees in `shards` (one per device) stacked leafwise along a new leading axis."""
    if len(shards) != len(devices):
        raise ValueError(f"device_put_sharded: {len(shards)} shards for {len(devices)} devices")
    return tree_map(lambda *vs: stack([asarray(v) for v in vs]), *shards)


# --- jit controls -----------------------------------------------------------------------------------

@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Inside this context, jit-decorated functions run eagerly (Python control flow and prints run on
    concrete values), as JAX's disable_jit."""
    prev = _jit_config.disable_jit
    _jit_config.disable_jit = bool(disable)
    try:
        yield
    finally:
        _jit_config.disable_jit = prev


def clear_caches() -> None:
    """Empty every jitted function's cache of compiled signatures (the next call re-traces)."""
    for obj in gc.get_objects():
        if issubclass(type(obj), JitFunction):  # (not isinstance: a dead weakref.proxy raises ReferenceError)
            obj.clear_cache()


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Operations on concrete values run at trace time. funcgrad already evaluates operations whose
    operands are all concrete eagerly under jit (only tracers are staged), so this context changes
    nothing; it exists so JAX programs run."""
    yield


@contextlib.contextmanager
def named_scope(name: str):
    """A name for the operations traced inside (JAX uses it in profiles); funcgrad keeps no names."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a str, got {type(name).__name__}")
    yield


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun` under a name for profiles (the identity here, since funcgrad keeps no scope names)."""
    @functools.wraps(fun)
    def call(*args, **kwargs):
        return fun(*args, **kwargs)
    if name is not None:
        call.__name__ = name
    return call


# --- custom_gradient, transposition and closure conversion ------------------------------------------

def custom_gradient(fun: Callable) -> Callable:
    """fun(*args) returns (value, vjp) where vjp(g) gives the cotangents of args (a tuple, or one value
    when there is one argument); the result computes `value`, and its reverse-mode derivative is `vjp`.
    The backward pass calls fun again on the saved arguments to get vjp (a closure cannot be saved as a
    residual across jit)."""
    @custom_vjp
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        return fun(*args)[0], args

    def bwd(args, g):
        cts = fun(*args)[1](g)
        if not isinstance(cts, (tuple, list)):
            cts = (cts,)
        cts = tuple(cts)
        if len(cts) != len(args):
            raise TypeError(f"custom_gradient: the vjp function of {getattr(fun, '__name__', 'fun')} returned "
                            f"{len(cts)} cotangents for {len(args)} arguments")
        return cts

    wrapped.defvjp(fwd, bwd)

    @functools.wraps(fun)
    def call(*args, **kwargs):
        if kwargs:
            return custom_gradient(functools.partial(fun, **kwargs))(*args)
        return wrapped(*args)
    return call


def linear_transpose(fun: Callable, *primals, reduce_axes=()) -> Callable:
    """The transpose of a linear function `fun`, for inputs shaped like `primals` (arrays or
    ShapeDtypeStructs): `linear_transpose(f, x)(ct)` returns a tuple of cotangents, one per input.

    `fun` is assumed linear (as JAX assumes); the transpose is its vjp, taken at zero inputs."""
    leaves, tree = tree_flatten(primals)
    for x in leaves:
        if not _dt.is_inexact(get_aval(x).dtype):
            raise TypeError(f"linear_transpose only supports float and complex inputs, got "
                            f"{get_aval(x).str_short()}")
    zeros = [full(get_aval(x).shape, 0, get_aval(x).dtype) for x in leaves]
    zero_primals = tree_unflatten(tree, zeros)
    expected = eval_shape(fun, *zero_primals)

    def transposed(*cts):
        ct = cts[0] if len(cts) == 1 else cts
        exp_leaves, exp_tree = tree_flatten(expected)
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != exp_tree or any(tuple(get_aval(c).shape) != e.shape for c, e in zip(ct_leaves, exp_leaves)):
            raise TypeError(f"linear_transpose: cotangent structure/shapes {ct_tree} "
                            f"{[get_aval(c).shape for c in ct_leaves]} do not match the output of "
                            f"the function {exp_tree} {[e.shape for e in exp_leaves]}")
        _, pullback = vjp(fun, *zero_primals)
        return tuple(pullback(ct))
    return transposed


def closure_convert(fun: Callable, *example_args):
    """(converted, consts): `converted(*args, *consts)` computes `fun(*args)` with the floating-point
    arrays `fun` closes over (including tracers of enclosing transforms) passed as explicit arguments,
    so custom_vjp rules can differentiate with respect to them."""
    leaves, in_tree = tree_flatten(example_args)
    store = []

    def flat(*ins):
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, ins)))
        store.append(out_tree)
        return out_leaves

    jaxpr = trace_to_jaxpr(flat, [get_aval(x) for x in leaves], "closure_convert")
    out_tree = store[-1]
    hoist = [i for i, c in enumerate(jaxpr.consts) if _dt.is_inexact(get_aval(c).dtype)]
    consts = [jaxpr.consts[i] for i in hoist]
    n_in = len(leaves)

    def converted(*args_and_consts):
        split = len(args_and_consts) - len(consts)
        args, cs = args_and_consts[:split], args_and_consts[split:]
        flat_args, tree = tree_flatten(tuple(args))
        if tree != in_tree or len(flat_args) != n_in:
            raise TypeError(f"closure_convert: called with arguments of structure {tree}, traced with {in_tree}")
        all_consts = list(jaxpr.consts)
        for i, c in zip(hoist, cs):
            all_consts[i] = c
        env_jaxpr = jaxpr.__class__(jaxpr.constvars, all_consts, jaxpr.invars, jaxpr.eqns, jaxpr.outvars)
        return tree_unflatten(out_tree, eval_jaxpr(env_jaxpr, *flat_args))
    return converted, consts


def print_environment_info(return_string: bool = False):
    """Versions of funcgrad, NumPy and Python, and the devices, as JAX's print_environment_info."""
    from .. import __version__  # (lazy: the package facade, which imports this module)
    lines = [f"funcgrad:   {__version__}", f"numpy:      {np.__version__}",
             f"python:     {sys.version.replace(chr(10), ' ')}",
             f"platform:   {platform.platform()}",
             f"backend:    {default_backend()}", f"devices:    {devices()}"]
    try:
        import ml_dtypes
        lines.insert(2, f"ml_dtypes:  {ml_dtypes.__version__}")
    except ImportError:
        pass
    text = "\n".join(lines) + "\n"
    if return_string:
        return text
    print(text, end="")
    return None


# --- host callbacks ---------------------------------------------------------------------------------

class _PureCallback:
    """Rebuilds the callback's argument tree from NumPy buffers and flattens what it returns."""
    __slots__ = ("fn", "tree", "out_tree")

    def __init__(self, fn, tree, out_tree):
        self.fn, self.tree, self.out_tree = fn, tree, out_tree

    def __call__(self, *bufs):
        args, kwargs = tree_unflatten(self.tree, bufs)
        out = self.fn(*args, **kwargs)
        leaves, tree = tree_flatten(out)
        if tree != self.out_tree:
            raise TypeError(f"pure_callback: the callback returned a {tree}, but result_shape_dtypes is a "
                            f"{self.out_tree}")
        return leaves


def pure_callback(callback: Callable, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  vectorized=None, **kwargs):
    """Call a pure Python function on NumPy arrays from traced code: under jit it runs when the compiled
    function runs. `result_shape_dtypes` is a pytree of ShapeDtypeStructs (or arrays) describing what it
    returns; `vmap_method` says how vmap calls it ('sequential', 'expand_dims', 'broadcast_all';
    legacy `vectorized=True` means 'legacy_vectorized'). Not differentiable (wrap it in custom_jvp)."""
    if vectorized is not None:
        if vmap_method is not None:
            raise ValueError("pure_callback: give vmap_method or the deprecated vectorized, not both")
        vmap_method = "legacy_vectorized" if vectorized else "sequential"
    return _pure_like(pure_callback_p, "pure_callback", callback, result_shape_dtypes, args, kwargs, vmap_method)


def _pure_like(prim, name, callback, result_shape_dtypes, args, kwargs, vmap_method):
    """Bind a host-callback primitive: flatten the arguments and the declared results."""
    if not callable(callback):
        raise TypeError(f"{name}: expected a callable, got {type(callback).__name__}")
    res_leaves, res_tree = tree_flatten(result_shape_dtypes)
    result_avals = []
    for r in res_leaves:
        if not (hasattr(r, "shape") and hasattr(r, "dtype")):
            raise TypeError(f"{name}: result_shape_dtypes leaves must have .shape and .dtype "
                            f"(e.g. ShapeDtypeStruct), got {type(r).__name__}")
        result_avals.append(ShapedArray(tuple(r.shape), _dt.canonicalize(r.dtype)))
    leaves, tree = tree_flatten((args, kwargs))
    leaves = [x if isinstance(x, ArrayBase) else asarray(x) for x in leaves]
    outs = prim.bind(*leaves, callback=_PureCallback(callback, tree, res_tree),
                     result_avals=tuple(result_avals), vmap_method=vmap_method)
    return tree_unflatten(res_tree, outs)


# --- JAX's config context managers (`with jax.debug_nans(True): ...`) ----------------------------------
class _State:
    """A JAX config option as a context manager: `with jax.debug_nans(True): ...`; `.value` reads it."""

    def __init__(self, name: str, convert=None, doc: str = ""):
        self.name, self._convert = name, convert
        if doc:  # (each option's own text, for help() and the API pages)
            self.__doc__ = f"{doc}\n\nA context manager: `with funcgrad.{name}(value): ...` sets config option " \
                           f"`jax_{name}` inside the block; `.value` reads it."

    @property
    def value(self):
        return config.read(self.name)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        if self._convert is not None:
            new_val = self._convert(new_val)
        prev = config.read(self.name)
        config.update(self.name, new_val)
        try:
            yield
        finally:
            config.update(self.name, prev)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __repr__(self) -> str:
        return f"State({self.name}={self.value!r})"


numpy_rank_promotion = _State("numpy_rank_promotion", None, "What funcgrad.numpy does when operands of different "
                              "ranks broadcast: 'allow' (the default), 'warn' or 'raise'.")
debug_nans = _State("debug_nans", bool, "Raise FloatingPointError when an operation produces a NaN.")
debug_infs = _State("debug_infs", bool, "Raise FloatingPointError when an operation produces an infinity.")
enable_x64 = _State("enable_x64", bool, "Turn on 64-bit dtypes (the x64 mode): float64 and int64 defaults "
                    "instead of float32 and int32.")
default_matmul_precision = _State("default_matmul_precision", None, "The precision of matrix products; "
                                  "accepted for JAX programs, NumPy always computes at full precision.")
log_compiles = _State("log_compiles", bool, "Log each compilation that jit performs (its cache misses).")
numpy_dtype_promotion = _State("numpy_dtype_promotion", None, "Dtype promotion of funcgrad.numpy: only JAX's "
                               "'standard' lattice is implemented ('strict' raises NotImplementedError).")
default_prng_impl = _State("default_prng_impl", None, "The PRNG implementation of new keys: accepted and "
                           "stored; funcgrad's keys are always threefry2x32 (JAX's default bits).")
enable_checks = _State("enable_checks", bool, "JAX's extra internal checks: accepted, no effect "
                     "(funcgrad already detects a leaked tracer when it is used).")
_check_tracer_leaks = _State("check_tracer_leaks", bool)


def checking_leaks():
    """A context in which leaked tracers are checked for (funcgrad always detects them on use)."""
    return _check_tracer_leaks(True)


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """JAX's guard on implicit host/device transfers; accepted ("allow", "log", "disallow", ...) and not
    enforced, since funcgrad's arrays live where NumPy / CuPy put them."""
    if new_val not in ("allow", "log", "disallow", "log_explicit", "disallow_explicit"):
        raise ValueError(f"transfer_guard: unknown level {new_val!r}")
    yield
