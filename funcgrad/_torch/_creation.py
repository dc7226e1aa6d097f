"""Tensor creation (tensor, zeros, arange, ...) and the stateful random generator built on
funcgrad.random's stateless keys."""
from __future__ import annotations

import builtins
import math
import os
import struct

import numpy as np

from .. import random as _jr
from .._src.core.array import Array
from . import _dtype as D
from ._tensor import Tensor, _make, _Storage, _wrap
from ._tensor import _apply, _legacy
from .._src.prims import elementwise as ew
from . import _ops as O
from . import cuda
from ._tensor import _legacy as L
from .._src.interpreters import jit
from ..autograd.grad_mode import state
from ._tensor import _apply


def _finish(v, requires_grad=False, dtype=None):
    if dtype is not None:
        dt = D.to_np(dtype)
        if v.dtype != dt:
            v = v.astype(dt)
    if not v.flags.writeable or v.base is not None:
        v = v.copy()
    t = _make(v)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(data):
    """The tensor dtype of Python data, as torch infers it: Python bool/int/float/complex give bool, int64,
    the default float and the default complex; NumPy scalars and tensors keep their dtype; the items'
    dtypes promote with torch.promote_types."""
    best = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if isinstance(x, (np.generic, np.ndarray)):
            dt = x.dtype
        elif isinstance(x, bool):
            dt = np.dtype(np.bool_)
        elif isinstance(x, int):
            dt = np.dtype(np.int64)
        elif isinstance(x, float):
            dt = D.default_float()
        elif isinstance(x, builtins.complex):
            dt = D.default_complex()
        elif isinstance(x, Tensor):
            dt = x._np_dtype()
        elif isinstance(x, (np.generic, np.ndarray)):
            dt = x.dtype
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
        best = dt if best is None else D.promote_types(best, dt)
    return D.default_float() if best is None else best


def _to_host(data):
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, (Tensor, list, tuple)) for x in data):
            return [_to_host(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of data (nested lists, scalars, NumPy arrays, tensors)."""
    _dev(device)
    if isinstance(data, Tensor):
        v = np.array(data._host(), dtype=None if dtype is None else D.to_np(dtype))
    elif isinstance(data, np.ndarray):
        v = np.array(data, dtype=None if dtype is None else D.to_np(dtype))
    elif isinstance(data, Array):
        v = np.array(data, dtype=None if dtype is None else D.to_np(dtype))
    else:
        dt = D.to_np(dtype) if dtype is not None else _infer_dtype(data)
        host = _to_host(data)
        if isinstance(host, list) and any(isinstance(x, np.ndarray) and x.ndim for x in host):
            raise ValueError("only one element tensors can be converted to Python scalars")
        try:
            v = np.array(host, dtype=dt)
        except (OverflowError, ValueError) as e:
            if "sequence" in str(e) or "inhomogeneous" in str(e):
                raise ValueError(f"expected sequence of equal length lists: {e}") from None
            v = np.array(host).astype(dt)
    if v.dtype not in D._NP2T:
        raise TypeError(f"can't convert np.ndarray of type {v.dtype}. The only supported types are: float64, "
                        "float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
    return _finish(v, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Shares memory with a NumPy array (or tensor) when no conversion is needed."""
    _dev(device)
    if isinstance(data, Tensor):
        if dtype is None or D.to_np(dtype) == data._np_dtype():
            return data
        return data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or D.to_np(dtype) == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray`: writes through either are seen by both."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype not in D._NP2T:
        raise TypeError(f"can't convert np.ndarray of type {ndarray.dtype}.")
    t = _make(ndarray)
    t._st = _Storage(ndarray)
    return t


def _dev(device) -> None:
    if device is not None:
        D.check_device(device)


def _size_kw(name, args, size):
    """The shape of zeros/ones/empty/rand/randn: positional sizes, or torch's `size=` keyword."""
    if size is not None:
        if args:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        return _size((size,))
    return _size(args)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple, D.Size)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _fill(size, value, dtype, requires_grad, default=None):
    dt = D.to_np(dtype) if dtype is not None else (default if default is not None else D.default_float())
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return _finish(np.full(size, value, dt), requires_grad)


def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _dev(device)
    return _fill(_size_kw("zeros", args, size), 0, dtype, requires_grad)


def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _dev(device)
    return _fill(_size_kw("ones", args, size), 1, dtype, requires_grad)


def empty(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    _dev(device)
    return _fill(_size_kw("empty", args, size), 0, dtype, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    default = None
    if dtype is None:
        default = _infer_dtype(fill_value)
    else:
        fill_value = _int_fill(fill_value, D.to_np(dtype))
    return _fill(_size((size,)) if not isinstance(size, int) else (size,), fill_value, dtype, requires_grad,
                 default)


def _int_fill(value, dt: np.dtype):
    """A fill value for dtype dt, with torch's overflow check for an integer dtype (NaN, inf or out of range:
    RuntimeError; a negative integer down to -max into an unsigned type wraps, as in torch)."""
    if dt.kind not in "iu" or not isinstance(value, (int, float, np.number)) or isinstance(value, bool):
        return value
    info = np.iinfo(dt)
    lo = -info.max if dt.kind == "u" else info.min
    if not (math.isfinite(value) and lo <= value <= info.max):
        raise RuntimeError(f"full(): value cannot be converted to type {D.from_np(dt)} without overflow: "
                           f"{value!r}")
    return int(value) % (1 << info.bits) if dt.kind == "u" and value < 0 else value


def _like(input, dtype):
    return input._np_dtype() if dtype is None else D.to_np(dtype)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dev(device)
    return _finish(np.zeros(input.shape, _like(input, dtype)), requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dev(device)
    return _finish(np.ones(input.shape, _like(input, dtype)), requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dev(device)
    return _finish(np.zeros(input.shape, _like(input, dtype)), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    _dev(device)
    return _finish(np.full(input.shape, fill_value, _like(input, dtype)), requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    m = n if m is None else m
    for name, k in (("n", n), ("m", m)):
        if k < 0:
            raise RuntimeError(f"eye(): {name} must be greater or equal to 0, got {k}")
    return _finish(np.eye(n, m, dtype=dt), requires_grad)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end} (step {step}); start, end and step "
                           f"must be finite")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        isf = any(isinstance(v, float) or (isinstance(v, np.floating)) for v in (start, end, step))
        dt = D.default_float() if isf else np.dtype(np.int64)
    else:
        dt = D.to_np(dtype)
    n = int(math.ceil((end - start) / step))
    if dt.kind in "iu" and all(isinstance(v, (int, np.integer)) for v in (start, end, step)):
        v = np.arange(start, end, step, dtype=dt)
    else:
        v = (start + np.arange(n, dtype=np.float64) * step).astype(dt)
    return _finish(v, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001
    _dev(device)
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
                  "in [start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    return _finish((start + np.arange(n, dtype=np.float64) * step).astype(dt), requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    start, end = _num(start), _num(end)
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dt.kind in "fc":
        # torch's kernel: start + i*step for the first half, end - (steps-1-i)*step for the second
        wdt = dt
        i = np.arange(steps)
        step = (np.asarray(end, wdt) - np.asarray(start, wdt)) / np.asarray(max(steps - 1, 1), wdt)
        half = steps // 2
        v = np.where(i < half, np.asarray(start, wdt) + step * i.astype(wdt),
                     np.asarray(end, wdt) - step * (steps - 1 - i).astype(wdt)).astype(dt)
        if steps == 1:
            v = np.array([start], dt)
    else:
        v = np.linspace(start, end, steps).astype(dt)
    return _finish(v, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    _dev(device)
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    v = np.power(float(base), np.linspace(float(_num(start)), float(_num(end)), steps)).astype(dt)
    return _finish(v, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    _dev(device)
    return tensor(float(s) if dtype is None else s, dtype=dtype, requires_grad=requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    _dev(device)
    r, c = np.tril_indices(row, offset, col)
    return _finish(np.stack([r, c]).astype(D.to_np(dtype) if dtype else np.int64))


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    _dev(device)
    r, c = np.triu_indices(row, offset, col)
    return _finish(np.stack([r, c]).astype(D.to_np(dtype) if dtype else np.int64))


def complex(real, imag, *, out=None):  # noqa: A001
    """real + i imag, by the complex card (so an infinite or NaN part stays in its own part, as torch)."""
    dr, di = real._np_dtype(), imag._np_dtype()
    if dr.kind != "f" or di.kind != "f":
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_legacy(dr)} and "
                           f"{_legacy(di)}")
    if dr != di:
        raise RuntimeError(f"Expected object of scalar type {_legacy(dr)} but got scalar type {_legacy(di)} for "
                           "second argument")
    if dr == np.float16:  # (torch gives complex32, which funcgrad does not have: complex64 instead)
        real, imag = real.float(), imag.float()
    shape = O._bshape(tuple(real.shape), tuple(imag.shape))

    def f(a, b):
        if a.shape != shape:
            a = O._bid(a, shape)
        if b.shape != shape:
            b = O._bid(b, shape)
        return ew.complex(a, b)
    return O._out(_apply("Complex", f, (real, imag)), out)


# --- the stateful generator --------------------------------------------------------------------------------

_DEFAULT_SEED = 67280421310721


# the randomness modes of the torch.func.vmap calls running now, innermost last (funcgrad.func pushes them)
_vmap_randomness: list = []


class Generator:
    """A stateful random number generator (torch.Generator) over funcgrad.random's stateless keys: the
    state is (seed, counter); every draw uses the key fold_in(PRNGKey(seed), counter) and advances the
    counter. Streams differ from PyTorch's (which uses Mersenne Twister / Philox)."""

    def __init__(self, device="cpu"):
        self.device = D.device(device)
        if self.device.type == "cuda" and not D._accelerator_type():
            raise RuntimeError("Cannot get CUDA generator: Torch not compiled with CUDA enabled")
        self.manual_seed(_DEFAULT_SEED)

    def __repr__(self) -> str:
        return f"<funcgrad.Generator object at {id(self):#x}>"

    def manual_seed(self, seed):
        """Reset to the stream of `seed` (any int in [-2**63, 2**64)); returns self."""
        seed = int(seed)
        if not -0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._counter = 0
        self._key = None
        self._block_id = -1
        return self

    def seed(self) -> int:
        s = int.from_bytes(os.urandom(8), "little") & 0x7FFF_FFFF_FFFF_FFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        return from_bytes(struct.pack("<QQ", self._seed, self._counter))

    def set_state(self, new_state):
        """Restore a state from get_state() (a 16-element uint8 tensor: seed and counter)."""
        if not isinstance(new_state, Tensor) or new_state._np_dtype() != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        b = bytes(np.ascontiguousarray(new_state._host()).tobytes())
        if len(b) != 16:
            raise RuntimeError(f"Expected a funcgrad RNG state of size 16 but found the input RNG state size to "
                               f"be {len(b)}")
        self._seed, self._counter = struct.unpack("<QQ", b)
        self._key = None
        return self

    def next_key(self):
        """The key of draw number `counter`: entry counter % 1024 of split(fold_in(PRNGKey(seed),
        counter // 1024), 1024) (keys are made a block at a time)."""
        if _vmap_randomness and _vmap_randomness[-1] == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                               "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                               "operation out of vmap")
        block, i = divmod(self._counter, _BLOCK)
        if self._key is None or self._block_id != block:
            s = self._seed
            base = Array(np.array([(s >> 32) & 0xFFFFFFFF, s & 0xFFFFFFFF], np.uint32))
            k = _jr.fold_in(base, block & 0xFFFFFFFF)
            if block > 0xFFFFFFFF:
                k = _jr.fold_in(k, block >> 32)
            self._key = np.asarray(_jr.split(k, _BLOCK))
            self._block_id = block
        self._counter += 1
        return Array(self._key[i])


_BLOCK = 1024


def from_bytes(b):
    return _finish(np.frombuffer(b, np.uint8).copy())


default_generator = Generator()


def manual_seed(seed):
    """Seed every default generator (the CPU one; CUDA's is a no-op here); returns the CPU one."""
    g = default_generator.manual_seed(seed)
    cuda.manual_seed_all(seed)
    return g


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


def _gen(generator):
    return default_generator if generator is None else generator


def _float_dt(dtype):
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    if dt.kind not in "fc":
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{_legacy(dt)}'")
    return dt


def _legacy(dt) -> str:
    return L(dt)


def _sample(arr):
    return np.array(arr)


_jitted = {}


def _jit_sampler(name):
    """funcgrad.random's sampler `name`, compiled once per (shape, dtype)."""
    f = _jitted.get(name)
    if f is None:
        f = _jitted[name] = jit(getattr(_jr, name), static_argnums=(1, 2))
    return f


# From this many elements on, draws call funcgrad.random eagerly: with a concrete key it computes the
# sample in cache-sized blocks (see funcgrad.random._keys.blockwise), with no compilation per shape
# and no full-size temporaries. Smaller draws use the compiled sampler, whose per-call overhead is
# lower. Both give the same values.
_EAGER_MIN = 1 << 16


def _sampler(name, key, shape, dt):
    shape = tuple(shape)
    if math.prod(shape) >= _EAGER_MIN:
        return getattr(_jr, name)(key, shape, np.dtype(dt))
    return _jit_sampler(name)(key, shape, np.dtype(dt))


def _uniform(key, shape, dt):
    return _sampler("uniform", key, shape, dt)


def _normal(key, shape, dt):
    return _sampler("normal", key, shape, dt)


def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    _dev(device)
    shape = _size_kw("rand", args, size)
    dt = _float_dt(dtype)
    return _finish(_sample(_uniform(_gen(generator).next_key(), shape, dt)), requires_grad)


def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    _dev(device)
    shape = _size_kw("randn", args, size)
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    if dt.kind not in "fc":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_legacy(dt)}'")
    return _finish(_sample(_normal(_gen(generator).next_key(), shape, dt)), requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    _dev(device)
    if size is None:
        if high is None or not isinstance(high, (tuple, list, D.Size)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    dt = D.to_np(dtype) if dtype is not None else np.dtype(np.int64)
    low, high = int(low), int(high)
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    _check_int_range(low, high, dt)
    v = _randint_np(_gen(generator), _size((size,)) if isinstance(size, int) else tuple(size), low, high)
    return _finish(v.astype(dt), requires_grad)


def _check_int_range(low, high, dt) -> None:
    """torch's bounds check of random_/randint's [low, high) against an integer or bool dtype."""
    if dt.kind in "iub":
        info = np.iinfo(dt) if dt.kind != "b" else None
        lo, hi = (0, 1) if info is None else (int(info.min), int(info.max))
        name = {"b": "bool", "u": "unsigned char"}.get(dt.kind, "") if dt.itemsize == 1 or dt.kind == "b" else \
            {2: "short", 4: "int", 8: "long int"}[dt.itemsize]
        if dt.kind == "i" and dt.itemsize == 1:
            name = "signed char"
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {name}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {name}")


def _randint_np(gen, shape, low: int, high: int) -> np.ndarray:
    """Uniform int64 values in [low, high) (any range up to 2**64 wide) from one key of gen."""
    span = high - low
    key = gen.next_key()
    if span <= 2 ** 62 and -2 ** 63 <= low and high <= 2 ** 63 - 1:
        # (the bounds as int64 arrays: a Python int is the JAX face's default int, int32 with x64 off)
        lo, hi = Array(np.array(low, np.int64)), Array(np.array(high, np.int64))
        return np.asarray(_jr.randint(key, shape, lo, hi, dtype=np.int64))
    bits = np.asarray(_jr.bits(key, shape, np.uint64)).astype(object)  # exact modulo for huge spans
    return np.array((bits % span + low).tolist() if shape else int(bits % span + low), dtype=np.int64)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    dt = D.to_np(dtype) if dtype is not None else np.dtype(np.int64)
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    v = _sample(_jr.permutation(_gen(generator).next_key(), n)) if n else np.zeros(0, np.int64)
    return _finish(v.astype(dt), requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dev(device)
    return rand(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dev(device)
    return randn(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None):
    _dev(device)
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, dtype=dtype or input.dtype)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """normal(mean, std): tensor mean and/or std (broadcast; the result does not require grad), or
    normal(mean, std, size) with float mean and std."""
    _dev(device)
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if tm or ts:
        if size is not None:
            raise TypeError("normal() received an invalid combination of arguments: size= is only accepted with "
                            "float mean and std")
        ref = mean if tm else std
        dt = ref._np_dtype()
        if tm and ts:
            dt = D.promote_types(mean._np_dtype(), std._np_dtype())
        if dt.kind not in "fc":
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_legacy(dt)}'")
        m = mean._host() if tm else np.asarray(mean, dt)
        sd = std._host() if ts else np.asarray(std, dt)
        if ts:
            if not np.all(sd >= 0):
                raise RuntimeError("normal expects all elements of std >= 0.0")
        elif not std >= 0:  # (NaN too)
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        shape = np.broadcast_shapes(np.shape(m), np.shape(sd))
        z = np.asarray(_normal(_gen(generator).next_key(), shape, dt))
        out = (z * sd + m).astype(dt)
        ins = [t for t in (mean, std) if isinstance(t, Tensor)]
        if state.enabled and any(t.requires_grad for t in ins):
            # torch's normal is recorded but not reparameterised: zero gradients for mean and std
            const = Array(out)
            return _apply("Normal", lambda *xs: _zero_grad_const(const, xs), ins)
        return _finish(out)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float): size is "
                        "required when mean and std are floats")
    if not std >= 0:  # (NaN too)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    z = randn(_size((size,)) if isinstance(size, int) else tuple(size), generator=generator, dtype=dtype)
    v = z._v
    return _finish((v * np.asarray(std, v.dtype) + np.asarray(mean, v.dtype)).astype(v.dtype), requires_grad)


def _zero_grad_const(const, xs):
    for x in xs:
        const = const + x * 0
    return const


def _check_probs(p: np.ndarray, what: str = "p_in") -> None:
    if not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError(f"Expected {what} >= 0 && {what} <= 1 to be true, but got false.")


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 0/1 with probabilities `input` (a float tensor), or with the float `p` in input's shape and dtype."""
    dt = input._np_dtype()
    if p is None:
        if dt.kind != "f":
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_legacy(dt)}'")
        probs = input._host()
        _check_probs(probs)
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        probs = np.asarray(p, np.float64)
    u = np.asarray(_uniform(_gen(generator).next_key(), input.shape, np.float64 if dt == np.float64 else
                            np.float32))
    return _finish(np.asarray(u < probs).astype(dt))


def poisson(input, generator=None):
    """Poisson counts with rates `input` (a float tensor), in input's dtype."""
    dt = input._np_dtype()
    if dt.kind != "f":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_legacy(dt)}'")
    lam = input._host()
    if np.any(lam < 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    v = _sample(_jr.poisson(_gen(generator).next_key(), lam.astype(np.float64), lam.shape))
    return _finish(v.astype(dt))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices drawn with probabilities proportional to input's rows (1-d or 2-d): with replacement
    by inverse CDF, without by the Gumbel top-k trick."""
    dt = input._np_dtype()
    if dt.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_legacy(dt)}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    p = input._host().astype(np.float64)
    two = p.ndim == 2
    p2 = p if two else p[None]
    if not replacement and num_samples > p2.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if np.any(p2 < 0) or not np.all(np.isfinite(p2)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(p2.sum(-1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    key = _gen(generator).next_key()
    rows, k = p2.shape
    if replacement:
        cdf = np.cumsum(p2, -1)
        cdf /= cdf[:, -1:]
        u = np.asarray(_jr.uniform(key, (rows, num_samples), np.float64))
        # one searchsorted over all rows: row i's cdf is shifted to [i, i + 1]
        off = np.arange(rows, dtype=np.float64)[:, None]
        r = np.searchsorted((cdf + off).ravel(), (u + off).ravel(), side="right").reshape(rows, num_samples)
        r = np.minimum(r - np.arange(rows)[:, None] * k, k - 1)
    else:
        with np.errstate(divide="ignore"):
            logits = np.log(p2)
        g = np.asarray(_jr.gumbel(key, p2.shape, np.float64))
        r = np.argsort(-(logits + g), axis=-1, kind="stable")[:, :num_samples]
    r = r.astype(np.int64)
    return _finish(np.ascontiguousarray(r if two else r[0]))


def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws (float, no gradient), from the tensor face's generator."""
    g = generator or default_generator
    seed = int(randint(0, 2 ** 31 - 1, (1,), generator=g).item())
    rng = np.random.default_rng(seed)
    n, p = np.broadcast_arrays(count._host(), prob._host())
    return _wrap(Array(rng.binomial(n.astype(np.int64), p).astype(count._np_dtype())))
