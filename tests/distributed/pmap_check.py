"""pmap across N processes, as JAX's multi-process pmap: after distributed.initialize, devices() lists every
process's CPU, pmap maps this process's device, and the collectives inside it act over the global axis (all
processes, in process order). Checked against exact values, against vmap(axis_name) over the whole global
batch in one process (the same program with every member local), and a data-parallel training step written
the JAX way (pmap + psum / pmean of gradients) against one process on the whole batch.
Rank 0 prints 'pmap ok N'."""
import numpy as np

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax

jax.distributed.initialize()
me, n = jax.process_index(), jax.process_count()
assert n > 1

# --- devices -------------------------------------------------------------------------------------------
devs = jax.devices()
assert [d.process_index for d in devs] == list(range(n)), devs
assert [d.id for d in devs] == [2048 * k for k in range(n)], devs  # JAX's CPU device ids
assert jax.local_devices() == [devs[me]] and jax.local_devices()[0].process_index == me
assert jax.device_count() == n and jax.local_device_count() == 1
assert jnp.ones(2).devices() == {devs[me]}
assert jax.local_devices(process_index=(me + 1) % n) == [devs[(me + 1) % n]]

# --- collectives over the global axis: exact values ----------------------------------------------------
x = jnp.array([[me + 1.0, -2.0 * (me + 1)]])  # this process's member: shape (1, 2)
every = np.array([[k + 1.0, -2.0 * (k + 1)] for k in range(n)], np.float32)  # all members, process order
ring = [(k, (k + 1) % n) for k in range(n)]


def body(v):
    return dict(psum=lax.psum(v, "i"), pmean=lax.pmean(v, "i"), pmax=lax.pmax(v, "i"), pmin=lax.pmin(v, "i"),
                index=lax.axis_index("i"), size=lax.psum(1, "i"), gather=lax.all_gather(v, "i"),
                tiled=lax.all_gather(v, "i", tiled=True), shift=lax.ppermute(v, "i", ring),
                tree=lax.psum({"a": v, "b": 2 * v}, "i"), scatter=lax.psum_scatter(jnp.arange(float(n)) * v[0], "i"))


out = jax.pmap(body, axis_name="i")(x)
np.testing.assert_allclose(out["psum"], every.sum(0)[None])
np.testing.assert_allclose(out["pmean"], every.mean(0)[None], rtol=1e-6)
np.testing.assert_array_equal(out["pmax"], every.max(0)[None])
np.testing.assert_array_equal(out["pmin"], every.min(0)[None])
np.testing.assert_array_equal(out["index"], [me])
np.testing.assert_array_equal(out["size"], [n])
np.testing.assert_array_equal(out["gather"], every[None])
np.testing.assert_array_equal(out["tiled"], every.reshape(1, -1))
np.testing.assert_array_equal(out["shift"], every[(me - 1) % n][None])
np.testing.assert_allclose(out["tree"]["b"], 2 * every.sum(0)[None])
np.testing.assert_allclose(out["scatter"], [me * every[:, 0].sum()])
# an unmapped operand differs between processes: still summed over every member
np.testing.assert_allclose(jax.pmap(lambda v, c: lax.psum(c, "i"), axis_name="i", in_axes=(0, None))(x, float(me)),
                           [n * (n - 1) / 2])

# --- the same program with every member in one process (vmap over the whole global batch) ----------------
X = np.random.default_rng(0).standard_normal((n, 3)).astype(np.float32)


def mixed(v):  # (JAX on 2 processes gives its vmap's values for this, pmin's derivative aside: JAX has none)
    i = lax.axis_index("i")
    g = jax.grad(lambda u: jnp.sum(lax.all_gather(u * u, "i") * jnp.arange(1.0, n + 1.0)[:, None]))(v)
    g2 = jax.grad(lambda u: lax.psum(jnp.sum(jnp.tanh(u) * (i + 1)), "i"))(v)
    g3 = jax.grad(lambda u: jnp.sum(lax.ppermute(u, "i", ring) ** 2 * (i + 1)))(v)
    g4 = jax.grad(lambda u: lax.pmin(jnp.sum(u ** 3), "i"))(v)
    return lax.pmax(jnp.sin(v) * (i + 1), "i") + g - lax.pmean(v, "i") * lax.ppermute(v, "i", ring), g2, g3, g4


want = jax.vmap(mixed, axis_name="i")(jnp.asarray(X))
got = jax.pmap(mixed, axis_name="i")(X[me:me + 1])
for a, b in zip(got, want):
    np.testing.assert_allclose(a[0], b[me], rtol=1e-5, atol=1e-6)

# grad around pmap (psum's transpose is psum, across processes too)
grad_out = jax.grad(lambda w: jnp.sum(jax.pmap(lambda w, v: lax.psum(jnp.sum(jnp.tanh(v * w)), "i"),
                                               axis_name="i", in_axes=(None, 0))(w, X[me:me + 1])))(jnp.ones(3))
# every process's output is the global sum, and each process differentiates its own copy of it: the
# cotangent 1 of every process comes back through psum's transpose (psum) as n, as in a single process's
# pmap over n devices (JAX 0.10 on n processes gives 1 here: see docs/distributed.md)
np.testing.assert_allclose(grad_out, n * (1 - np.tanh(X[me]) ** 2) * X[me], rtol=1e-5)

# --- data-parallel training, the JAX way --------------------------------------------------------------
rng = np.random.default_rng(1)
B = 6  # examples per process
XS, YS = rng.standard_normal((B * n, 4)).astype(np.float32), rng.standard_normal(B * n).astype(np.float32)
W0 = {"w": rng.standard_normal(4).astype(np.float32), "b": np.float32(0.5)}


def predict(p, xb):
    return jnp.tanh(xb @ p["w"] + p["b"])


def sum_loss(p, xb, yb):
    return jnp.sum((predict(p, xb) - yb) ** 2)


def psum_step(p, xb, yb):  # gradients of the summed loss, psum'd, divided by the global batch size
    g = lax.psum(jax.grad(sum_loss)(p, xb, yb), "i")
    return jax.tree_util.tree_map(lambda w, d: w - 0.1 * d / (B * n), p, g)


def pmean_step(p, xb, yb):  # gradients of the mean loss, pmean'd
    g = lax.pmean(jax.grad(lambda p: sum_loss(p, xb, yb) / B)(p), "i")
    return jax.tree_util.tree_map(lambda w, d: w - 0.1 * d, p, g)


def replicate(tree):
    return jax.tree_util.tree_map(lambda a: jnp.asarray(a)[None], tree)


mine = slice(B * me, B * (me + 1))
xb, yb = jnp.asarray(XS[mine])[None], jnp.asarray(YS[mine])[None]
for step in (psum_step, pmean_step):
    p, p_ref = replicate(W0), jax.tree_util.tree_map(jnp.asarray, W0)
    pstep = jax.pmap(step, axis_name="i")
    for _ in range(5):
        p = pstep(p, xb, yb)
        gref = jax.grad(sum_loss)(p_ref, jnp.asarray(XS), jnp.asarray(YS))
        p_ref = jax.tree_util.tree_map(lambda w, d: w - 0.1 * d / (B * n), p_ref, gref)
    for k in ("w", "b"):
        np.testing.assert_allclose(np.asarray(p[k])[0], np.asarray(p_ref[k]), rtol=1e-5, atol=1e-6)

# the pmap axis may not exceed this process's devices
try:
    jax.pmap(lambda v: v, axis_name="i")(jnp.ones((2, 3)))
except ValueError as e:
    assert "devices" in str(e)
else:
    raise AssertionError("pmap mapped 2 members onto 1 local device")

jax.distributed.shutdown()
assert jax.devices() == [jax.local_devices()[0]] and jax.devices()[0].id == 0
if me == 0:
    print("pmap ok", n, flush=True)
