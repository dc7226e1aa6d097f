"""More of JAX's top level: custom_gradient, float0, make_mesh and shard_map (one-device meshes), the
host_* / process_indices names, and JAX's config context managers (`with jax.debug_nans(True): ...`),
each of which sets a funcgrad.config option for the duration of the block."""
from __future__ import annotations

import contextlib
import functools
from typing import Callable

import numpy as np

__all__ = ["custom_gradient", "float0", "make_mesh", "shard_map", "host_count", "host_id", "host_ids",
           "process_indices", "numpy_rank_promotion", "debug_nans", "debug_infs", "enable_x64",
           "default_matmul_precision", "log_compiles", "numpy_dtype_promotion", "default_prng_impl",
           "enable_checks", "checking_leaks", "transfer_guard", "effects_barrier"]


def effects_barrier() -> None:
    """Wait until every pending effect (debug prints, callbacks) has run: funcgrad runs them when they
    are reached, so there is never anything to wait for."""

# the dtype of the tangent / cotangent of an integer or boolean value, as in JAX
float0 = np.dtype([("float0", np.void, 0)])


def float0_zeros(shape) -> np.ndarray:
    return np.zeros(shape, dtype=float0)


# --- custom_gradient ----------------------------------------------------------------------------------
def custom_gradient(fun: Callable) -> Callable:
    """fun(*args) returns (value, vjp) where vjp(g) gives the cotangents of args (a tuple, or one value
    when there is one argument); the result computes `value`, and its reverse-mode derivative is `vjp`.
    The backward pass calls fun again on the saved arguments to get vjp (a closure cannot be saved as a
    residual across jit)."""
    from .transforms import custom_vjp

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


# --- processes ----------------------------------------------------------------------------------------
def host_count(backend=None) -> int:
    """The number of processes (always 1 here); the older name of process_count."""
    return 1


def host_id(backend=None) -> int:
    """This process's index (always 0); the older name of process_index."""
    return 0


def host_ids(backend=None) -> list:
    return [0]


def process_indices(backend=None) -> list:
    """The indices of every process (here only this one)."""
    return [0]


# --- meshes -------------------------------------------------------------------------------------------
def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of the given axis sizes and names over the devices (one device: every size must be 1)."""
    from .core.backend import devices as _all_devices
    from .sharding import Mesh
    axis_shapes = tuple(int(s) for s in axis_shapes)
    axis_names = tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f"make_mesh: {len(axis_shapes)} axis sizes for {len(axis_names)} axis names")
    devs = list(_all_devices() if devices is None else devices)
    n = int(np.prod(axis_shapes, dtype=np.int64))
    if n > len(devs):
        raise ValueError(f"make_mesh: a mesh of shape {axis_shapes} needs {n} devices, but only {len(devs)} "
                         "are available (funcgrad's meshes have one device: use sizes of 1)")
    grid = np.empty(n, dtype=object)
    for i in range(n):
        grid[i] = devs[i]
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types=axis_types)


class _Infer:
    def __repr__(self):
        return "Infer"


Infer = _Infer()


def _spec_axes(spec) -> list:
    out = []
    for p in spec:
        if p is None:
            continue
        out.extend((p,) if isinstance(p, str) else tuple(p))
    return out


def _check_specs(what, specs, values, mesh):
    from .core.tree_util import tree_map
    from .sharding import PartitionSpec

    def is_spec(s):
        return s is None or isinstance(s, PartitionSpec)
    try:
        # specs is a pytree prefix of values: map over specs, pairing each spec with its subtree
        tree_map(lambda s, sub: _check_one(what, s, sub, mesh), specs, values, is_leaf=is_spec)
    except ValueError as e:
        if "shard_map" in str(e):
            raise
        raise ValueError(f"shard_map: {what} {specs!r} does not match the structure of the "
                         f"{'arguments' if what == 'in_specs' else 'outputs'}") from None


def _check_one(what, spec, sub, mesh):
    from .core.tree_util import tree_leaves
    if spec is None:
        return None
    for axis in _spec_axes(spec):
        if axis not in mesh.axis_names:
            raise ValueError(f"shard_map: {what} names mesh axis {axis!r}, not one of {mesh.axis_names}")
    for leaf in tree_leaves(sub):
        ndim = np.ndim(leaf) if not hasattr(leaf, "ndim") else leaf.ndim
        if len(spec) > ndim:
            raise ValueError(f"shard_map: {what} {spec!r} has {len(spec)} entries for an array of rank {ndim}")
    return None


def shard_map(f: Callable | None = None, /, mesh=None, in_specs=Infer, out_specs=None, *, axis_names=frozenset(),
              check_vma: bool = True, check_rep: bool | None = None):
    """Run f on the shards of its arguments over `mesh`. funcgrad's meshes have one device, so each shard is
    the whole array: f runs once on the full arguments, with every mesh axis bound as a named axis of size 1
    (so lax.psum(x, 'data') and friends work). in_specs / out_specs are checked against the mesh and the
    values' ranks."""
    if f is None:
        return functools.partial(shard_map, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                                 axis_names=axis_names, check_vma=check_vma, check_rep=check_rep)
    if mesh is None:
        raise ValueError("shard_map: a mesh is required (funcgrad has no ambient mesh)")
    if out_specs is None:
        raise TypeError("shard_map: out_specs is required")
    if mesh.size != 1:
        raise NotImplementedError(f"shard_map: a mesh of {mesh.size} devices; funcgrad keeps each array on one "
                                  "device (use a mesh whose axes all have size 1)")
    from .core.tree_util import tree_map
    from .transforms import vmap

    @functools.wraps(f)
    def run(*args):
        if in_specs is not Infer:
            specs = tuple(in_specs) if isinstance(in_specs, list) else in_specs
            _check_specs("in_specs", specs, tuple(args), mesh)
        g = f
        for name in reversed(mesh.axis_names):
            g = vmap(g, axis_name=name)
        lifted = tree_map(lambda a: _expand(a, len(mesh.axis_names)), args)
        out = g(*lifted)
        out = tree_map(lambda a: _squeeze(a, len(mesh.axis_names)), out)
        _check_specs("out_specs", out_specs, out, mesh)
        return out
    return run


def _expand(a, k):
    from . import numpy as jnp
    a = jnp.asarray(a)
    return jnp.reshape(a, (1,) * k + tuple(a.shape))


def _squeeze(a, k):
    from . import numpy as jnp
    return jnp.reshape(a, tuple(a.shape[k:]))


# --- config context managers --------------------------------------------------------------------------
class _State:
    """A JAX config option as a context manager: `with jax.debug_nans(True): ...`; `.value` reads it."""

    def __init__(self, name: str, convert=None):
        self.name, self._convert = name, convert

    @property
    def value(self):
        from .config import config
        return config.read(self.name)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        from .config import config
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


numpy_rank_promotion = _State("numpy_rank_promotion")
debug_nans = _State("debug_nans", bool)
debug_infs = _State("debug_infs", bool)
enable_x64 = _State("enable_x64", bool)
default_matmul_precision = _State("default_matmul_precision")
log_compiles = _State("log_compiles", bool)
numpy_dtype_promotion = _State("numpy_dtype_promotion")
default_prng_impl = _State("default_prng_impl")
enable_checks = _State("enable_checks", bool)
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
