"""Keys, splitting and raw bits: JAX's two threefry layouts.

`threefry_partitionable` (JAX's `jax_threefry_partitionable`, default True as in JAX >= 0.5) picks how
split and random_bits lay counters out: the partitionable layout hashes one (hi, lo) 64-bit counter per
output element; the original one hashes the counters 0 .. n-1 in halves. fold_in and PRNGKey are the
same in both. Change it with funcgrad.config.update("jax_threefry_partitionable", flag); it is read when
a function runs or is traced, so re-jit after changing it.

A key is a uint32[2] Array (JAX's raw `PRNGKey` layout); a batch of keys is uint32[..., 2]. Every
function here is a composition of funcgrad operations around the `threefry2x32` card, so keys may be
tracers: they work under jit, vmap (over a batch of keys) and grad (keys carry no derivative).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core import options as _options
from .._src.core.array import Array, ArrayBase, to_array
from .._src.prims import elementwise as ew
from .._src.prims import shape as sh
from .._src.core.primitive import hooks as _hooks
from .._src.prims import _util as _prim_util
from .._src.prims.prng import threefry2x32

U32 = np.dtype(np.uint32)


class _Flags:
    """Settings of the PRNG, changed through funcgrad.config."""
    threefry_partitionable: bool = True


flags = _Flags()
_options.register(flags, {"jax_threefry_partitionable": "threefry_partitionable"},
                  check=lambda name, value: bool(value))
UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: U32, 64: np.dtype(np.uint64)}


# --- argument checks ------------------------------------------------------------------------------

def check_key(key, name: str):
    """key as an Array (or tracer) of uint32[2]; a clear TypeError otherwise."""
    if not isinstance(key, ArrayBase):
        try:
            key = to_array(key, copy=False)
        except TypeError:
            raise TypeError(f"{name}: expected a PRNG key (uint32[2], from funcgrad.random.PRNGKey or "
                            f"split), got {type(key).__name__}") from None
    if key.dtype != U32 or tuple(key.shape) != (2,):
        extra = (" For a batch of keys, map over them with funcgrad.vmap." if key.dtype == U32
                 and key.ndim > 1 and key.shape[-1] == 2 else "")
        raise TypeError(f"{name}: expected a PRNG key, a uint32[2] array (from funcgrad.random.PRNGKey or "
                        f"split), got {key.dtype}{list(key.shape)}.{extra}")
    return key


def canonical_shape(shape, name: str) -> tuple:
    """A static shape: a tuple of non-negative Python ints (an int n means (n,))."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of ints (static, not traced), got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name}: shape must have non-negative sizes, got {out}")
    return out


def _word(key, i: int):
    return sh.reshape(sh.slice(key, (i,), (i + 1,)), ())


def const(value, dtype, shape=()):
    """A strongly typed constant of `dtype` broadcast to `shape` (a zero-stride view of one value: no
    memory and no time however large the shape)."""
    c = sh.full((), value, np.dtype(dtype))
    return sh.broadcast_in_dim(c, tuple(shape), ()) if shape else c


# --- threefry on counters -------------------------------------------------------------------------

def threefry_2x32(key, count):
    """The Threefry-2x32 hash of a uint32 counter array under `key` (JAX's `threefry_2x32`): the
    flattened counters (padded with one zero if odd) are split into halves that form the (x1, x2)
    pairs; the two outputs, concatenated and unpadded, have count's shape."""
    n = math.prod(count.shape)
    flat = sh.reshape(count, (n,))
    odd = n % 2
    if odd:
        flat = sh.concatenate([flat, const(0, U32, (1,))], 0)
    half = (n + odd) // 2
    x1 = sh.slice(flat, (0,), (half,))
    x2 = sh.slice(flat, (half,), (2 * half,))
    k1 = sh.broadcast_in_dim(_word(key, 0), (half,), ())
    k2 = sh.broadcast_in_dim(_word(key, 1), (half,), ())
    y1, y2 = threefry2x32(k1, k2, x1, x2)
    out = sh.concatenate([y1, y2], 0)
    if odd:
        out = sh.slice(out, (0,), (n,))
    return sh.reshape(out, tuple(count.shape))


def _iota_2x32(shape: tuple, start: int = 0):
    """(hi, lo) uint32 words of the row-major element index plus `start`, each of `shape`."""
    n = math.prod(shape)
    if start + n >= 2 ** 32:
        raise NotImplementedError("random bits arrays of 2**32 or more elements are not supported")
    lo = sh.iota(U32, n)
    if start:
        lo = ew.add(lo, const(start, U32, (n,)))
    return const(0, U32, shape), sh.reshape(lo, shape)


def _threefry_elementwise(key, shape: tuple, start: int = 0):
    """The partitionable layout: threefry2x32 of one (hi, lo) counter per element of `shape` (the
    counters start .. start + size - 1: a block of a larger array, see `blockwise`)."""
    hi, lo = _iota_2x32(shape, start)
    k1 = sh.broadcast_in_dim(_word(key, 0), shape, ())
    k2 = sh.broadcast_in_dim(_word(key, 1), shape, ())
    return threefry2x32(k1, k2, hi, lo)


# --- blocked evaluation on concrete keys -------------------------------------------------------------

def _block_elements() -> int:
    """Elements per block of `blockwise`: two of the kernels' cache blocks, so the per-block dispatch
    of the sampler's dozen or so operations is paid rarely while the float64 temporaries stay in
    cache."""
    return max(1, 2 * _prim_util.BLOCK_SIZE)


def blockwise(key, shape: tuple, dtype, body, *operands):
    """The sampler `body(key, start, count, *operands)` over `shape`, computed a block at a time when
    that is possible, else in one piece.

    In the partitionable layout element i of a sample depends only on the counter i and on elementwise
    operations, so a sample of `shape` is, flattened, the concatenation of the samples of blocks of
    counters. `body(key, start, count, *operands)` returns the 1-d sample of the counters start ..
    start + count - 1 (operands: parameters that broadcast against every element, i.e. of size 1).
    With a concrete key and operands on NumPy, no eager hooks (recorders and floating-point checks see
    the whole-array operations), and more than one block of elements,
    the blocks are computed one after another into one preallocated output: every temporary of the
    chain (threefry words, mantissa bits, float64 intermediates, erf_inv's polynomials) stays in
    cache. Otherwise (tracers: jit, vmap, grad; CuPy; the original layout) it is body(key, 0, size)
    reshaped: the same operations on the whole (flattened) array."""
    n = math.prod(shape)
    step = _block_elements()
    if (n > step and flags.threefry_partitionable and not _hooks.active
            and key.__class__ is Array and key._buf.__class__ is np.ndarray
            and all(o.__class__ is Array and o._buf.__class__ is np.ndarray and o.size == 1
                    for o in operands)):
        if n >= 2 ** 32:
            raise NotImplementedError("random bits arrays of 2**32 or more elements are not supported")
        operands = tuple(sh.reshape(o, ()) for o in operands)
        out = np.empty(shape, np.dtype(dtype))
        flat = out.reshape(-1)   # (a view: out is contiguous)
        for s in range(0, n, step):
            c = min(step, n - s)
            flat[s:s + c] = body(key, s, c, *operands)._buf
        return Array(out)
    return sh.reshape(body(key, 0, n, *operands), shape)


# --- seeds ----------------------------------------------------------------------------------------

def _default_int_bits() -> int:
    """The width of the default integer: 32 with x64 off, 64 with it on (JAX's two modes)."""
    return 8 * np.dtype(dtypes.defaults.int_).itemsize


def _seed_words_concrete(seed):
    """(hi, lo) uint32 words of a concrete integer seed, as JAX makes them: a Python int is an int64
    canonicalised to the default int (so with x64 off only its low 32 bits count), a NumPy integer
    keeps its width up to the default int's; a seed of 32 bits or fewer has high word 0."""
    if isinstance(seed, (bool, int)) and not isinstance(seed, np.generic):
        s = int(seed)
        if not -2 ** 63 <= s < 2 ** 63:  # JAX converts Python ints through np.int64 first
            raise OverflowError(f"PRNGKey: seed {s} does not fit int64, the widest seed a Python int may be")
        width = 1 if isinstance(seed, bool) else 64
    else:
        arr = np.asarray(seed)
        if arr.shape:
            raise TypeError(f"PRNGKey: the seed must be a scalar, got an array of shape {arr.shape}; "
                            "use funcgrad.vmap to make a batch of keys")
        if arr.dtype.kind not in "iub":
            raise TypeError(f"PRNGKey: the seed must be an integer, got {arr.dtype}")
        width = 8 * arr.dtype.itemsize
        s = int(arr)
    width = min(width, _default_int_bits())
    v = s % 2 ** 64
    return (v >> 32 if width == 64 else 0), v % 2 ** 32


def _check_int_scalar(x, what: str, batch: str) -> None:
    """An array seed or fold_in datum is one integer (or bool): TypeError naming `what` otherwise, pointing
    at vmap (`batch` says what for) for several."""
    if x.shape:
        raise TypeError(f"{what} must be a scalar, got shape {tuple(x.shape)}; use funcgrad.vmap {batch}")
    if not (dtypes.is_integer(x.dtype) or x.dtype == dtypes.bool_):
        raise TypeError(f"{what} must be an integer, got {x.dtype}")


def _seed_key(seed):
    if isinstance(seed, ArrayBase) and not isinstance(seed, Array):  # traced
        _check_int_scalar(seed, "PRNGKey: the seed", "to make a batch of keys")
        lo = ew.convert_element_type(seed, U32)
        if np.dtype(seed.dtype).itemsize == 8 and _default_int_bits() == 64:  # the high word: >> 32
            wide = ew.convert_element_type(seed, np.dtype(np.uint64))
            hi = ew.convert_element_type(ew.div(wide, const(2 ** 32, np.uint64)), U32)
        else:
            hi = const(0, U32)
        return sh.concatenate([sh.reshape(hi, (1,)), sh.reshape(lo, (1,))], 0)
    hi, lo = _seed_words_concrete(np.asarray(seed) if isinstance(seed, ArrayBase) else seed)
    return to_array(np.array([hi, lo], dtype=U32))


def PRNGKey(seed):  # noqa: N802 - JAX's name
    """A PRNG key (uint32[2]) from an integer seed, as jax.random.PRNGKey, in both x64 modes.

    The key holds the seed's bits as (high word, low word): PRNGKey(0) is [0, 0], PRNGKey(7) is
    [0, 7]. A Python int (which must fit int64) becomes the default int, as in JAX: with x64 off
    (int32) only its low 32 bits count and the high word is 0 (PRNGKey(-1) == [0, 4294967295],
    PRNGKey(2**40 + 7) == [0, 7]); with x64 on (int64) both words are used (PRNGKey(-1) ==
    [4294967295, 4294967295], PRNGKey(2**40 + 7) == [256, 7]). A NumPy or funcgrad integer keeps its
    width up to the default int's (PRNGKey(np.int32(-1)) == [0, 4294967295] in both modes). The seed
    may be traced (under jit / vmap).

    Keys are values: a sampler given the same key returns the same numbers. Derive new keys with
    `split` or `fold_in` and never reuse a key for two draws that should be independent.

    Examples:
        >>> from funcgrad import random
        >>> random.PRNGKey(0)
        Array([0, 0], dtype=uint32)
    """
    return _seed_key(seed)


def key(seed, *, impl=None):
    """A PRNG key from an integer seed. funcgrad has no typed key arrays: this returns the same raw
    uint32[2] array as PRNGKey(seed) (what jax.random.key_data(jax.random.key(seed)) holds), and every
    function accepts it where JAX takes a typed key. Only impl=None or "threefry2x32" is supported.

    Differences from JAX:
        JAX returns a typed key array (dtype `key<fry>`, shape `()`); funcgrad returns its data,
        `uint32[2]`, so `key(0)` prints as `PRNGKey(0)` does. Code that calls `random.key_data(k)`
        works unchanged.

    Examples:
        >>> from funcgrad import random
        >>> random.key_data(random.key(0))
        Array([0, 0], dtype=uint32)
    """
    if impl not in (None, "threefry2x32", "threefry"):
        raise ValueError(f"key: only the threefry2x32 implementation exists, got impl={impl!r}")
    return _seed_key(seed)


def key_data(keys):
    """The uint32 data of a key or a batch of keys (..., 2): the keys themselves (raw keys)."""
    if not isinstance(keys, ArrayBase):
        keys = to_array(keys, copy=False)
    if keys.dtype != U32 or keys.ndim < 1 or keys.shape[-1] != 2:
        raise TypeError(f"key_data: expected uint32 keys of shape (..., 2), got {keys.dtype}{list(keys.shape)}")
    return keys


def wrap_key_data(key_bits_array, *, impl=None):
    """The inverse of key_data: uint32 data of shape (..., 2) used as keys."""
    if impl not in (None, "threefry2x32", "threefry"):
        raise ValueError(f"wrap_key_data: only the threefry2x32 implementation exists, got impl={impl!r}")
    return key_data(key_bits_array)


def key_impl(keys) -> str:
    """The name of the PRNG implementation: always "threefry2x32"."""
    key_data(keys)
    return "threefry2x32"


def clone(key):
    """key itself (keys are immutable values; JAX's clone exists for its stateful-key experiments)."""
    return check_key(key, "clone")


# --- split and fold_in ----------------------------------------------------------------------------

def split(key, num=2):
    """`num` new keys from `key` (num an int or a shape tuple): uint32[*num, 2], as jax.random.split
    (partitionable: the two threefry words of each key's index; original: threefry of the counters
    0 .. 2*prod(num)-1).

    Args:
        key: the key to split (it should not be used again afterwards).
        num: how many keys: an int, or a shape tuple.

    Returns:
        The new keys, `uint32[*num, 2]`, bit for bit JAX's (in either `jax_threefry_partitionable` mode).

    Examples:
        >>> from funcgrad import random
        >>> key, subkey = random.split(random.PRNGKey(0))
        >>> subkey
        Array([ 928981903, 3453687069], dtype=uint32)
    """
    key = check_key(key, "split")
    shape = canonical_shape(num, "split")
    if flags.threefry_partitionable:
        y1, y2 = _threefry_elementwise(key, shape)
        return sh.concatenate([sh.reshape(y1, shape + (1,)), sh.reshape(y2, shape + (1,))], len(shape))
    n = math.prod(shape)
    bits = threefry_2x32(key, sh.iota(U32, 2 * n))
    return sh.reshape(bits, shape + (2,))


def split2(key):
    k = split(key, 2)
    return sh.reshape(sh.slice(k, (0, 0), (1, 2)), (2,)), sh.reshape(sh.slice(k, (1, 0), (2, 2)), (2,))


def fold_in(key, data):
    """A new key from `key` and a 32-bit integer, as jax.random.fold_in: threefry of the counters
    (0, data). A Python int must lie in [0, 2**32) (OverflowError otherwise, as in JAX); NumPy and
    funcgrad integers are taken modulo 2**32.

    Use it to derive a key per step, per example or per process (`fold_in(key, step)`) without
    threading split keys through a loop.

    Examples:
        >>> from funcgrad import random
        >>> random.fold_in(random.PRNGKey(0), 1)
        Array([ 928981903, 3453687069], dtype=uint32)
    """
    key = check_key(key, "fold_in")
    if isinstance(data, ArrayBase):
        _check_int_scalar(data, "fold_in: data", "for a batch")
        word = ew.convert_element_type(data, U32)
    elif isinstance(data, (bool, int)) and not isinstance(data, np.generic):
        if not 0 <= data < 2 ** 32:  # JAX converts it with jnp.asarray(data, dtype=uint32)
            raise OverflowError(f"fold_in: Python integer {data} out of bounds for uint32; fold in "
                                f"data % 2**32 or a NumPy integer (which wraps)")
        word = const(int(data), U32)
    else:
        arr = np.asarray(data)
        if arr.shape or arr.dtype.kind not in "iubf":
            raise TypeError(f"fold_in: data must be an integer scalar, got {data!r}")
        # NumPy integers wrap modulo 2**32 and floats truncate, as JAX's conversion to uint32 does.
        word = ew.convert_element_type(to_array(arr), U32)
    counts = sh.concatenate([const(0, U32, (1,)), sh.reshape(word, (1,))], 0)
    return threefry_2x32(key, counts)


# --- raw bits -------------------------------------------------------------------------------------

def _mod_pow2(x, bits: int):
    """x mod 2**bits for unsigned x (bits < x's width)."""
    m = const(2 ** bits, x.dtype, x.shape)
    return ew.sub(x, ew.mul(ew.div(x, m), m))


def _partitionable_bits(key, start: int, count: int, bit_width: int):
    """Elements start .. start + count - 1 of the flattened partitionable random_bits (1-d)."""
    shape = (count,)
    dtype = UINT_DTYPES[bit_width]
    y1, y2 = _threefry_elementwise(key, shape, start)
    if bit_width == 64:
        hi, lo = ew.convert_element_type(y1, dtype), ew.convert_element_type(y2, dtype)
        return ew.add(ew.mul(hi, const(2 ** 32, dtype, shape)), lo)
    mixed = ew.bitwise_xor(y1, y2)
    if bit_width == 32:
        return mixed
    return ew.convert_element_type(_mod_pow2(mixed, bit_width), dtype)


def random_bits(key, bit_width: int, shape):
    """Uniform random unsigned integers of `bit_width` bits (8, 16, 32, 64) and `shape`, laid out as
    JAX's threefry `random_bits`. Partitionable: each element hashes its own index; 64-bit values
    join the two words (high, low), narrower ones keep the low bits of their xor. Original: threefry of
    the counters 0 .. ceil(bits/32)-1; 64-bit values join the first half of the words (high) with the
    second half (low); 8/16-bit values are the little-endian pieces of the words."""
    key = check_key(key, "random_bits")
    if bit_width not in UINT_DTYPES:
        raise TypeError(f"random_bits: bit_width must be 8, 16, 32 or 64, got {bit_width!r}")
    shape = canonical_shape(shape, "random_bits")
    if flags.threefry_partitionable:
        return blockwise(key, shape, UINT_DTYPES[bit_width],
                         lambda k, start, count: _partitionable_bits(k, start, count, bit_width))
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    if max_count >= 2 ** 32 - 1:
        raise NotImplementedError("random_bits: more than 2**32 - 2 words of random bits in one call")
    bits = threefry_2x32(key, sh.iota(U32, max_count))
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi = ew.convert_element_type(sh.slice(bits, (0,), (size,)), dtype)
        lo = ew.convert_element_type(sh.slice(bits, (size,), (2 * size,)), dtype)
        bits = ew.add(ew.mul(hi, const(2 ** 32, dtype, (size,))), lo)
    elif bit_width < 32:
        per_word = 32 // bit_width
        pieces = []
        for j in range(per_word):  # piece j of word w is (w >> (bit_width * j)) & mask
            shifted = ew.div(bits, const(2 ** (bit_width * j), U32, (max_count,))) if j else bits
            pieces.append(sh.reshape(_mod_pow2(shifted, bit_width), (max_count, 1)))
        bits = sh.reshape(sh.concatenate(pieces, 1), (max_count * per_word,))
        bits = ew.convert_element_type(sh.slice(bits, (0,), (size,)), dtype)
    return sh.reshape(bits, shape)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers of `dtype`, as jax.random.bits: the default is the
    unsigned integer of the default int's width (uint32 with x64 off, uint64 with it on)."""
    dtype = UINT_DTYPES[_default_int_bits()] if dtype is None else np.dtype(dtypes.canonicalize(dtype))
    if dtype.kind != "u":
        raise ValueError(f"bits: dtype must be an unsigned integer dtype, got {dtype}")
    return random_bits(key, dtype.itemsize * 8, shape)
