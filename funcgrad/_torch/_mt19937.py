"""torch's CPU random numbers, bit for bit: the Mersenne Twister engine of torch.Generator (seeded from a
64-bit seed as ATen's mt19937 is, its state the 5056-byte tensor of get_rng_state) and the transforms ATen's
CPU kernels apply to its 32-bit words (uniform_, normal_ with its Box-Muller scalar and 16-wide vectorised
paths, random_, bernoulli_, exponential_, randperm, multinomial, ...).

The words come from NumPy's MT19937 bit generator, given the same key state (the standard generator: the
same 32-bit stream). The transforms are NumPy reproductions of ATen's arithmetic, including the fused
multiply-adds its compiled kernels use (`_fma32`, `_fma64`) and, for float32 normals of 16 or more
elements, the Cephes-style log/sincos polynomials of its AVX2 kernel. Where ATen calls the C library's
double-precision log/log1p/sin/cos/tan/exp, float64 results are computed with Python's math module (the
same C library); results of narrower dtypes use NumPy's and recompute the rare elements that lie at a
rounding tie of the narrower dtype."""
from __future__ import annotations

import math

import numpy as np

N = 624
STATE_BYTES = 5056
DEFAULT_SEED = 67280421310721
_M53 = np.uint64((1 << 53) - 1)
_F64, _F32 = np.dtype(np.float64), np.dtype(np.float32)
_TWO_PI = 2.0 * math.pi
# randperm switches to the 64-bit inside-out shuffle from this n on (ATen: uint32 max / 20)
RANDPERM_SMALL = 0xFFFFFFFF // 20

# get_rng_state's layout: ATen's CPUGeneratorImplState (THGeneratorState, then the float normal cache)
_STATE_DT = np.dtype({
    "names": ["seed", "left", "seeded", "next", "state", "normal_x", "normal_y", "normal_rho", "normal_valid",
              "float_normal", "float_normal_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", (N,)), "<f8", "<f8", "<f8", "<i4", "<f4", "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": STATE_BYTES})


def _init_genrand(seed32: int) -> np.ndarray:
    """The 624-word state of mt19937 seeded with a 32-bit seed (Knuth's multiplier 1812433253)."""
    key = [seed32]
    x = seed32
    for j in range(1, N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
        key.append(x)
    return np.array(key, np.uint32)


class Engine:
    """The state of one torch CPU generator: the mt19937 words (held by a NumPy MT19937 bit generator), the
    64-bit seed it was made from, and the cached second Box-Muller normals (double and float)."""
    __slots__ = ("bg", "seed", "fresh", "next_double", "next_float")

    def __init__(self, seed: int = DEFAULT_SEED):
        self.bg = np.random.MT19937(0)
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> None:
        """ATen's mt19937(seed): the low 32 bits seed the words; initial_seed() keeps all 64."""
        self.seed = seed & 0xFFFFFFFFFFFFFFFF
        self.bg.state = {"bit_generator": "MT19937", "state": {"key": _init_genrand(seed & 0xFFFFFFFF),
                                                               "pos": N}}
        self.fresh = True     # (left_ = 1, next_ = 0: the words are twisted before the first output)
        self.next_double = None
        self.next_float = None

    # --- raw words --------------------------------------------------------------------------------------
    def words(self, n: int) -> np.ndarray:
        """The next n 32-bit outputs (random()), as uint64."""
        if n <= 0:
            return np.zeros(0, np.uint64)
        self.fresh = False
        return self.bg.random_raw(n)

    def words64(self, n: int) -> np.ndarray:
        """The next n random64() values: two words each, the first the high half."""
        w = self.words(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def random(self) -> int:
        return int(self.words(1)[0])

    # --- state bytes --------------------------------------------------------------------------------------
    def get_state(self) -> np.ndarray:
        st = self.bg.state["state"]
        s = np.zeros((), _STATE_DT)
        s["seed"] = self.seed
        pos = int(st["pos"])
        s["left"] = N + 1 - pos
        s["seeded"] = 1
        s["next"] = 0 if self.fresh else pos
        s["state"] = st["key"].astype(np.uint64)
        if self.next_double is not None:
            s["normal_valid"] = 1
            s["normal_y"] = self.next_double
        if self.next_float is not None:
            s["float_normal_valid"] = 1
            s["float_normal"] = self.next_float
        return np.frombuffer(s.tobytes(), np.uint8).copy()

    def set_state(self, b: bytes) -> None:
        if len(b) != STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG "
                               f"state size to be {len(b)}")
        s = np.frombuffer(b, _STATE_DT)[0]
        left, nxt, seeded = int(s["left"]), int(s["next"]), int(s["seeded"])
        if not (seeded and 0 < left <= N and nxt <= N):
            raise RuntimeError("Invalid mt19937 state")
        if left != 1 and left + nxt != N + 1:
            # (ATen reads words next.. for left - 1 draws before twisting; torch never writes such a state)
            raise RuntimeError(f"Invalid mt19937 state: left={left} and next={nxt} are not a position of the "
                               "stream torch's get_rng_state produces")
        key = (s["state"] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        self.bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": N + 1 - left}}
        self.seed = int(s["seed"])
        self.fresh = left == 1 and nxt == 0
        self.next_double = float(s["normal_y"]) if int(s["normal_valid"]) else None
        self.next_float = float(s["float_normal"]) if int(s["float_normal_valid"]) else None


# --- exact arithmetic helpers --------------------------------------------------------------------------------

def _split(a):
    t = a * 134217729.0      # 2**27 + 1: Veltkamp's split into two 26-bit halves
    hi = t - (t - a)
    return hi, a - hi


def _fma64(a, b, c):
    """a*b + c with one rounding, for float64 (the FMA instructions ATen's kernels compile to), by Dekker's
    exact product and Knuth's exact sum."""
    a, b, c = np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def _round32(s, p, c):
    """float32 of the exact p + c (p, c float64, p + c = s rounded to float64): s rounded to float32, with a
    sum that float64 rounded onto a float32 tie moved off it towards the exact value (no double rounding)."""
    lo = s.view(np.uint32)[..., 0::2] if s.ndim else s.reshape(1).view(np.uint32)[0::2]   # (little-endian low words)
    tie = (lo & np.uint32(0x1FFFFFFF)) == np.uint32(0x10000000)
    if tie.any():
        tie = tie.reshape(s.shape)
        bb = s - p
        err = (p - (s - bb)) + (c - bb)
        fix = tie & (err != 0)
        if fix.any():
            s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(_F32)


def _fma32(a, b, c):
    """a*b + c with one rounding in float32 (the float64 product of two floats is exact)."""
    p = np.asarray(a, _F64) * np.asarray(b, _F64)
    c = np.asarray(c, _F64)
    return _round32(p + c, p, c)


def _near_tie(y: np.ndarray, dt) -> np.ndarray:
    """Where a float64 y is within 4 units of its last place of a rounding tie of dtype dt (float32 or half,
    reached through float32 as c10::Half is): there NumPy's and the C library's double functions, which can
    differ in the last place, may round to different values of dt."""
    bits = 29 if dt == _F32 else 42
    low = (y.view(np.uint64) & np.uint64((1 << bits) - 1)).astype(np.int64)
    return np.abs(low - (1 << (bits - 1))) <= 4


def _libm(vec, scalar, x: np.ndarray, dt) -> np.ndarray:
    """f(x) in float64 as the C library computes it, for a result of dtype dt: vec (NumPy) with the elements
    at a tie of dt recomputed by scalar (Python's math), or scalar everywhere for float64 results."""
    if dt == _F64 or x.size == 0:
        return np.fromiter((scalar(v) for v in x.ravel().tolist()), _F64, x.size).reshape(x.shape)
    y = vec(x)
    near = _near_tie(y, _F32)
    if near.any():
        y[near] = [scalar(v) for v in x[near].tolist()]
    return y


def to_dtype(v: np.ndarray, dt) -> np.ndarray:
    """ATen's static_cast of a float or double value to dt (c10::Half and BFloat16 convert through float)."""
    dt = np.dtype(dt)
    if v.dtype == dt:
        return v
    if dt.kind == "f" and dt.itemsize < 4 or dt.name == "bfloat16":
        return v.astype(_F32).astype(dt)
    return v.astype(dt)


def _digits(dt) -> int:
    dt = np.dtype(dt)
    if dt.name == "bfloat16":
        return 8
    return {8: 53, 4: 24, 2: 11}[dt.itemsize]


# --- uniform -------------------------------------------------------------------------------------------------

def unit(eng: Engine, n: int, dt) -> np.ndarray:
    """uniform_real_distribution(0, 1): the low `digits` bits of one draw (a random64 for double) times
    2**-digits; float64 for double, float32 for the other dtypes (which draw as float)."""
    if np.dtype(dt) == _F64:
        return (eng.words64(n) & _M53).astype(_F64) * (2.0 ** -53)
    return (eng.words(n) & np.uint64(0xFFFFFF)).astype(_F32) * np.float32(2.0 ** -24)


def uniform_real(eng: Engine, n: int, a: float, b: float) -> np.ndarray:
    """n draws of uniform_real_distribution<double>(a, b) as ATen's per-element callers make them (rrelu's slopes):
    x * (b - a) + a in double, not fused, with no remapping of b."""
    return unit(eng, n, _F64) * (b - a) + a


def uniform(eng: Engine, n: int, dt, a: float = 0.0, b: float = 1.0) -> np.ndarray:
    """uniform_(a, b) of n elements of float dtype dt: x * (to - from) + from, fused, in double for float64 and
    in float otherwise (half and bfloat16 round the float result); a value that rounds to `to` becomes
    `from`, keeping [from, to)."""
    dt = np.dtype(dt)
    x = unit(eng, n, dt)
    if dt == _F64:
        v = x if (a, b) == (0.0, 1.0) else _fma64(x, b - a, a)
    else:
        fa, fb = np.float32(a), np.float32(b)
        v = x if (a, b) == (0.0, 1.0) else _fma32(x, np.float32(fb - fa), fa)
        v = to_dtype(v, dt)
    top = np.array(b, _F64 if dt == _F64 else _F32)
    top = to_dtype(top, dt)
    hit = v == top
    if hit.any():
        v[hit] = to_dtype(np.array(a, _F64 if dt == _F64 else _F32), dt)
    return v


# --- normal --------------------------------------------------------------------------------------------------

def _box_muller_pairs(eng: Engine, m: int):
    """m pairs of ATen's scalar Box-Muller (normal_distribution<double>): u1, u2 from random64; r =
    sqrt(-2 log1p(-u2)), theta = 2 pi u1; r cos(theta) is used first, r sin(theta) cached."""
    u = unit(eng, 2 * m, _F64)
    u1, u2 = u[0::2].tolist(), u[1::2].tolist()
    cos, sin, sqrt, log1p = math.cos, math.sin, math.sqrt, math.log1p
    first, second = [], []
    for a, b in zip(u1, u2):
        r = sqrt(-2.0 * log1p(-b))
        th = _TWO_PI * a
        first.append(r * cos(th))
        second.append(r * sin(th))
    return np.array(first, _F64), np.array(second, _F64)


def standard_normal_scalar(eng: Engine, n: int) -> np.ndarray:
    """n draws of normal_distribution<double>(0, 1) one at a time, using and refilling the generator's cached
    second normal (so a call continues where the last one left off)."""
    out = np.empty(n, _F64)
    i = 0
    if n and eng.next_double is not None:
        out[0] = eng.next_double
        eng.next_double = None
        i = 1
    m = (n - i + 1) // 2
    if m:
        c, s = _box_muller_pairs(eng, m)
        rest = np.empty(2 * m, _F64)
        rest[0::2], rest[1::2] = c, s
        out[i:] = rest[:n - i]
        if (n - i) % 2:
            eng.next_double = float(s[-1])
    return out


def normal_scalar(eng: Engine, n: int, dt, mean: float, std: float) -> np.ndarray:
    """normal_ of n elements one at a time (fewer than 16, or not contiguous): z * std + mean, fused, in double."""
    z = standard_normal_scalar(eng, n)
    return to_dtype(_fma64(z, std, mean), dt)


_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)
_f = np.float32


def _poly32(y, x64, coeffs):
    """Horner steps y = fma(y, x, c) in float32."""
    for c in coeffs:
        c64 = np.float64(_f(c))
        p = y.astype(_F64) * x64
        y = _round32(p + c64, p, c64)
    return y


def _log_avx(x):
    """The log of x > 0 as the AVX2 kernel's Cephes polynomial computes it (float32, fused multiply-adds)."""
    bits = np.maximum(x, _f(1.1754943508222875e-38)).view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _f(1)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F32)      # the mantissa in [0.5, 1)
    small = m < _f(0.707106781186547524)
    x = (m - _f(1)) + np.where(small, m, _f(0))
    e = e - np.where(small, _f(1), _f(0))
    x64 = x.astype(_F64)
    z = x * x
    y = _poly32(np.full_like(x, _f(_LOG_P[0])), x64, _LOG_P[1:])
    y = y * x
    q1 = np.float64(_f(-2.12194440e-4))
    c = e.astype(_F64) * q1        # (e * q1 rounded, then fused into y * z + e * q1)
    c = c.astype(_F32).astype(_F64)
    p = y.astype(_F64) * z.astype(_F64)
    y = _round32(p + c, p, c)
    y = y - z * _f(0.5)
    return (x + y) + e * _f(0.693359375)


_DP = (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)


def _sincos_avx(x):
    """sin and cos of 0 <= x < 2 pi as the AVX2 kernel's Cephes polynomials compute them (float32, fused)."""
    j = (x * _f(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y64 = j.astype(_F32).astype(_F64)
    for dp in _DP:
        p = y64 * np.float64(_f(dp))
        c = x.astype(_F64)
        x = _round32(p + c, p, c)
    sin_neg = (j & 4) != 0
    cos_neg = (~(j - 2) & 4) != 0
    use_sin_poly = (j & 2) == 0
    z = x * x
    z64 = z.astype(_F64)
    yc = _poly32(np.full_like(x, _f(2.443315711809948E-005)), z64, (-1.388731625493765E-003,
                                                                   4.166664568298827E-002))
    yc = yc * z
    p = yc.astype(_F64) * z64
    c = -(z * _f(0.5)).astype(_F64)
    yc = _round32(p + c, p, c) + _f(1)
    ys = _poly32(np.full_like(x, _f(-1.9515295891E-4)), z64, (8.3321608736E-3, -1.6666654611E-1))
    ys = ys * z
    p = ys.astype(_F64) * x.astype(_F64)
    c = x.astype(_F64)
    ys = _round32(p + c, p, c)
    s = np.where(use_sin_poly, ys, yc)
    co = np.where(use_sin_poly, yc, ys)
    return np.where(sin_neg, -s, s), np.where(cos_neg, -co, co)


def _fill16_f32(u: np.ndarray, mean, std) -> np.ndarray:
    """normal_fill_16_AVX2 over rows of 16 uniforms: Box-Muller of (1 - u[:8], u[8:])."""
    u = u.reshape(-1, 16)
    r = np.sqrt(_f(-2) * _log_avx(_f(1) - u[:, :8]))
    s, c = _sincos_avx(_f(2.0 * math.pi) * u[:, 8:])
    out = np.empty(u.shape, _F32)
    out[:, :8] = _fma32(r * c, _f(std), _f(mean))
    out[:, 8:] = _fma32(r * s, _f(std), _f(mean))
    return out.ravel()


def _fill16_f64(u: np.ndarray, mean, std) -> np.ndarray:
    """normal_fill_16<double>: the C library's log, cos and sin; (r cos) * std + mean fused."""
    u = u.reshape(-1, 16)
    u1 = (1.0 - u[:, :8]).ravel().tolist()
    th = (_TWO_PI * u[:, 8:]).ravel().tolist()
    sqrt, log, cos, sin = math.sqrt, math.log, math.cos, math.sin
    rs = [sqrt(-2.0 * log(v)) for v in u1]
    c = np.array([r * cos(t) for r, t in zip(rs, th)], _F64).reshape(-1, 8)
    s = np.array([r * sin(t) for r, t in zip(rs, th)], _F64).reshape(-1, 8)
    out = np.empty(u.shape, _F64)
    out[:, :8] = _fma64(c, std, mean)
    out[:, 8:] = _fma64(s, std, mean)
    return out.ravel()


def normal(eng: Engine, n: int, dt, mean: float = 0.0, std: float = 1.0, contiguous: bool = True) -> np.ndarray:
    """normal_(mean, std) of n elements of float dtype dt, by the path ATen takes: 16 or more contiguous
    elements are filled with uniforms first and transformed 16 at a time (the last 16 redrawn when n is
    not a multiple of 16); fewer, or a strided tensor, draw one scalar Box-Muller normal each."""
    dt = np.dtype(dt)
    if n < 16 or not contiguous:
        return normal_scalar(eng, n, dt, mean, std)
    m = n - n % 16
    if dt == _F64:
        out = _fill16_f64(unit(eng, n, dt)[:m], mean, std)   # (n uniforms, then the last 16 redrawn)
        tail = _fill16_f64(unit(eng, 16, dt), mean, std) if n % 16 else None
    elif dt == _F32:
        out = _fill16_f32(unit(eng, n, dt)[:m], mean, std)
        tail = _fill16_f32(unit(eng, 16, dt), mean, std) if n % 16 else None
    else:   # half and bfloat16: a float buffer of whole blocks of 16, the last one placed at the end
        u = unit(eng, m + (16 if n % 16 else 0), _F32)
        out = _fill16_f32(u[:m], mean, std)
        tail = _fill16_f32(u[m:], mean, std) if n % 16 else None
    if tail is not None:
        out = np.concatenate([out[:n - 16], tail])
    return to_dtype(out, dt)


# --- integers ------------------------------------------------------------------------------------------------

def random_from_to(eng: Engine, n: int, dt, low: int, high: int) -> np.ndarray:
    """random_(from, to): (v % (to - from)) + from, v a random64 when the range needs it (int64, double,
    float, bfloat16 and a range of 2**32 or more) and a random() otherwise."""
    dt = np.dtype(dt)
    span = (high - low) & 0xFFFFFFFFFFFFFFFF
    wide = span >= 1 << 32 and (dt in (np.dtype(np.int64), _F64, _F32) or dt.name == "bfloat16")
    v = eng.words64(n) if wide else eng.words(n)
    v = (v % np.uint64(span)) + np.uint64(low & 0xFFFFFFFFFFFFFFFF)
    return _cast_int64(v.view(np.int64), dt)


def random_full(eng: Engine, n: int, dt) -> np.ndarray:
    """random_(from=int64 min, to=None): a random64 reinterpreted as int64."""
    return _cast_int64(eng.words64(n).view(np.int64), dt)


def random_default(eng: Engine, n: int, dt) -> np.ndarray:
    """random_() without bounds: [0, max] for integer dtypes, [0, 2**digits] for floating ones."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return (eng.words(n) & np.uint64(1)).astype(bool)
    if dt in (np.dtype(np.int64), _F64):
        v = eng.words64(n)
    else:
        v = eng.words(n)
    if dt.kind in "iu":
        mod = int(np.iinfo(dt).max) + 1
    else:
        mod = (1 << _digits(dt)) + 1
    return _cast_int64((v % np.uint64(mod)).view(np.int64), dt)


def _cast_int64(v: np.ndarray, dt) -> np.ndarray:
    dt = np.dtype(dt)
    if dt.kind == "f" or dt.name == "bfloat16":
        return to_dtype(v.astype(_F32) if dt != _F64 else v.astype(_F64), dt)
    return v.astype(dt)


def randperm(eng: Engine, n: int) -> np.ndarray:
    """randperm(n): a Fisher-Yates shuffle of 0..n-1 swapping i with i + random() % (n - i); from n =
    RANDPERM_SMALL on, the inside-out shuffle with random64() % (i + 1)."""
    if n < RANDPERM_SMALL:
        r = list(range(n))
        z = eng.words(n - 1) % np.arange(n, 1, -1, dtype=np.uint64) if n > 1 else np.zeros(0, np.uint64)
        for i, k in enumerate(z.tolist()):
            j = i + k
            r[i], r[j] = r[j], r[i]
        return np.array(r, np.int64)
    r = np.empty(n, np.int64)
    z = eng.words64(n) % np.arange(1, n + 1, dtype=np.uint64)
    for i, k in enumerate(z.tolist()):
        r[i] = r[k]
        r[k] = i
    return r


# --- bernoulli, exponential and friends ----------------------------------------------------------------------

def bernoulli_scalar(eng: Engine, n: int, p: float) -> np.ndarray:
    """bernoulli_(p) with a float p: u < p for u a uniform double (53 bits of a random64), as booleans."""
    k = eng.words64(n) & _M53
    return k < np.uint64(math.ceil(p * 2.0 ** 53))


def bernoulli_tensor(eng: Engine, p: np.ndarray) -> np.ndarray:
    """bernoulli_(p) with a tensor p (already broadcast, in memory order): a double uniform per element for a
    float64 p, a float (24-bit) one otherwise."""
    if p.dtype == _F64:
        return unit(eng, p.size, _F64).reshape(p.shape) < p
    return unit(eng, p.size, _F32).reshape(p.shape) < p.astype(_F32)


def exponential(eng: Engine, n: int, dt, lambd: float = 1.0) -> np.ndarray:
    """exponential_(lambd): -1/lambd * log1p(-u) in double, u a uniform double."""
    dt = np.dtype(dt)
    u = unit(eng, n, _F64)
    k = -1.0 / lambd
    y = _libm(lambda x: k * np.log1p(-x), lambda x: k * math.log1p(-x), u, dt)
    return to_dtype(y, dt)


def cauchy(eng: Engine, n: int, dt, median: float, sigma: float) -> np.ndarray:
    """cauchy_(median, sigma): median + sigma * tan(pi (u - 0.5)), fused, in double."""
    dt = np.dtype(dt)
    u = unit(eng, n, _F64)
    t = _libm(lambda x: np.tan(math.pi * (x - 0.5)), lambda x: math.tan(math.pi * (x - 0.5)), u,
              _F64 if dt == _F64 else _F32)
    return to_dtype(_fma64(sigma, t, median), dt)


def log_normal(eng: Engine, n: int, dt, mean: float, std: float) -> np.ndarray:
    """log_normal_(mean, std): exp of scalar Box-Muller normals (mean, std) in double."""
    dt = np.dtype(dt)
    z = _fma64(standard_normal_scalar(eng, n), std, mean)
    return to_dtype(_libm(np.exp, math.exp, z, dt), dt)


def geometric(eng: Engine, n: int, dt, p: float) -> np.ndarray:
    """geometric_(p): ceil(log(u) / log(1 - p)) in double."""
    u = unit(eng, n, _F64)
    lq = math.log(1.0 - p)
    v = np.fromiter((math.ceil(math.log(x) / lq) if x > 0 else math.inf for x in u.tolist()), _F64, n)
    return _cast_float(v, dt)


def _cast_float(v, dt):
    dt = np.dtype(dt)
    if dt.kind in "iub":
        with np.errstate(invalid="ignore", over="ignore"):
            return v.astype(np.int64).astype(dt)
    return to_dtype(v, dt)


def multinomial(eng: Engine, p: np.ndarray, n_sample: int, replacement: bool) -> np.ndarray:
    """multinomial of a 2-d (rows, categories) probability array: without replacement (or one sample), the
    top n_sample of p / q with q ~ exponential_(1) in p's dtype; with replacement, a binary search of a
    double uniform in each row's normalised cumulative sums (accumulated in p's dtype, float for half)."""
    rows, k = p.shape
    if not replacement or n_sample == 1:
        q = exponential(eng, rows * k, p.dtype, 1.0).reshape(rows, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = p / q
        if n_sample == 1:
            return np.argmax(r, axis=-1)[:, None].astype(np.int64)
        return np.argsort(-r, axis=-1, kind="stable")[:, :n_sample].astype(np.int64)
    acc = p.dtype if p.dtype in (_F32, _F64) else _F32
    cum = np.cumsum(p.astype(acc), axis=-1, dtype=acc)
    cum = cum / cum[:, -1:]
    cum[:, -1] = 1
    u = unit(eng, rows * n_sample, _F64).reshape(rows, n_sample)
    out = np.empty((rows, n_sample), np.int64)
    for i in range(rows):
        out[i] = np.searchsorted(cum[i].astype(_F64), u[i], side="left")
    return out


# --- serial samplers (ATen's Distributions.h / Distributions.cpp, one element at a time) ----------------------

class _Serial:
    """The generator as ATen's cpu_serial_kernel samplers use it: one uniform_real_distribution<double> or
    normal_distribution<double> draw at a time, in element order. The words are fetched in blocks and the
    unused ones given back by `close` (the state is rewound and advanced by the number used)."""
    __slots__ = ("eng", "saved", "fresh", "buf", "pos", "used")

    def __init__(self, eng: Engine):
        self.eng, self.saved, self.fresh = eng, eng.bg.state, eng.fresh
        self.buf, self.pos, self.used = [], 0, 0

    def uniform(self) -> float:
        """uniform_real_distribution<double>(0, 1): 53 bits of one random64."""
        if self.pos + 2 > len(self.buf):
            self.buf = self.buf[self.pos:] + self.eng.words(max(1024, 4 * self.used)).tolist()
            self.pos = 0
        hi, lo = self.buf[self.pos], self.buf[self.pos + 1]
        self.pos += 2
        self.used += 2
        return (((hi << 32) | lo) & 0x1FFFFFFFFFFFFF) * 1.1102230246251565e-16

    def normal(self) -> float:
        """normal_distribution<double>(0, 1): the generator's cached second normal, else a Box-Muller pair
        (r cos theta returned, r sin theta cached)."""
        eng = self.eng
        if eng.next_double is not None:
            z, eng.next_double = eng.next_double, None
            return z
        u1 = self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        th = _TWO_PI * u1
        eng.next_double = r * math.sin(th)
        return r * math.cos(th)

    def close(self) -> None:
        eng = self.eng
        eng.bg.state = self.saved
        eng.fresh = self.fresh
        if self.used:
            eng.words(self.used)


_THIRD_F = float(np.float32(1.0) / np.float32(3.0))      # 1.0f / 3.0f
_C331_F = float(np.float32(0.0331))


def _gamma_one(s: _Serial, alpha: float, single: bool) -> float:
    """sample_gamma<scalar_t, double>: Marsaglia and Tsang's method with alpha < 1 boosted by u**(1/alpha);
    `single`: scalar_t is float (alpha's own arithmetic in float, as ATen's)."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = float(np.float32(1.0) / np.float32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1.0 - s.uniform(), inv)
        alpha = float(np.float32(alpha) + np.float32(1.0)) if single else alpha + 1.0
    d = float(np.float32(alpha) - np.float32(_THIRD_F)) if single else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    log = math.log
    while True:
        while True:
            x = s.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - s.uniform()
        xx = x * x
        if u < 1.0 - _C331_F * xx * xx:
            return scale * d * v
        if log(u) < 0.5 * xx + d * (1.0 - v + log(v)):
            return scale * d * v


def standard_gamma(eng: Engine, alpha: np.ndarray) -> np.ndarray:
    """torch._standard_gamma of a contiguous float array (float32 or float64), element by element; each sample
    is at least the dtype's smallest normal number."""
    dt = alpha.dtype
    single = dt != _F64
    s = _Serial(eng)
    try:
        out = np.array([_gamma_one(s, a, single) for a in alpha.ravel().tolist()], _F64)
    finally:
        s.close()
    out = out.astype(dt)
    return np.maximum(out, np.finfo(dt).tiny).reshape(alpha.shape)


def dirichlet(eng: Engine, alpha: np.ndarray, with_gammas: bool = False):
    """torch._sample_dirichlet: double gamma samples (at least DBL_MIN) over the whole array, each divided by
    its row's (last axis) sum and clamped to [tiny, nextafter(1, 0)] of alpha's dtype (with_gammas: also the
    gamma samples, in alpha's dtype)."""
    dt = alpha.dtype
    s = _Serial(eng)
    try:
        g = np.array([_gamma_one(s, a, False) for a in alpha.astype(_F64).ravel().tolist()], _F64)
    finally:
        s.close()
    g = np.maximum(g, np.finfo(_F64).tiny).reshape(alpha.shape)
    r = (g / g.sum(-1, keepdims=True)).astype(dt)
    r = np.clip(r, np.finfo(dt).tiny, np.nextafter(dt.type(1), dt.type(0)))
    return (r, g.astype(dt)) if with_gammas else r


def _poisson_one(s: _Serial, lam: float) -> int:
    """sample_poisson: Hoermann's transformed rejection for lambda >= 10, else multiplication of uniforms."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = s.uniform() - 0.5
            V = s.uniform()
            us = 0.5 - abs(U)
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1.0):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x, prod = 0, 1.0
    while True:
        prod *= s.uniform()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(eng: Engine, lam: np.ndarray) -> np.ndarray:
    """torch.poisson of a contiguous float array, element by element (lambda in double)."""
    s = _Serial(eng)
    try:
        out = [_poisson_one(s, v) for v in lam.astype(_F64).ravel().tolist()]
    finally:
        s.close()
    return np.array(out, _F64).astype(lam.dtype).reshape(lam.shape)


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
         0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(s: _Serial, count, prob, T) -> float:
    logprob = float(np.log1p(-T(prob)))
    geom_sum, num = 0.0, 0.0
    while True:
        geom_sum += math.ceil(math.log(s.uniform()) / logprob)
        if geom_sum > count:
            return num
        num += 1


def _btrs(s: _Serial, count, prob, T) -> float:
    """Hoermann's BTRS as ATen writes it (TensorFlow's variant); T is scalar_t (np.float32 or float)."""
    cT, pT = T(count), T(prob)
    stddev = float(np.sqrt(T(cT * pT * T(1 - pT))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(pT)
    c = float(T(cT * pT)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(T(pT / T(1 - pT)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(math.floor(T(T(cT + 1) * pT)))
    count = float(cT)
    log = math.log
    while True:
        U = s.uniform() - 0.5
        V = s.uniform()
        us = 0.5 - abs(U)
        k = float(T(math.floor((2 * a / us + b) * U + c)))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and V <= v_r:
            return k
        V = log(V * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * log((m + 1) / (r * (count - m + 1)))
                 + float(T(count + 1)) * log((count - m + 1) / float(T(count - k + 1)))
                 + (k + 0.5) * log(r * float(T(count - k + 1)) / float(T(k + 1)))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(float(T(count - k))))
        if V <= upper:
            return k


def _binomial_one(s: _Serial, count, prob, T) -> float:
    """sample_binomial<scalar_t, double>: BTRS where count * min(p, 1 - p) >= 10, else inversion."""
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if T(T(count) * T(prob)) >= 10.0:
            return _btrs(s, count, prob, T)
        return _binomial_inversion(s, count, prob, T)
    if prob > 0.5:
        q = float(T(1.0 - prob))
        if T(T(count) * T(q)) >= 10.0:
            return float(T(count - _btrs(s, count, q, T)))
        return float(T(count - _binomial_inversion(s, count, q, T)))
    return math.nan


def binomial(eng: Engine, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """torch.binomial of two contiguous float arrays of one shape and dtype, element by element."""
    dt = count.dtype
    T = float if dt == _F64 else np.float32
    s = _Serial(eng)
    try:
        out = [_binomial_one(s, n, p, T) for n, p in zip(count.ravel().tolist(), prob.ravel().tolist())]
    finally:
        s.close()
    return np.array(out, _F64).astype(dt).reshape(count.shape)
