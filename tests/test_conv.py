"""conv_general_dilated and reduce_window against direct-loop NumPy references.

The references below loop over output positions and window offsets (slow, obviously right); their
gradients are the loops' own transposes, written out by hand. Everything is float64 unless a test
says otherwise.
"""
from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad._src.core.primitive import registry
from funcgrad._src.prims import conv, windowed
from funcgrad._src.prims.conv import ConvDimensionNumbers, conv_general_dilated
from funcgrad._src.prims.elementwise import ge_p, le_p
from funcgrad._src.prims.windowed import reduce_window
from funcgrad.testing import check_grads

from cases.conv import CASES

RNG = np.random.default_rng(0)
TOL = dict(rtol=1e-10, atol=1e-10)


# --- the loop references --------------------------------------------------------------------------

def _grow(x, padding, dilation, lead, fill=0.0):
    """x with `dilation`-1 holes and (lo, hi) padding on its axes after the first `lead`; loops."""
    sp = x.shape[lead:]
    dil = [(s - 1) * d + 1 if s else 0 for s, d in zip(sp, dilation)]
    grown = np.full(x.shape[:lead] + tuple(d + max(lo, 0) + max(hi, 0) for d, (lo, hi) in zip(dil, padding)),
                    fill)
    where = {}
    for i in np.ndindex(*sp):
        pos = tuple(j * d + max(lo, 0) for j, d, (lo, _) in zip(i, dilation, padding))
        grown[(slice(None),) * lead + pos] = x[(slice(None),) * lead + i]
        where[i] = pos
    crop = tuple(slice(max(-lo, 0), g - max(-hi, 0)) for g, (lo, hi) in zip(grown.shape[lead:], padding))
    return grown, crop, where


def _out_sizes(padded, window, strides, wdil):
    eff = [(k - 1) * r + 1 for k, r in zip(window, wdil)]
    return [(p - e) // s + 1 if p >= e else 0 for p, e, s in zip(padded, eff, strides)]


def ref_conv(lhs, rhs, strides, padding, ld, rd, G=1, B=1, g=None):
    """out[n, o, p] = sum_{c,k} xpad[b*Nb + n, gi*I + c, p*s + k*rd] * rhs[o, c, k] (NC.../OI... layout).

    With a cotangent g, also returns (d lhs, d rhs): the same loops, transposed by hand.
    """
    N, C = lhs.shape[:2]
    O, I = rhs.shape[:2]
    grown, crop, where = _grow(lhs, padding, ld, 2)
    xpad = grown[(slice(None), slice(None)) + crop]
    outs = _out_sizes(xpad.shape[2:], rhs.shape[2:], strides, rd)
    out = np.zeros((N // B, O) + tuple(outs))
    dxpad, drhs = np.zeros_like(xpad), np.zeros_like(rhs)
    n_grp = max(G, B)
    Oj = O // n_grp
    for j in range(n_grp):
        ns = slice(j * (N // B), (j + 1) * (N // B)) if B > 1 else slice(None)
        cs = slice(j * I, (j + 1) * I) if G > 1 else slice(None)
        os_ = slice(j * Oj, (j + 1) * Oj)
        for p in np.ndindex(*outs):
            for k in np.ndindex(*rhs.shape[2:]):
                q = tuple(pi * s + ki * r for pi, s, ki, r in zip(p, strides, k, rd))
                patch = xpad[(ns, cs) + q]                       # (N/B, I)
                w = rhs[(os_, slice(None)) + k]                  # (O/groups, I)
                out[(slice(None), os_) + p] += patch @ w.T
                if g is not None:
                    gp = g[(slice(None), os_) + p]               # (N/B, O/groups)
                    dxpad[(ns, cs) + q] += gp @ w
                    drhs[(os_, slice(None)) + k] += gp.T @ patch
    if g is None:
        return out
    dgrown = np.zeros_like(grown)
    dgrown[(slice(None), slice(None)) + crop] = dxpad
    dlhs = np.zeros_like(lhs)
    for i, pos in where.items():
        dlhs[(slice(None), slice(None)) + i] = dgrown[(slice(None), slice(None)) + pos]
    return out, dlhs, drhs


def ref_reduce_window(x, init, kind, window, strides, padding, bd, wd, g=None):
    """XLA's reduce_window by loops (pads and holes hold init); with g, the gradient as well
    (max/min: all of each window's cotangent to its first extreme element)."""
    grown, crop, where = _grow(x, padding, bd, 0, fill=init)
    xpad = grown[crop]
    outs = _out_sizes(xpad.shape, window, strides, wd)
    out = np.full(outs, float(init))
    dxpad = np.zeros_like(xpad)
    better = {"sum": None, "max": operator.gt, "min": operator.lt}[kind]
    for p in np.ndindex(*outs):
        best, best_q = None, None
        for k in np.ndindex(*window):
            q = tuple(pi * s + ki * r for pi, s, ki, r in zip(p, strides, k, wd))
            v = xpad[q]
            if kind == "sum":
                out[p] += v
                if g is not None:
                    dxpad[q] += g[p]
            elif best is None or better(v, best):
                best, best_q = v, q
        if kind != "sum":
            out[p] = max(best, init) if kind == "max" else min(best, init)
            if g is not None:
                dxpad[best_q] += g[p]
    if g is None:
        return out
    dgrown = np.zeros_like(grown)
    dgrown[crop] = dxpad
    dx = np.zeros_like(x)
    for i, pos in where.items():
        dx[i] = dgrown[pos]
    return out, dx


def _layout(canon, spec):
    """A canonical (N, C, spatial...) array laid out as a ConvDimensionNumbers spec says."""
    return np.transpose(canon, np.argsort(spec))


def _check_conv(lhs_c, rhs_c, params):
    """Forward, vjp (both operands) and jvp of the card against the loop reference, in any layout."""
    dn = params["dimension_numbers"]
    lhs, rhs = _layout(lhs_c, dn.lhs_spec), _layout(rhs_c, dn.rhs_spec)
    G, B = params["feature_group_count"], params["batch_group_count"]
    loops = (params["window_strides"], params["padding"], params["lhs_dilation"], params["rhs_dilation"], G, B)

    def f(a, b):
        return conv.conv_general_dilated_p.bind(a, b, **params)

    out, pullback = fg.vjp(f, jnp.asarray(lhs), jnp.asarray(rhs))
    ref = ref_conv(lhs_c, rhs_c, *loops)
    got = np.transpose(np.asarray(out), dn.out_spec)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, **TOL)
    g_c = RNG.standard_normal(ref.shape)
    _, dl_ref, dr_ref = ref_conv(lhs_c, rhs_c, *loops, g=g_c)
    dl, dr = pullback(jnp.asarray(_layout(g_c, dn.out_spec)))
    np.testing.assert_allclose(np.transpose(np.asarray(dl), dn.lhs_spec), dl_ref, **TOL)
    np.testing.assert_allclose(np.transpose(np.asarray(dr), dn.rhs_spec), dr_ref, **TOL)
    tl, tr = RNG.standard_normal(lhs_c.shape), RNG.standard_normal(rhs_c.shape)
    _, t_out = fg.jvp(f, (jnp.asarray(lhs), jnp.asarray(rhs)),
                      (jnp.asarray(_layout(tl, dn.lhs_spec)), jnp.asarray(_layout(tr, dn.rhs_spec))))
    np.testing.assert_allclose(np.transpose(np.asarray(t_out), dn.out_spec),
                               ref_conv(tl, rhs_c, *loops) + ref_conv(lhs_c, tr, *loops), **TOL)


# --- conv_general_dilated: every mode against the loops -------------------------------------------

def _cfg(n, S, K, strides=None, padding="VALID", ld=None, rd=None, G=1, B=1, N=2, I=2, O=2, layout=None):
    return dict(n=n, S=S, K=K, strides=strides or (1,) * n, padding=padding, ld=ld, rd=rd, G=G, B=B, N=N,
                I=I, O=O, layout=layout)


CONFIGS = {
    "1d-valid": _cfg(1, (6,), (3,)),
    "1d-same-stride": _cfg(1, (6,), (3,), (2,), "SAME"),
    "1d-explicit-negative": _cfg(1, (6,), (2,), padding=[(-1, 2)]),
    "1d-lhs-dilation": _cfg(1, (4,), (3,), (2,), [(2, 1)], ld=(2,)),
    "1d-rhs-dilation": _cfg(1, (6,), (2,), padding="SAME", rd=(3,)),
    "1d-depthwise": _cfg(1, (5,), (3,), G=3, I=1, O=3),
    "1d-nwc": _cfg(1, (5,), (2,), (2,), "SAME", layout=("NWC", "WIO", "NWC")),
    "2d-valid": _cfg(2, (5, 4), (3, 2)),
    "2d-same-stride": _cfg(2, (6, 5), (3, 3), (2, 1), "SAME"),
    "2d-same-lower": _cfg(2, (5, 5), (2, 2), (1, 1), "SAME_LOWER"),
    "2d-explicit": _cfg(2, (4, 5), (2, 3), (1, 2), [(1, 2), (0, 1)]),
    "2d-explicit-negative": _cfg(2, (5, 5), (2, 2), (1, 1), [(-1, 1), (2, -1)]),
    "2d-lhs-dilation": _cfg(2, (3, 4), (3, 2), (1, 2), [(2, 2), (1, 0)], ld=(2, 3)),
    "2d-rhs-dilation": _cfg(2, (6, 5), (2, 2), (2, 1), "VALID", rd=(2, 3)),
    "2d-all-dilations": _cfg(2, (4, 4), (2, 3), (2, 1), "SAME", ld=(2, 1), rd=(1, 2)),
    "2d-groups": _cfg(2, (4, 5), (2, 2), padding="SAME", G=3, I=1, O=6),
    "2d-groups-strided-dilated": _cfg(2, (5, 5), (2, 2), (2, 1), [(1, 0), (0, 2)], ld=(1, 2), rd=(2, 1), G=2,
                                      I=2, O=4),
    "2d-batch-groups": _cfg(2, (4, 4), (2, 2), (1, 2), "SAME", B=2, N=4, O=4),
    # more input channels than conv._FEW_CHANNELS: a kernel's gradient gathers the windows channels-last
    "2d-many-channels": _cfg(2, (5, 4), (3, 2), (1, 1), "SAME", N=3, I=6, O=3),
    "2d-many-channels-strided-dilated": _cfg(2, (6, 5), (2, 3), (2, 1), [(1, 0), (0, 2)], ld=(1, 2),
                                             rd=(2, 1), N=3, I=5, O=2),
    "2d-nhwc": _cfg(2, (5, 4), (3, 2), (2, 1), "SAME", layout=("NHWC", "HWIO", "NHWC"), G=2, O=4),
    "2d-nchw-hwio-nhwc": _cfg(2, (5, 4), (2, 2), (1, 1), [(1, 0), (0, 1)], layout=("NCHW", "HWIO", "NHWC")),
    "2d-odd-layout": _cfg(2, (4, 5), (2, 3), (1, 2), "SAME", layout=("HNWC", "WOIH", "CWHN")),
    "3d-valid": _cfg(3, (4, 3, 4), (2, 2, 2), N=1),
    "3d-same-stride": _cfg(3, (4, 4, 3), (3, 2, 2), (2, 1, 2), "SAME", N=1),
    "3d-dilations": _cfg(3, (3, 3, 4), (2, 2, 2), (1, 2, 1), [(0, 1), (1, 1), (0, 0)], ld=(2, 1, 1),
                         rd=(1, 1, 2), N=1),
    "3d-groups-ndhwc": _cfg(3, (3, 4, 3), (2, 1, 2), (1, 1, 2), "SAME", G=2, O=4, N=1,
                            layout=("NDHWC", "DHWIO", "NDHWC")),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_conv_matches_loops(name):
    c = CONFIGS[name]
    lhs_c = RNG.standard_normal((c["N"], c["I"] * c["G"]) + c["S"])
    rhs_c = RNG.standard_normal((c["O"], c["I"]) + c["K"])
    dn = conv.conv_dimension_numbers(lhs_c.shape, rhs_c.shape, c["layout"])
    lhs_shape = _layout(lhs_c, dn.lhs_spec).shape
    rhs_shape = _layout(rhs_c, dn.rhs_spec).shape
    params = conv.conv_params(lhs_shape, rhs_shape, c["strides"], c["padding"], c["ld"], c["rd"], c["layout"],
                              c["G"], c["B"])
    _check_conv(lhs_c, rhs_c, params)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_conv_in_blocks_matches_loops(name, monkeypatch):
    """With the im2col buffer capped at one byte every convolution (forward, both vjps, jvp) runs one example
    (or, for a kernel's gradient, one contracted feature) per block, and still matches the loops."""
    monkeypatch.setattr(conv, "_COLS_BYTES", 1)
    test_conv_matches_loops(name)


@given(st.data())
def test_conv_random_modes_match_loops(data):
    (lhs, rhs), params = data.draw(st.composite(lambda draw: CASES["conv_general_dilated"](draw))())
    dn = params["dimension_numbers"]
    _check_conv(np.transpose(lhs, dn.lhs_spec), np.transpose(rhs, dn.rhs_spec), params)


def test_public_signatures_and_padding_strings():
    x = RNG.standard_normal((2, 3, 7, 6))
    w = RNG.standard_normal((4, 3, 3, 2))
    X, Wt = jnp.asarray(x), jnp.asarray(w)
    # SAME pads so that out = ceil(in / stride), extra padding at the high end (SAME_LOWER: low end).
    same = ref_conv(x, w, (2, 2), [(1, 1), (0, 1)], (1, 1), (1, 1))
    np.testing.assert_allclose(np.asarray(conv.conv(X, Wt, (2, 2), "SAME")), same, **TOL)
    np.testing.assert_allclose(np.asarray(conv.conv(X, Wt, (2, 2), "same")), same, **TOL)
    lower = ref_conv(x, w, (1, 1), [(1, 1), (1, 0)], (1, 1), (1, 1))
    np.testing.assert_allclose(np.asarray(conv_general_dilated(X, Wt, (1, 1), "SAME_LOWER")), lower, **TOL)
    valid = ref_conv(x, w, (1, 2), [(0, 0), (0, 0)], (1, 1), (1, 1))
    np.testing.assert_allclose(np.asarray(conv.conv(X, Wt, [1, 2], "VALID")), valid, **TOL)
    general = ref_conv(x, w, (1, 1), [(1, 2), (0, 1)], (2, 1), (1, 2))
    np.testing.assert_allclose(np.asarray(conv.conv_with_general_padding(X, Wt, (1, 1), [(1, 2), (0, 1)], (2, 1),
                                                                         (1, 2))), general, **TOL)
    # SAME with a dilated kernel uses the dilated kernel's size (as JAX does).
    dil = ref_conv(x, w, (1, 1), [(2, 2), (1, 2)], (1, 1), (2, 3))
    np.testing.assert_allclose(np.asarray(conv_general_dilated(X, Wt, (1, 1), "SAME", rhs_dilation=(2, 3))),
                               dil, **TOL)
    # A NumPy input is accepted; preferred_element_type sets the output dtype.
    assert conv.conv(x.astype(np.float32), w.astype(np.float32), (1, 1), "SAME",
                     preferred_element_type=jnp.float64).dtype == np.float64
    xi, wi = np.arange(2 * 3 * 5 * 5).reshape(2, 3, 5, 5), np.ones((2, 3, 2, 2), np.int64)
    np.testing.assert_array_equal(np.asarray(conv.conv(jnp.asarray(xi), jnp.asarray(wi), (1, 1), "VALID")),
                                  ref_conv(xi.astype(float), wi.astype(float), (1, 1), [(0, 0)] * 2, (1, 1), (1, 1)))


def test_float32_forward():
    x = RNG.standard_normal((2, 4, 6, 6)).astype(np.float32)
    w = RNG.standard_normal((6, 2, 3, 3)).astype(np.float32)
    out = conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (2, 1), "SAME", feature_group_count=2)
    assert out.dtype == np.float32
    ref = ref_conv(x.astype(float), w.astype(float), (2, 1), [(0, 1), (1, 1)], (1, 1), (1, 1), G=2)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5, atol=1e-5)


# --- dimension numbers ----------------------------------------------------------------------------

def test_conv_dimension_numbers_like_jax():
    assert conv.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC")) == \
        ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    assert conv.conv_dimension_numbers((1, 3, 5), (2, 3, 3), None) == ((0, 1, 2),) * 3
    dn = ConvDimensionNumbers((0, 2, 1), (2, 1, 0), (0, 2, 1))
    assert conv.conv_dimension_numbers((1, 5, 3), (3, 3, 4), dn) == dn
    # Spatial dimensions follow the kernel spec's order.
    assert conv.conv_dimension_numbers((1, 5, 6, 3), (3, 2, 3, 4), ("NHWC", "WHIO", "NWHC")) == \
        ConvDimensionNumbers((0, 3, 2, 1), (3, 2, 0, 1), (0, 3, 1, 2))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_channels_last_equals_channels_first(n):
    sp = "WHD"[:n][::-1] if n < 3 else "DHW"
    x = RNG.standard_normal((2, 3) + (5,) * n)
    w = RNG.standard_normal((4, 3) + (2,) * n)
    strides, pads = (2,) * n, [(1, 0)] * n
    ref = conv_general_dilated(jnp.asarray(x), jnp.asarray(w), strides, pads, rhs_dilation=(2,) * n)
    last = tuple(range(2, n + 2))
    x_l = np.transpose(x, (0,) + last + (1,))
    w_l = np.transpose(w, last + (1, 0))
    specs = ("N" + sp + "C", sp + "IO", "N" + sp + "C")
    out = conv_general_dilated(jnp.asarray(x_l), jnp.asarray(w_l), strides, pads, rhs_dilation=(2,) * n,
                               dimension_numbers=specs)
    np.testing.assert_allclose(np.asarray(out), np.transpose(np.asarray(ref), (0,) + last + (1,)), **TOL)
    g = RNG.standard_normal(out.shape)

    def cl(a, b):
        return jnp.sum(conv_general_dilated(a, b, strides, pads, rhs_dilation=(2,) * n,
                                            dimension_numbers=specs) * g)

    def cf(a, b):
        return jnp.sum(conv_general_dilated(a, b, strides, pads, rhs_dilation=(2,) * n)
                       * np.transpose(g, (0, n + 1) + tuple(range(1, n + 1))))

    gl = fg.grad(cl, argnums=(0, 1))(jnp.asarray(x_l), jnp.asarray(w_l))
    gf = fg.grad(cf, argnums=(0, 1))(jnp.asarray(x), jnp.asarray(w))
    np.testing.assert_allclose(np.asarray(gl[0]), np.transpose(np.asarray(gf[0]), (0,) + last + (1,)), **TOL)
    np.testing.assert_allclose(np.asarray(gl[1]), np.transpose(np.asarray(gf[1]), last + (1, 0)), **TOL)


# --- vmap, jit, higher order ----------------------------------------------------------------------

VMAP_CONFIGS = [  # (feature groups, batch groups, dimension_numbers)
    (1, 1, None), (2, 1, None), (1, 2, None), (2, 1, ("NHWC", "HWIO", "NHWC")), (1, 2, ("HNWC", "WOIH", "CWHN")),
]


@pytest.mark.parametrize("G,B,dn", VMAP_CONFIGS)
@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (2, 1)])
def test_vmap_matches_loop(G, B, dn, axes):
    spec = dn or ("NCHW", "OIHW", "NCHW")
    lhs_sizes, rhs_sizes = dict(N=2 * B, C=2 * G, H=5, W=4), dict(O=2 * G * B, I=2, H=3, W=2)
    V = 3
    lhs1 = RNG.standard_normal(tuple(lhs_sizes[c] for c in spec[0]))
    rhs1 = RNG.standard_normal(tuple(rhs_sizes[c] for c in spec[1]))
    lhs = RNG.standard_normal(lhs1.shape[:axes[0]] + (V,) + lhs1.shape[axes[0]:]) if axes[0] is not None else lhs1
    rhs = RNG.standard_normal(rhs1.shape[:axes[1]] + (V,) + rhs1.shape[axes[1]:]) if axes[1] is not None else rhs1

    def f(a, b):
        return conv_general_dilated(a, b, (2, 1), "SAME", (1, 2), (2, 1), dn, G, B)

    def pick(x, ax, i):
        return x if ax is None else np.take(x, i, axis=ax)

    got = fg.vmap(f, in_axes=axes)(jnp.asarray(lhs), jnp.asarray(rhs))
    want = np.stack([np.asarray(f(jnp.asarray(pick(lhs, axes[0], i)), jnp.asarray(pick(rhs, axes[1], i))))
                     for i in range(V)])
    np.testing.assert_allclose(np.asarray(got), want, **TOL)
    # Per-example gradients: vmap of grad (batches the transposed convolutions too).
    gf = fg.grad(lambda a, b: jnp.sum(jnp.sin(f(a, b))), argnums=(0, 1))
    got = fg.vmap(gf, in_axes=axes)(jnp.asarray(lhs), jnp.asarray(rhs))
    for i in range(V):
        want = gf(jnp.asarray(pick(lhs, axes[0], i)), jnp.asarray(pick(rhs, axes[1], i)))
        np.testing.assert_allclose(np.asarray(got[0][i]), np.asarray(want[0]), **TOL)
        np.testing.assert_allclose(np.asarray(got[1][i]), np.asarray(want[1]), **TOL)


def test_jit_matches_eager():
    x = jnp.asarray(RNG.standard_normal((2, 4, 6, 5)))
    w = jnp.asarray(RNG.standard_normal((4, 2, 3, 2)))

    def f(x, w):
        y = conv_general_dilated(x, w, (2, 1), [(1, 1), (0, 1)], (1, 2), (2, 1), feature_group_count=2)
        return jnp.sum(jnp.tanh(y) ** 2)

    np.testing.assert_allclose(np.asarray(fg.jit(f)(x, w)), np.asarray(f(x, w)), **TOL)
    g_jit = fg.jit(fg.grad(f, argnums=(0, 1)))(x, w)
    g_eager = fg.grad(f, argnums=(0, 1))(x, w)
    for a, b in zip(g_jit, g_eager):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **TOL)
    vg = fg.jit(fg.vmap(fg.grad(f, argnums=1), in_axes=(0, None)))(jnp.stack([x, 2 * x]), w)
    np.testing.assert_allclose(np.asarray(vg[1]), np.asarray(fg.grad(f, argnums=1)(2 * x, w)), **TOL)


def test_second_order_kernel_hvp_vs_finite_differences():
    x = jnp.asarray(RNG.standard_normal((2, 2, 5, 5)))
    w0 = RNG.standard_normal((4, 1, 3, 2))
    v = RNG.standard_normal(w0.shape)

    def f(w):
        y = conv_general_dilated(x, w, (2, 1), "SAME", (1, 1), (1, 2), feature_group_count=2)
        return jnp.sum(y ** 2)

    grad_f = fg.grad(f)
    hvp = fg.grad(lambda w: jnp.sum(grad_f(w) * v))(jnp.asarray(w0))
    eps = 1e-4
    fd = (np.asarray(grad_f(jnp.asarray(w0 + eps * v))) - np.asarray(grad_f(jnp.asarray(w0 - eps * v)))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(hvp), fd, rtol=1e-6, atol=1e-6)
    # And the full second-order check in both modes, for both operands of a strided, dilated conv.
    check_grads(lambda a, b: jnp.sin(conv_general_dilated(a, b, (1, 2), [(1, 0), (2, 1)], (2, 1), (1, 1))),
                (jnp.asarray(RNG.standard_normal((1, 2, 3, 4))), jnp.asarray(RNG.standard_normal((2, 2, 2, 2)))),
                order=2)


# --- reduce_window --------------------------------------------------------------------------------

RW_CONFIGS = {  # shape, window, strides, padding, base_dilation, window_dilation
    "1d-valid": ((7,), (3,), (1,), "VALID", None, None),
    "1d-same-stride": ((7,), (3,), (2,), "SAME", None, None),
    "1d-explicit": ((6,), (2,), (2,), [(1, 2)], None, None),
    "2d-pool": ((2, 3, 6, 6), (1, 1, 2, 2), (1, 1, 2, 2), "VALID", None, None),
    "2d-same": ((2, 5, 5), (1, 3, 3), (1, 2, 1), "SAME", None, None),
    "2d-explicit": ((5, 4), (2, 3), (1, 2), [(1, 0), (2, 1)], None, None),
    "2d-window-dilation": ((6, 6), (2, 2), (1, 2), "VALID", None, (2, 3)),
    "2d-base-dilation": ((3, 4), (2, 2), (1, 1), [(1, 1), (0, 0)], (2, 1), None),
    "3d": ((4, 3, 4), (2, 2, 3), (2, 1, 1), "SAME", None, None),
    "3d-dilations": ((3, 3, 4), (2, 1, 2), (1, 1, 2), [(0, 1), (1, 0), (1, 1)], (1, 2, 1), (2, 1, 1)),
}
KINDS = {"sum": (lax.add, 0.0), "max": (lax.max, -np.inf), "min": (lax.min, np.inf)}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", list(RW_CONFIGS))
def test_reduce_window_matches_loops(kind, name):
    shape, window, strides, padding, bd, wd = RW_CONFIGS[name]
    comp, init = KINDS[kind]
    x = RNG.standard_normal(shape)
    params = windowed.reduce_window_params(shape, window, strides, padding, bd, wd)
    loops = (kind, window, strides, params["padding"], params["base_dilation"], params["window_dilation"])

    def f(a):
        return reduce_window(a, init, comp, window, strides, padding, bd, wd)

    out, pullback = fg.vjp(f, jnp.asarray(x))
    ref = ref_reduce_window(x, init, *loops)
    np.testing.assert_array_equal(np.isfinite(np.asarray(out)), np.isfinite(ref))
    np.testing.assert_allclose(np.asarray(out), ref, **TOL)
    g = RNG.standard_normal(ref.shape)
    np.testing.assert_allclose(np.asarray(pullback(jnp.asarray(g))[0]), ref_reduce_window(x, init, *loops, g=g)[1],
                               **TOL)
    t = RNG.standard_normal(shape)
    _, t_out = fg.jvp(f, (jnp.asarray(x),), (jnp.asarray(t),))
    # The jvp is the transpose of the vjp: <J t, g> == <t, J^T g>.
    np.testing.assert_allclose(np.sum(np.asarray(t_out) * g), np.sum(t * ref_reduce_window(x, init, *loops, g=g)[1]),
                               **TOL)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_pooling_ties_send_the_gradient_to_the_first_extreme(kind):
    x = RNG.integers(0, 3, (2, 6, 5)).astype(float)  # many ties
    comp, init = KINDS[kind]
    args = ((1, 3, 2), (1, 2, 1), [(0, 0), (1, 1), (0, 1)])
    out, pullback = fg.vjp(lambda a: reduce_window(a, init, comp, *args), jnp.asarray(x))
    g = RNG.standard_normal(out.shape)
    params = windowed.reduce_window_params(x.shape, *args)
    ref_out, ref_dx = ref_reduce_window(x, init, kind, args[0], args[1], params["padding"], (1,) * 3, (1,) * 3, g=g)
    np.testing.assert_allclose(np.asarray(out), ref_out)
    np.testing.assert_allclose(np.asarray(pullback(jnp.asarray(g))[0]), ref_dx, **TOL)
    # A single 2x2 window of equal values: everything goes to its first element.
    d = fg.grad(lambda a: jnp.sum(reduce_window(a, init, comp, (2, 2), (2, 2), "VALID")))(jnp.ones((2, 2)))
    np.testing.assert_array_equal(np.asarray(d), [[1.0, 0.0], [0.0, 0.0]])


@pytest.mark.parametrize("select_prim,kind", [(ge_p, "max"), (le_p, "min")])
def test_selection_cards_gather_and_scatter_at_the_first_extreme(select_prim, kind):
    x = RNG.integers(0, 3, (3, 7, 6)).astype(float)  # ties, padding, strides, window dilation
    params = windowed.reduce_window_params(x.shape, (1, 2, 3), (1, 2, 1), [(0, 0), (1, 1), (1, 0)], None,
                                           (1, 1, 2))
    loops = (kind, params["window_dimensions"], params["window_strides"], params["padding"], (1, 1, 1),
             params["window_dilation"])
    out = ref_reduce_window(x, KINDS[kind][1], *loops)
    g = RNG.standard_normal(out.shape)
    scattered = windowed.select_and_scatter_add_p.bind(jnp.asarray(g), jnp.asarray(x), select_prim=select_prim,
                                                       **params)
    np.testing.assert_allclose(np.asarray(scattered), ref_reduce_window(x, KINDS[kind][1], *loops, g=g)[1], **TOL)
    # gather is scatter's transpose: <gather(t), g> == <t, scatter(g)>
    t = RNG.standard_normal(x.shape)
    gathered = windowed.select_and_gather_add_p.bind(jnp.asarray(t), jnp.asarray(x), select_prim=select_prim,
                                                     **params)
    np.testing.assert_allclose(np.sum(np.asarray(gathered) * g), np.sum(t * np.asarray(scattered)), **TOL)
    # Non-finite cotangents stay in their own window.
    g_inf = np.zeros_like(g)
    g_inf[0, 0, 0] = np.inf
    s_inf = np.asarray(windowed.select_and_scatter_add_p.bind(jnp.asarray(g_inf), jnp.asarray(x),
                                                              select_prim=select_prim, **params))
    assert np.isinf(s_inf).sum() == 1 and not np.isnan(s_inf).any()


# --- the faces' conventions at NaN, -inf and windows in the padding (the kink param) -------------------

def _ref_selected(x, kind, window, strides, padding, wdil, kink):
    """Per window (row-major), the flat operand index that receives its derivative, or None, by loops.
    "jax": XLA's select scan over the padded window (padding holds the identity and can be selected; a
    NaN never satisfies select, so the scan takes the next element). "torch": torch's max pooling kernel,
    max = (v > best or isnan(v)) over the window's operand elements from the identity, the index starting at
    the first lattice point at or past 0 per dim, flattened without bounds (dropped past the operand)."""
    ident = -np.inf if kind == "max" else np.inf
    keep = operator.ge if kind == "max" else operator.le
    better = operator.gt if kind == "max" else operator.lt
    outs = [(n + lo + hi - ((w - 1) * d + 1)) // s + 1 for n, w, s, (lo, hi), d
            in zip(x.shape, window, strides, padding, wdil)]
    sel = []
    for o in np.ndindex(*outs):
        starts = [oi * s - lo for oi, s, (lo, _) in zip(o, strides, padding)]
        pts = [tuple(st + ki * d for st, ki, d in zip(starts, k, wdil)) for k in np.ndindex(*window)]
        inside = [all(0 <= q < n for q, n in zip(pt, x.shape)) for pt in pts]
        vals = [x[pt] if ok else ident for pt, ok in zip(pts, inside)]
        if kink == "jax":
            j = 0
            for i in range(1, len(pts)):
                if not keep(vals[j], vals[i]):
                    j = i
            sel.append(int(np.ravel_multi_index(pts[j], x.shape)) if inside[j] else None)
            continue
        first = [st if st >= 0 else st + (-st + d - 1) // d * d for st, d in zip(starts, wdil)]
        flat = 0
        for f, n in zip(first, x.shape):
            flat = flat * n + f
        best = ident
        for pt, ok, v in zip(pts, inside, vals):
            if ok and (better(v, best) or np.isnan(v)):
                best, flat = v, int(np.ravel_multi_index(pt, x.shape))
        sel.append(flat if flat < x.size else None)
    return sel, tuple(outs)


_NONFINITE = [np.nan, -np.inf, np.inf, 0.0]


@pytest.mark.parametrize("kink", ["jax", "torch"])
@pytest.mark.parametrize("select_prim,kind", [(ge_p, "max"), (le_p, "min")])
@given(st.integers(0, 2**32 - 1))
def test_selection_conventions_at_nan_inf_and_windows_in_the_padding(kink, select_prim, kind, seed):
    """select_and_scatter_add/gather_add under either face's convention, against the loops: operands with
    NaN, +-inf and ties, dilated windows and padding up to a window's span (windows in the padding alone)."""
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 4))
    shape = tuple(int(v) for v in rng.integers(1, 5, nd))
    window = tuple(int(v) for v in rng.integers(1, 4, nd))
    wdil = tuple(int(v) for v in rng.integers(1, 4, nd))
    strides = tuple(int(v) for v in rng.integers(1, 3, nd))
    padding = tuple((int(rng.integers(0, (w - 1) * d + 2)), int(rng.integers(0, (w - 1) * d + 2)))
                    for w, d in zip(window, wdil))
    x = rng.integers(-2, 3, shape).astype(float)
    mask = rng.random(shape) < 0.3
    x[mask] = rng.choice(_NONFINITE, int(mask.sum()))
    params = windowed.reduce_window_params(shape, window, strides, padding, None, wdil)
    sel, outs = _ref_selected(x, kind, window, strides, params["padding"], wdil, kink)
    g = rng.standard_normal(outs)
    want = np.zeros(x.size)
    for gi, i in zip(g.reshape(-1), sel):
        if i is not None:
            want[i] += gi
    kw = dict(params, select_prim=select_prim, **({} if kink == "jax" else {"kink": kink}))
    got = windowed.select_and_scatter_add_p.bind(jnp.asarray(g), jnp.asarray(x), **kw)
    np.testing.assert_allclose(np.asarray(got), want.reshape(shape), **TOL)
    t = rng.standard_normal(shape)
    want_t = np.array([0.0 if i is None else t.reshape(-1)[i] for i in sel]).reshape(outs)
    np.testing.assert_allclose(np.asarray(windowed.select_and_gather_add_p.bind(jnp.asarray(t), jnp.asarray(x),
                                                                                **kw)), want_t, **TOL)


def test_torch_convention_vmap_keeps_each_examples_starting_index():
    """A window wholly in the padding sends its derivative to torch's starting index past the operand (into
    the next plane, or nowhere after the last): under vmap, never into the next example."""
    x = np.array([[[3.0], [4.0]], [[5.0], [6.0]]])  # 2 examples of (2 planes, width 1)

    def f(a):  # torch's max_pool1d(a, 2, 1, 1, 2): the window (-1, 1) lies in the padding
        return jnp.sum(windowed.reduce_window_max(a, (1, 2), (1, 1), [(0, 0), (1, 1)], None, (1, 2),
                                                  kink="torch") * jnp.asarray([[1.0], [10.0]]))
    loop = np.stack([np.asarray(fg.grad(f)(jnp.asarray(xi))) for xi in x])
    np.testing.assert_array_equal(loop, [[[0.0], [1.0]], [[0.0], [1.0]]])
    np.testing.assert_array_equal(np.asarray(fg.vmap(fg.grad(f))(jnp.asarray(x))), loop)
    np.testing.assert_array_equal(np.asarray(fg.vmap(fg.grad(f), in_axes=2, out_axes=2)(
        jnp.asarray(np.moveaxis(x, 0, 2)))), np.moveaxis(loop, 0, 2))


def test_kink_param_checked():
    x = jnp.ones((3, 3))
    with pytest.raises(TypeError, match="reduce_window_max: kink must be 'jax' or 'torch'"):
        windowed.reduce_window_max(x, (2, 2), (1, 1), "VALID", kink="pytorch")
    with pytest.raises(ValueError, match="kink='torch'.*base dilation"):
        windowed.reduce_window_max(x, (2, 2), (1, 1), "VALID", (2, 1), kink="torch")


def test_reduce_window_max_grad_at_nan_inf_and_padding_as_jax():
    """The JAX face: jax.grad of lax.reduce_window max/min where windows hold NaN, -inf or padding alone."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(3)
    for seed in range(12):
        x = rng.integers(-2, 3, (4, 5)).astype(np.float32)
        mask = rng.random(x.shape) < 0.35
        x[mask] = rng.choice(np.float32(_NONFINITE), int(mask.sum()))
        for comp, jcomp, init in ((lax.max, jax.lax.max, -np.inf), (lax.min, jax.lax.min, np.inf)):
            args = ((2, 3), (1, 2), [(1, 2), (2, 3)])
            g = rng.integers(1, 9, (6, 4)).astype(np.float32)  # (exact sums in any order)
            ours = fg.grad(lambda a: jnp.sum(reduce_window(a, init, comp, *args) * g))(jnp.asarray(x))
            theirs = jax.grad(lambda a: jax.numpy.sum(jax.lax.reduce_window(a, init, jcomp, *args) * g))(x)
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_reduce_window_init_values_and_computations():
    x = RNG.standard_normal((4, 5))
    args = ((2, 3), (1, 2), [(1, 1), (2, 0)])
    pads = windowed.reduce_window_params(x.shape, *args)["padding"]
    for comp in (lax.add, jnp.add, "add", operator.add, np.add, lambda a, b: a + b):
        np.testing.assert_allclose(np.asarray(reduce_window(jnp.asarray(x), 0.0, comp, *args)),
                                   ref_reduce_window(x, 0.0, "sum", args[0], args[1], pads, (1, 1), (1, 1)), **TOL)
    for comp in (lax.max, jnp.maximum, "max", lambda a, b: jnp.maximum(a, b)):
        np.testing.assert_allclose(np.asarray(reduce_window(jnp.asarray(x), -np.inf, comp, *args)),
                                   ref_reduce_window(x, -np.inf, "max", args[0], args[1], pads, (1, 1), (1, 1)))
    for comp in (lax.min, jnp.minimum, "min"):
        np.testing.assert_allclose(np.asarray(reduce_window(jnp.asarray(x), np.inf, comp, *args)),
                                   ref_reduce_window(x, np.inf, "min", args[0], args[1], pads, (1, 1), (1, 1)))
    # A non-identity init value fills the padding and starts every window (XLA's semantics).
    for kind, init in (("sum", 1.5), ("max", 0.25), ("min", -0.25)):
        comp = KINDS[kind][0]
        got = reduce_window(jnp.asarray(x), init, comp, *args)
        np.testing.assert_allclose(np.asarray(got), ref_reduce_window(x, init, kind, args[0], args[1], pads,
                                                                      (1, 1), (1, 1)), **TOL)
        got = reduce_window(jnp.asarray(x), jnp.asarray(init), comp, *args)
        np.testing.assert_allclose(np.asarray(got), ref_reduce_window(x, init, kind, args[0], args[1], pads,
                                                                      (1, 1), (1, 1)), **TOL)
    # Integers: the max identity is the dtype's minimum.
    xi = RNG.integers(-5, 5, (4, 5))
    got = reduce_window(jnp.asarray(xi), np.iinfo(np.int64).min, lax.max, *args)
    assert got.dtype == xi.dtype
    ref = ref_reduce_window(xi.astype(float), -np.inf, "max", args[0], args[1], pads, (1, 1), (1, 1))
    np.testing.assert_array_equal(np.asarray(got), ref)


@pytest.mark.parametrize("kind", list(KINDS))
def test_reduce_window_vmap_jit_and_second_order(kind):
    comp, init = KINDS[kind]
    x = RNG.permutation(180).reshape(3, 2, 5, 6) / 60.0  # distinct values: no ties for finite differences

    def f(a):
        return reduce_window(a, init, comp, (1, 2, 2), (1, 2, 1), "SAME", None, (1, 1, 2))

    got = fg.vmap(f, in_axes=2, out_axes=1)(jnp.asarray(x))
    want = np.stack([np.asarray(f(jnp.asarray(x[:, :, i]))) for i in range(x.shape[2])], axis=1)
    np.testing.assert_allclose(np.asarray(got), want, **TOL)
    np.testing.assert_allclose(np.asarray(fg.jit(f)(jnp.asarray(x[0]))), np.asarray(f(jnp.asarray(x[0]))), **TOL)

    def loss(a):
        return jnp.sum(jnp.sin(f(a)) ** 2)

    g_v = fg.vmap(fg.grad(loss))(jnp.asarray(x))
    g_j = fg.jit(fg.grad(loss))(jnp.asarray(x[1]))
    np.testing.assert_allclose(np.asarray(g_v[1]), np.asarray(fg.grad(loss)(jnp.asarray(x[1]))), **TOL)
    np.testing.assert_allclose(np.asarray(g_j), np.asarray(g_v[1]), **TOL)
    check_grads(lambda a: jnp.sin(f(a)), (jnp.asarray(x[0]),), order=2)


def test_max_pool_after_conv_trains_end_to_end():
    """A conv -> relu -> 2x2 max pool -> sum network: gradients against the loop references."""
    x = RNG.standard_normal((2, 1, 6, 6))
    w = RNG.standard_normal((3, 1, 3, 3))

    def net(w):
        h = jnp.maximum(conv.conv(jnp.asarray(x), w, (1, 1), "SAME"), 0.0)
        return jnp.sum(reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"))

    got = fg.grad(net)(jnp.asarray(w))
    h = np.maximum(ref_conv(x, w, (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1)), 0)
    pool_params = ((1, 1, 2, 2), (1, 1, 2, 2), [(0, 0)] * 4, (1,) * 4, (1,) * 4)
    out, dh = ref_reduce_window(h, -np.inf, "max", *pool_params, g=np.ones((2, 3, 3, 3)))
    dh = dh * (h > 0)
    _, _, dw = ref_conv(x, w, (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), g=dh)
    np.testing.assert_allclose(np.asarray(got), dw, **TOL)


# --- errors ---------------------------------------------------------------------------------------

def test_mismatched_channels_raise_a_clear_error():
    x, w = jnp.ones((1, 3, 5, 5)), jnp.ones((4, 2, 3, 3))
    for fn in (lambda a, b: conv.conv(a, b, (1, 1), "SAME"),
               fg.jit(lambda a, b: conv.conv(a, b, (1, 1), "SAME"))):
        with pytest.raises(ValueError, match=r"conv_general_dilated: lhs feature dimension \(size 3\).*"
                                             r"rhs input feature dimension \(size 2\).*f64\[1,3,5,5\].*f64\[4,2,3,3\]"):
            fn(x, w)
    with pytest.raises(ValueError, match="conv_general_dilated.*feature_group_count"):
        conv_general_dilated(jnp.ones((1, 4, 5, 5)), jnp.ones((3, 2, 3, 3)), (1, 1), "SAME",
                             feature_group_count=2)
    with pytest.raises(ValueError, match="at most one of feature_group_count"):
        conv_general_dilated(jnp.ones((2, 4, 5, 5)), jnp.ones((4, 2, 3, 3)), (1, 1), "SAME",
                             feature_group_count=2, batch_group_count=2)
    with pytest.raises(TypeError, match="conv_general_dilated.*same number of dimensions"):
        conv.conv(jnp.ones((1, 3, 5, 5)), jnp.ones((4, 3, 3)), (1, 1), "SAME")
    with pytest.raises(TypeError, match="conv_general_dilated.*dimension_numbers"):
        conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO"))
    with pytest.raises(TypeError, match="conv_general_dilated.*'C'"):
        conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWX", "HWIO", "NHWC"))
    with pytest.raises(TypeError, match="conv_general_dilated.*window_strides"):
        conv.conv(jnp.ones((1, 2, 5, 5)), jnp.ones((4, 2, 3, 3)), (1,), "SAME")
    with pytest.raises(TypeError, match="conv_general_dilated.*dtype"):
        conv.conv(jnp.ones((1, 2, 5, 5), dtype=jnp.float32), jnp.ones((4, 2, 3, 3), dtype=jnp.float64), (1, 1), "SAME")
    with pytest.raises(ValueError, match="padding must be"):
        conv.conv(jnp.ones((1, 2, 5, 5)), jnp.ones((4, 2, 3, 3)), (1, 1), "FULL")


def test_reduce_window_errors():
    x = jnp.ones((4, 5))
    with pytest.raises(NotImplementedError, match="reduce_window: computation"):
        reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="reduce_window: window_dimensions"):
        reduce_window(x, 0.0, lax.add, (2,), (1, 1), "VALID")
    with pytest.raises(ValueError, match="reduce_window_max: window_strides entries must be positive"):
        reduce_window(x, -np.inf, lax.max, (2, 2), (0, 1), "VALID")


# --- the cases: every card registered here has one, and it passes the generic checks ---------------

def test_every_card_has_a_case():
    mine = {p.name for p in registry.values()
            if p.impl_factory.__module__ in (conv.__name__, windowed.__name__)}
    assert mine == {"conv_general_dilated", "reduce_window_sum", "reduce_window_max", "reduce_window_min",
                    "select_and_gather_add", "select_and_scatter_add"}
    assert mine == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_cases_pass_generic_checks(name, data):
    args, params = data.draw(st.composite(lambda draw: CASES[name](draw))())
    prim = registry[name]
    args = [jnp.asarray(a) for a in args]

    def f(*a):
        return prim.bind(*a, **params)

    out = f(*args)
    assert out.size > 0 and np.isfinite(np.asarray(out)).all()
    check_grads(f, args, order=1)
    np.testing.assert_allclose(np.asarray(fg.jit(f)(*args)), np.asarray(out), **TOL)
    stacked = [jnp.stack([a, 2 * a]) for a in args]
    got = fg.vmap(f)(*stacked)
    for i in range(2):
        np.testing.assert_allclose(np.asarray(got[i]), np.asarray(f(*[s[i] for s in stacked])), **TOL)


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("shape,window", [((3, 2, 6, 8), (1, 1, 2, 2)), ((4, 3, 6), (2, 1, 3)),
                                          ((2, 4, 4), (1, 4, 2))])
def test_tiling_windows_scatter_like_the_general_path(kind, shape, window, monkeypatch):
    """Windows that tile the operand (max pooling's usual case) take a faster path; it must give the
    general path's values exactly: ties to the first extreme, NaN windows send nothing, non-finite
    and -0.0 cotangents stay in their window, 0.0 elsewhere."""
    x = RNG.integers(0, 3, shape).astype(np.float32)  # many ties
    x.reshape(-1)[::7] = np.nan
    params = windowed.reduce_window_params(shape, window, window, "VALID")
    select_prim = ge_p if kind == "max" else le_p
    assert windowed._tiling(shape, params) is not None
    out_shape = tuple(n // w for n, w in zip(shape, window))
    g = RNG.standard_normal(out_shape).astype(np.float32)
    g.reshape(-1)[1], g.reshape(-1)[2], g.reshape(-1)[3] = np.inf, -0.0, np.nan

    def scatter(gg):
        return np.asarray(windowed.select_and_scatter_add_p.bind(jnp.asarray(gg), jnp.asarray(x),
                                                                 select_prim=select_prim, **params))
    fast, fast_finite = scatter(g), scatter(np.nan_to_num(g, posinf=0.0, nan=0.0))
    monkeypatch.setattr(windowed, "_tiling", lambda *a: None)
    general, general_finite = scatter(g), scatter(np.nan_to_num(g, posinf=0.0, nan=0.0))
    for a, b in ((fast, general), (fast_finite, general_finite)):
        assert a.dtype == b.dtype == np.float32 and a.shape == b.shape == shape
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
    xf = np.nan_to_num(x, nan=0.0)  # no NaN: the loop reference applies
    loops = (kind, window, window, ((0, 0),) * len(shape), (1,) * len(shape), (1,) * len(shape))
    gf = np.nan_to_num(g, posinf=0.0, nan=0.0)
    monkeypatch.undo()
    got = np.asarray(windowed.select_and_scatter_add_p.bind(jnp.asarray(gf), jnp.asarray(xf),
                                                            select_prim=select_prim, **params))
    np.testing.assert_array_equal(got, ref_reduce_window(xf.astype(float), KINDS[kind][1], *loops,
                                                         g=gf.astype(float))[1].astype(np.float32))


@pytest.mark.parametrize("gdtype", [np.float16, np.float64, np.complex64, np.complex128])
def test_tiling_windows_scatter_bits_in_every_cotangent_dtype(gdtype, monkeypatch):
    """The tiled path writes each cotangent's bits times the hit mask (an integer product) where an
    unsigned type of the dtype's size exists, else a float product and a + 0.0 pass: both must give
    the general path's values bit for bit (-0.0 -> 0.0 at the hit, +0.0 away from it, inf/NaN kept)."""
    shape, window = (2, 3, 4, 6), (1, 1, 2, 2)
    x = RNG.integers(0, 2, shape).astype(np.float64)  # many ties
    params = windowed.reduce_window_params(shape, window, window, "VALID")
    g = RNG.standard_normal((2, 3, 2, 3)).astype(gdtype)
    if np.dtype(gdtype).kind == "c":
        g = g + 1j * RNG.standard_normal(g.shape).astype(gdtype)
    g.reshape(-1)[:4] = [-0.0, -np.inf, np.nan, -2.5]

    def scatter():
        return np.asarray(windowed.select_and_scatter_add_p.bind(jnp.asarray(g), jnp.asarray(x),
                                                                 select_prim=ge_p, **params))
    fast = scatter()
    monkeypatch.setattr(windowed, "_tiling", lambda *a: None)
    general = scatter()
    assert fast.dtype == general.dtype == np.dtype(gdtype)
    assert fast.tobytes() == general.tobytes()
    # the exact values: 0.0 + g at the first maximum of each 2x2 window (row-major order), +0.0 elsewhere
    want = np.zeros(shape, gdtype)
    for i, j, a, b in np.ndindex(2, 3, 2, 3):
        win = x[i, j, 2 * a:2 * a + 2, 2 * b:2 * b + 2].reshape(-1)
        k = int(np.argmax(win))
        want[i, j, 2 * a + k // 2, 2 * b + k % 2] = g[i, j, a, b] + 0
    assert fast.tobytes() == want.tobytes()


@pytest.mark.parametrize("select_prim", [ge_p, le_p])
def test_selection_of_a_scalar_operand(select_prim):
    """A 0-d operand is its own (only) window: the cotangent goes to it, as a 0-d array."""
    params = windowed.reduce_window_params((), (), (), "VALID")
    got = windowed.select_and_scatter_add_p.bind(jnp.asarray(np.float32(3.0)), jnp.asarray(np.float32(2.0)),
                                                 select_prim=select_prim, **params)
    assert np.asarray(got).shape == () and float(got) == 3.0


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("shape,window", [((3, 2, 6, 8), (1, 1, 2, 2)), ((4, 3, 6), (2, 1, 3)),
                                          ((2, 3), (1, 1))])
def test_tiling_windows_reduce_like_the_general_path(kind, shape, window, monkeypatch):
    """max/min pooling over windows that tile the operand takes a faster path: the same values (NaN
    windows included), and always a new buffer (jit writes into it later), never a view of the input."""
    x = RNG.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[::5] = np.nan
    params = windowed.reduce_window_params(shape, window, window, "VALID")
    impl = windowed._CARDS[kind].impl
    fast = impl(x, **params)
    assert not np.shares_memory(fast, x)
    monkeypatch.setattr(windowed, "_tiling", lambda *a: None)
    general = impl(x, **params)
    assert fast.dtype == general.dtype and fast.shape == general.shape
    np.testing.assert_array_equal(fast, general)
