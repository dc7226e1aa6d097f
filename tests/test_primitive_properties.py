"""Registry-wide property tests: every registered primitive, every rule on its card.

The tests are parametrised over `sorted(registry)`, so a newly registered primitive is tested as soon as
it exists, and one without a case in tests/cases/ FAILS (it is never skipped). For each primitive,
Hypothesis draws inputs from its case (float64 unless the primitive needs another dtype) and checks:

1. jvp against central finite differences;
2. vjp against jvp: <u, J v> == <J^T u, v> (both from the rules, so at a tight tolerance);
3. the batch rule against a Python loop: vmap with the batch axis first, in the middle or last, with
   some operands unbatched (in_axes None), and out_axes first or last;
4. jit against eager evaluation (values, dtype and weak type), and that per-operand rule lists have
   one rule per operand;
5. second order: funcgrad.testing.check_grads(order=2), derivatives of the derivatives.

Primitives whose derivative is identically zero (differentiable=False, or all rules None: comparisons,
sign, stop_gradient, argmax/argmin, iota, full) get 3, 4 and a check that jvp and vjp give zeros.
Special cases, documented here so nothing is skipped silently:
- NO_OPERANDS (iota, full): nothing to batch, so 3 checks that vmap of a zero-argument function
  broadcasts its result over `axis_size` (the batch rule is never called), and the zero-derivative
  check is jvp(f, (), ()) giving a zero tangent.
- REVERSE_ONLY (custom_vjp_call): forward mode raises TypeError by design, as in JAX; 1 checks that it
  does, 2 checks the vjp against finite differences instead, and 5 checks reverse-over-reverse only.
- FORWARD_ONLY (while): reverse mode raises ValueError by design, as in JAX (the trip count is not
  static); 2 checks that it does, and 5 checks forward-over-forward only.
- FIXED_OPERANDS (betainc's a and b; nextafter's operands with the JAX face's kink): not differentiable by
  design, as in JAX; every derivative check holds them fixed, and test_fixed_operands_raise checks that
  differentiating them raises (nextafter's kink="torch" derivatives: tests/test_special_function_edges.py).
- SECOND_ORDER_FIXED (igamma/igammac's a): the first derivative exists (checked by 1 and 2) but, as in
  JAX, not the second; test_second_order_with_fixed_operands holds them fixed for 5, and
  test_fixed_operands_raise checks the error.
- ZERO_DERIVATIVE_OPERANDS (expn's integer order n, a float operand): no derivative by design (its rule is
  None, a zero tangent, as in JAX); every derivative check holds it fixed, and
  test_zero_derivative_operands checks that differentiating it gives zeros.
Special points: 1-4 also run as test_*_at_special_points: the case's draw with a random non-empty subset of
each floating operand's entries replaced by special values (0, -0.0, +-1, +-0.5, +-2, the smallest normal
number, eps, bounds) of the kind the case module declares in SPECIAL (tests/cases/_special.py; default
"real"), or a declared special-points case (singular matrices, ...). Finite differences (1) use only the
special values away from the declared kinks and domain edges, and skip the primitives whose kinks depend
on several operands or entries (fd=False, with the reason beside it). Where a derivative is infinite
(sqrt at 0), 2 asks jvp and vjp for the same non-finite pairing.
The Hypothesis example count comes from tests/conftest.py's profiles.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import funcgrad
from funcgrad._src.core import dtypes
from funcgrad._src.core.array import ArrayBase, to_array
from funcgrad._src.core.primitive import registry
from funcgrad.testing import check_grads, check_jvp, check_vjp
from funcgrad.testing.strategies import special_values
from funcgrad.tree_util import tree_flatten, tree_unflatten

from cases import CASES, OWNER, SPECIAL, Special

NAMES = sorted(registry)
NO_OPERANDS = {"iota", "full"}
REVERSE_ONLY = {"custom_vjp_call": "custom_vjp functions support reverse mode only (as in JAX)"}
FORWARD_ONLY = {"while": "while_loop supports forward mode only (as in JAX)"}
FIXED_OPERANDS = {"betainc": ((0, 1), ValueError), "nextafter": ((0, 1), NotImplementedError),
                  "geqrf": ((0,), NotImplementedError)}
SECOND_ORDER_FIXED = {"igamma": ((0,), NotImplementedError), "igammac": ((0,), NotImplementedError)}
ZERO_DERIVATIVE_OPERANDS = {"expn": (0,)}

# (test, primitive) -> the bug. Listed here (as strict xfails) until the card or transform is fixed.
KNOWN_BUGS: dict[tuple[str, str], str] = {
}


def _no_rules(rules) -> bool:
    return isinstance(rules, (list, tuple)) and all(r is None for r in rules)


def zero_derivative(prim) -> bool:
    """True for primitives whose derivative is identically zero by their card."""
    return not prim.differentiable or (prim.jvp_full is None and prim.vjp_full is None
                                       and _no_rules(prim.jvp) and _no_rules(prim.vjp))


DIFFERENTIABLE = [n for n in NAMES if not zero_derivative(registry[n])]
ZERO_DERIVATIVE = [n for n in NAMES if zero_derivative(registry[n])]


def cases_for(test: str, names):
    out = []
    for n in names:
        if test == "order2" and n in SECOND_ORDER_FIXED:
            continue  # test_second_order_with_fixed_operands covers these
        reason = KNOWN_BUGS.get((test, n))
        out.append(pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=reason)) if reason else n)
    return out


def special_for(test: str, names):
    """Names for the special-points tests; finite differences only where the primitive's SPECIAL
    declaration allows them (fd=True; otherwise its `why` gives the reason). KNOWN_BUGS keys: (test +
    "-special", name)."""
    out = []
    for n in names:
        if test == "jvp" and not SPECIAL.get(n, Special()).fd:
            continue  # kinks depending on several operands: listed with the reason in its SPECIAL entry
        reason = KNOWN_BUGS.get((f"{test}-special", n))
        out.append(pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=reason)) if reason else n)
    return out


# Special-points draws replace many entries one by one, so shrinking a failure takes minutes: report the
# failing example as drawn (the ci profile's other settings are kept).
NO_SHRINK = settings(phases=(Phase.explicit, Phase.reuse, Phase.generate))


# --- helpers --------------------------------------------------------------------------------------

_STRATEGIES: dict = {}


def special_case(data, name, args, params, fd=False):
    """The case's draw at special points (see the module docstring): (args as NumPy arrays, params).

    fd=True draws only special values where central differences are meaningful (no kinks, no domain
    edges within the step) and no ties."""
    spec = SPECIAL.get(name, Special())
    if spec.case is not None:
        key = ("special", name)
        strat = _STRATEGIES.get(key)
        if strat is None:
            strat = _STRATEGIES[key] = st.composite(lambda draw: spec.case(draw))()
        return data.draw(strat, label=f"{name} special-points case")
    out = [np.array(a, copy=True) for a in args]
    for i, a in enumerate(out):
        kind = spec.kind_of(i)
        if kind is None or a.dtype.kind not in "fc" or a.size == 0:
            continue
        real = np.finfo(a.dtype).dtype
        if isinstance(kind, tuple):  # the operand's own special values
            values = st.sampled_from([float(real.type(v)) for v in kind])
        else:
            bounds = tuple(spec.bounds) + tuple(k - spec.shift for k in spec.kinks)
            values = special_values(real, kind=kind, bounds=bounds, tiny=spec.tiny, huge=spec.huge)
            if spec.shift:
                values = values.map(lambda v: float(real.type(v + spec.shift)))
        if fd:
            values = values.filter(lambda v, kind=kind: spec.fd_safe(kind, v))
        flat = out[i].reshape(-1)
        k = data.draw(st.integers(1, a.size), label=f"special entries of operand {i}")
        for p in data.draw(st.permutations(range(a.size)), label="positions")[:k]:
            v = data.draw(values, label="special value")
            flat[p] = complex(v, data.draw(values, label="imaginary part")) if a.dtype.kind == "c" else v
    if not fd:
        for i, j in spec.ties:
            if out[i].shape == out[j].shape and out[i].dtype == out[j].dtype:
                same = data.draw(st.lists(st.booleans(), min_size=out[i].size, max_size=out[i].size), label="ties")
                out[j] = np.where(np.asarray(same, bool).reshape(out[i].shape), out[i], out[j])
    return out, params


def draw_case(data, name, points="random", fd=False):
    """(prim, args as Arrays, params) for one Hypothesis example of `name`'s case (at special points
    when points == "special")."""
    if name not in CASES:
        pytest.fail(f"primitive {name!r} is registered but has no property-test case: add one to a module "
                    "in tests/cases/ (see tests/cases/README.md)")
    strat = _STRATEGIES.get(name)
    if strat is None:
        strat = _STRATEGIES[name] = st.composite(lambda draw: CASES[name](draw))()
    args, params = data.draw(strat, label=f"{name} case")
    if points == "special":
        args, params = special_case(data, name, [np.asarray(a) for a in args], params, fd=fd)
    args = [to_array(np.asarray(a)) for a in args]
    prim = registry[name]
    if name in NO_OPERANDS:
        assert not args, f"{name} is listed in NO_OPERANDS but its case gives {len(args)} operand(s)"
    else:
        assert args, (f"the case for {name} gives no operands; if the primitive takes none, add it to "
                      "NO_OPERANDS in this file")
    return prim, args, params


def inexact(x) -> bool:
    return dtypes.is_inexact(x.dtype)


def leaves(tree):
    return [x if isinstance(x, ArrayBase) else to_array(x) for x in tree_flatten(tree)[0]]


def differentiable_part(prim, args, params, fixed=()):
    """f(*float_operands) binding prim with the other operands (bool/int, FIXED_OPERANDS and `fixed`)
    held fixed."""
    fixed = set(fixed) | set(FIXED_OPERANDS.get(prim.name, ((),))[0])
    fixed |= set(ZERO_DERIVATIVE_OPERANDS.get(prim.name, ()))
    idx = [i for i, a in enumerate(args) if inexact(a) and i not in fixed]

    def f(*diff):
        full = list(args)
        for i, d in zip(idx, diff):
            full[i] = d
        return prim.bind(*full, **params)
    return f, [args[i] for i in idx]


def rand_like(rng, x) -> np.ndarray:
    if np.dtype(x.dtype).kind == "c":
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    return rng.standard_normal(x.shape).astype(x.dtype)


def pairing(a, b) -> tuple[float, float]:
    """(Re sum(a * b), sum |a * b|): the real bilinear pairing under which JAX-style vjps transpose
    jvps (for complex values too), and its scale."""
    p = np.asarray(a).astype(np.complex128).ravel() * np.asarray(b).astype(np.complex128).ravel()
    return float(np.sum(p).real), float(np.sum(np.abs(p)))


def tol_for(xs) -> float:
    """Tolerance for comparing two exact-in-principle computations (transform vs reference)."""
    t = 1e-12
    for x in xs:
        if inexact(x):
            resolution = float(np.finfo(x.dtype).eps)
            if resolution > 1e-10:
                t = max(t, 1e-2 if resolution > 1e-4 else 1e-5)
    return t


def assert_same(got, expected, what, check_weak=False):
    got, expected = leaves(got), leaves(expected)
    assert len(got) == len(expected), f"{what}: {len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and tuple(g.shape) == tuple(e.shape), (
            f"{what}: output {i} is {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}")
        if check_weak:
            assert bool(g.weak_type) == bool(e.weak_type), (
                f"{what}: output {i} has weak_type={g.weak_type}, expected {e.weak_type}")
        if inexact(e):
            t = tol_for([e])
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=t, atol=t, equal_nan=True,
                                       err_msg=f"{what}: output {i}")
        else:
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e), err_msg=f"{what}: output {i}")


def assert_zero_derivative(f, diff, rng):
    """jvp gives zero tangents and vjp zero cotangents (of the right shapes and dtypes)."""
    tangents = [to_array(rand_like(rng, d)) for d in diff]
    out, t_out = funcgrad.jvp(f, tuple(diff), tuple(tangents))
    for o, t in zip(leaves(out), leaves(t_out)):
        assert tuple(t.shape) == tuple(o.shape), f"tangent shape {t.shape} for output shape {o.shape}"
        assert not np.any(np.asarray(t)), f"expected a zero tangent, got {np.asarray(t)}"
    if not diff:
        return
    out, pull = funcgrad.vjp(f, *diff)
    out_leaves, out_tree = tree_flatten(out)
    u = [to_array(rand_like(rng, o)) if inexact(o) else to_array(np.zeros(o.shape, o.dtype))
         for o in leaves(out)]
    cts = leaves(pull(tree_unflatten(out_tree, u)))
    for d, c in zip(diff, cts):
        assert tuple(c.shape) == tuple(d.shape) and c.dtype == d.dtype, (
            f"cotangent {c.dtype}{list(c.shape)} for operand {d.dtype}{list(d.shape)}")
        assert not np.any(np.asarray(c)), f"expected a zero cotangent, got {np.asarray(c)}"


def has_derivative(f, diff) -> bool:
    return bool(diff) and any(inexact(o) for o in leaves(f(*diff)))


def seed(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))


# --- the registry and the cases -------------------------------------------------------------------

def test_every_primitive_has_every_rule():
    missing = []
    for name in NAMES:
        p = registry[name]
        lacks = [what for what, ok in [
            ("impl", callable(getattr(p, "impl", None))),
            ("abstract_eval", callable(getattr(p, "abstract_eval", None))),
            ("batch", callable(getattr(p, "batch", None))),
            ("jvp or jvp_full", p.jvp is not None or p.jvp_full is not None),
            ("vjp or vjp_full", p.vjp is not None or p.vjp_full is not None)] if not ok]
        if lacks:
            missing.append(f"{name}: {', '.join(lacks)}")
    assert not missing, "primitives lacking rules:\n  " + "\n  ".join(missing)


@pytest.mark.parametrize("name", NAMES)
def test_every_primitive_has_a_case(name):
    assert name in CASES, (f"primitive {name!r} is registered but has no property-test case: add one to "
                           "a module in tests/cases/ (see tests/cases/README.md)")


def test_every_case_names_a_registered_primitive():
    stale = {n: OWNER[n] for n in CASES if n not in registry}
    assert not stale, f"cases for unregistered primitives (name -> module in tests/cases): {stale}"


# --- 1. jvp against finite differences ------------------------------------------------------------

@pytest.mark.parametrize("name", cases_for("jvp", [n for n in DIFFERENTIABLE if n not in REVERSE_ONLY]))
@given(data=st.data())
def test_jvp_matches_finite_differences(name, data):
    _jvp_matches_finite_differences(name, "random", data)


@pytest.mark.parametrize("name", special_for("jvp", [n for n in DIFFERENTIABLE if n not in REVERSE_ONLY]))
@NO_SHRINK
@given(data=st.data())
def test_jvp_matches_finite_differences_at_special_points(name, data):
    _jvp_matches_finite_differences(name, "special", data)


def _jvp_matches_finite_differences(name, points, data):
    prim, args, params = draw_case(data, name, points, fd=True)
    f, diff = differentiable_part(prim, args, params)
    if not has_derivative(f, diff):  # e.g. a conversion to or from an integer dtype
        assert_zero_derivative(f, diff, seed(data))
        return
    check_jvp(f, lambda p, t: funcgrad.jvp(f, tuple(p), tuple(t)), diff,
              err_msg=f"{name}: jvp vs central finite differences")


@pytest.mark.parametrize("name", sorted(REVERSE_ONLY))
@given(data=st.data())
def test_forward_mode_raises_for_reverse_only(name, data):
    prim, args, params = draw_case(data, name)
    f, diff = differentiable_part(prim, args, params)
    with pytest.raises(TypeError, match="forward-mode|jvp"):
        funcgrad.jvp(f, tuple(diff), tuple(diff))


# --- 2. vjp against jvp ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(FORWARD_ONLY))
@given(data=st.data())
def test_reverse_mode_raises_for_forward_only(name, data):
    prim, args, params = draw_case(data, name)
    f, diff = differentiable_part(prim, args, params)
    with pytest.raises(ValueError, match="Reverse-mode"):  # JAX's error type for while_loop
        out, pull = funcgrad.vjp(f, *diff)
        pull(out)


@pytest.mark.parametrize("name", cases_for("vjp", [n for n in DIFFERENTIABLE if n not in FORWARD_ONLY]))
@given(data=st.data())
def test_vjp_matches_jvp(name, data):
    _vjp_matches_jvp(name, "random", data)


@pytest.mark.parametrize("name", special_for("vjp", [n for n in DIFFERENTIABLE if n not in FORWARD_ONLY]))
@NO_SHRINK
@given(data=st.data())
def test_vjp_matches_jvp_at_special_points(name, data):
    _vjp_matches_jvp(name, "special", data)


def _vjp_matches_jvp(name, points, data):
    prim, args, params = draw_case(data, name, points)
    f, diff = differentiable_part(prim, args, params)
    rng = seed(data)
    if not has_derivative(f, diff):
        assert_zero_derivative(f, diff, rng)
        return
    if name in REVERSE_ONLY:
        check_vjp(f, lambda *a: funcgrad.vjp(f, *a), diff, err_msg=f"{name}: vjp vs finite differences")
        return
    v = [to_array(rand_like(rng, d)) for d in diff]
    out, jv = funcgrad.jvp(f, tuple(diff), tuple(v))
    out2, pull = funcgrad.vjp(f, *diff)
    expected = f(*diff)
    assert_same(out, expected, f"{name}: primal output of jvp")
    assert_same(out2, expected, f"{name}: primal output of vjp")
    _, out_tree = tree_flatten(out2)
    out_leaves = leaves(out2)
    u = [to_array(rand_like(rng, o)) if inexact(o) else to_array(np.zeros(o.shape, o.dtype))
         for o in out_leaves]
    ct = leaves(pull(tree_unflatten(out_tree, u)))
    jv = leaves(jv)
    assert len(ct) == len(diff) and len(jv) == len(out_leaves)
    lhs = rhs = scale = 0.0
    for o, t, w in zip(out_leaves, jv, u):
        assert tuple(t.shape) == tuple(o.shape), f"{name}: tangent shape {t.shape} for output {o.shape}"
        if inexact(o):
            assert t.dtype == o.dtype, f"{name}: tangent dtype {t.dtype} for output dtype {o.dtype}"
            p, sc = pairing(w, t)
            lhs, scale = lhs + p, scale + sc
    for d, c, vv in zip(diff, ct, v):
        assert tuple(c.shape) == tuple(d.shape) and c.dtype == d.dtype, (
            f"{name}: cotangent {c.dtype}{list(c.shape)} for operand {d.dtype}{list(d.shape)}")
        p, sc = pairing(c, vv)
        rhs, scale = rhs + p, scale + sc
    tol = tol_for(list(diff) + out_leaves) * 100
    if not (np.isfinite(lhs) and np.isfinite(rhs)):  # an infinite derivative (sqrt at 0): the same pairing
        assert lhs == rhs or (np.isnan(lhs) and np.isnan(rhs)), (
            f"{name}: <u, J v> = {lhs!r} (from jvp) but <J^T u, v> = {rhs!r} (from vjp)")
        return
    assert abs(lhs - rhs) <= tol * scale + 1e-300, (
        f"{name}: <u, J v> = {lhs!r} (from jvp) but <J^T u, v> = {rhs!r} (from vjp); "
        f"difference {abs(lhs - rhs):.3g}, allowed {tol * scale:.3g}")


# --- 3. vmap against a Python loop ----------------------------------------------------------------

def batch_member(rng, x: np.ndarray) -> np.ndarray:
    """Another example like x for the batch: floats scaled entrywise by [0.8, 1] (sign, positivity and
    intervals containing 0 are kept), bools shuffled, integers (often indices) unchanged."""
    if dtypes.is_inexact(x.dtype):
        return (x * rng.uniform(0.8, 1.0, x.shape)).astype(x.dtype)
    if x.dtype == np.bool_:
        return x.ravel()[rng.permutation(x.size)].reshape(x.shape)
    return x.copy()


@pytest.mark.parametrize("name", cases_for("vmap", NAMES))
@given(data=st.data())
def test_vmap_matches_loop(name, data):
    _vmap_matches_loop(name, "random", data)


@pytest.mark.parametrize("name", special_for("vmap", NAMES))
@NO_SHRINK
@given(data=st.data())
def test_vmap_matches_loop_at_special_points(name, data):
    _vmap_matches_loop(name, "special", data)


def _vmap_matches_loop(name, points, data):
    prim, args, params = draw_case(data, name, points)

    def f(*a):
        return prim.bind(*a, **params)
    out_axis = data.draw(st.sampled_from([0, -1]), label="out_axes")
    if name in NO_OPERANDS:
        size = data.draw(st.integers(1, 3), label="axis_size")
        got = funcgrad.vmap(f, out_axes=out_axis, axis_size=size)()
        one = leaves(f())
        expected = [np.stack([np.asarray(o)] * size, axis=out_axis) for o in one]
        assert_same(got, [to_array(e) for e in expected], f"{name}: vmap of a zero-operand primitive")
        return
    rng = seed(data)
    size = data.draw(st.integers(1, 3), label="batch size")
    axes = [data.draw(st.sampled_from([None] + sorted({0, (a.ndim + 1) // 2, a.ndim})), label=f"in_axes[{i}]")
            for i, a in enumerate(args)]
    if all(ax is None for ax in axes):
        axes[data.draw(st.integers(0, len(args) - 1), label="forced batched operand")] = 0
    host = [np.asarray(a) for a in args]
    members = [[h] + [batch_member(rng, h) for _ in range(size - 1)] if ax is not None else None
               for h, ax in zip(host, axes)]
    batched = [to_array(np.stack(m, axis=ax)) if ax is not None else a
               for m, ax, a in zip(members, axes, args)]
    per_example = []
    for b in range(size):
        ops = [to_array(m[b]) if ax is not None else a for m, ax, a in zip(members, axes, args)]
        per_example.append(leaves(f(*ops)))
    expected = [to_array(np.stack([np.asarray(r[k]) for r in per_example], axis=out_axis))
                for k in range(len(per_example[0]))]
    got = funcgrad.vmap(f, in_axes=tuple(axes), out_axes=out_axis)(*batched)
    assert_same(got, expected, f"{name}: vmap(in_axes={tuple(axes)}, out_axes={out_axis}) vs a loop")


# --- 4. jit against eager -------------------------------------------------------------------------

@pytest.mark.parametrize("name", cases_for("jit", NAMES))
@given(data=st.data())
def test_jit_matches_eager(name, data):
    _jit_matches_eager(name, "random", data)


@pytest.mark.parametrize("name", special_for("jit", NAMES))
@NO_SHRINK
@given(data=st.data())
def test_jit_matches_eager_at_special_points(name, data):
    _jit_matches_eager(name, "special", data)


def _jit_matches_eager(name, points, data):
    prim, args, params = draw_case(data, name, points)

    for kind in ("jvp", "vjp"):  # per-operand rule lists must cover every operand
        rules = getattr(prim, kind)
        if getattr(prim, kind + "_full") is None and isinstance(rules, (list, tuple)):
            assert len(rules) == len(args), f"{name}: {len(rules)} {kind} rules for {len(args)} operands"

    def f(*a):
        return prim.bind(*a, **params)
    assert_same(funcgrad.jit(f)(*args), f(*args), f"{name}: jit vs eager", check_weak=True)


# --- 5. second order ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", cases_for("order2", DIFFERENTIABLE))
@given(data=st.data())
def test_second_order(name, data):
    prim, args, params = draw_case(data, name)
    f, diff = differentiable_part(prim, args, params)
    if not has_derivative(f, diff):
        assert_zero_derivative(f, diff, seed(data))
        return
    modes = ("rev",) if name in REVERSE_ONLY else ("fwd",) if name in FORWARD_ONLY else ("fwd", "rev")
    check_grads(f, diff, order=2, modes=modes)


@pytest.mark.parametrize("name", sorted(SECOND_ORDER_FIXED))
@given(data=st.data())
def test_second_order_with_fixed_operands(name, data):
    prim, args, params = draw_case(data, name)
    f, diff = differentiable_part(prim, args, params, SECOND_ORDER_FIXED[name][0])
    check_grads(f, diff, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(FIXED_OPERANDS) + sorted(SECOND_ORDER_FIXED))
@given(data=st.data())
def test_fixed_operands_raise(name, data):
    prim, args, params = draw_case(data, name)
    fixed, err = FIXED_OPERANDS.get(name) or SECOND_ORDER_FIXED[name]
    order = 1 if name in FIXED_OPERANDS else 2
    for i in fixed:
        def f(v, i=i):
            full = list(args)
            full[i] = v
            out = prim.bind(*full, **params)
            return funcgrad.numpy.sum(out[-1] if prim.multiple_results else out)
        d = funcgrad.grad(f) if order == 1 else funcgrad.grad(lambda v: funcgrad.numpy.sum(funcgrad.grad(f)(v)))
        with pytest.raises(err):
            d(args[i])
        fw = (lambda v: funcgrad.jvp(f, (v,), (v,))[1]) if order == 1 else \
            (lambda v: funcgrad.jvp(funcgrad.grad(f), (v,), (v,))[1])
        with pytest.raises(err):
            fw(args[i])


@pytest.mark.parametrize("name", sorted(ZERO_DERIVATIVE_OPERANDS))
@given(data=st.data())
def test_zero_derivative_operands(name, data):
    prim, args, params = draw_case(data, name)
    idx = ZERO_DERIVATIVE_OPERANDS[name]
    assert all(inexact(args[i]) for i in idx), f"{name}: ZERO_DERIVATIVE_OPERANDS names a non-inexact operand"

    def f(*diff):
        full = list(args)
        for i, d in zip(idx, diff):
            full[i] = d
        return prim.bind(*full, **params)
    assert_zero_derivative(f, [args[i] for i in idx], seed(data))


# --- zero derivatives -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", cases_for("zero", ZERO_DERIVATIVE))
@given(data=st.data())
def test_zero_derivative(name, data):
    prim, args, params = draw_case(data, name)
    f, diff = differentiable_part(prim, args, params)
    assert_zero_derivative(f, diff, seed(data))


# --- specific regressions found by the properties above -------------------------------------------

def test_dot_general_accumulates_in_preferred_type():
    from funcgrad._src.prims.linalg import dot_general
    x, y = np.array([1.0, 1e-8], np.float32), np.ones(2, np.float32)
    out = dot_general(to_array(x), to_array(y), (((0,), (0,)), ((), ())), preferred_element_type=np.float64)
    assert out.dtype == np.float64
    assert float(out) == x.astype(np.float64) @ y.astype(np.float64)  # 1.00000001, not 1.0


def test_pow_mixed_second_derivative_at_zero_exponent():
    from funcgrad._src.prims.elementwise import pow
    x = np.float64(2.0)
    d2 = funcgrad.grad(lambda y: funcgrad.grad(lambda x: pow(x, y))(x))
    assert float(d2(np.float64(0.0))) == pytest.approx(1 / x)  # d2/dxdy x**y = x**(y-1) (1 + y log x)
