"""jax.tree, key paths, eval_shape/ShapeDtypeStruct, device queries, disable_jit, linear_transpose,
closure_convert, funcgrad.dtypes and tree_util's flatten_one_level / tree_broadcast / treedef_tuple: behaviour
JAX documents, checked against explicit expectations."""
import collections
import functools

import numpy as np
import pytest

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad.tree_util import DictKey, GetAttrKey, SequenceKey, keystr

P = collections.namedtuple("P", ["x", "y"])
TREE = {"b": [1, (2, None)], "a": P(3, 4)}


def test_tree_module_basics():
    assert jax.tree.leaves(TREE) == [3, 4, 1, 2]
    leaves, td = jax.tree.flatten(TREE)
    assert jax.tree.unflatten(td, [x * 10 for x in leaves]) == {"b": [10, (20, None)], "a": P(30, 40)}
    assert jax.tree.structure(TREE) == td
    assert jax.tree.map(lambda u, v: u - v, TREE, TREE) == {"b": [0, (0, None)], "a": P(0, 0)}
    assert jax.tree.reduce(lambda u, v: u * v, TREE) == 24
    assert jax.tree.reduce(lambda u, v: u + [v], TREE, []) == [3, 4, 1, 2]
    assert jax.tree.reduce(lambda u, v: v, [], None) is None  # an initializer of None is used
    with pytest.raises(TypeError):
        jax.tree.reduce(lambda u, v: u, [])
    assert jax.tree.all([True, (1, {"a": 2})]) and not jax.tree.all([True, (0,)])
    assert jax.tree.leaves([1, (2, 3)], is_leaf=lambda t: isinstance(t, tuple)) == [1, (2, 3)]


def test_tree_transpose_and_broadcast():
    outer, inner = jax.tree.structure([0, 0, 0]), jax.tree.structure((0, 0))
    x = [(1, 2), (3, 4), (5, 6)]
    assert jax.tree.transpose(outer, inner, x) == ([1, 3, 5], [2, 4, 6])
    assert jax.tree.transpose(outer, None, x) == ([1, 3, 5], [2, 4, 6])
    assert jax.tree.broadcast((1, 2), ((0, 0), {"a": 0})) == ((1, 1), {"a": 2})


def test_tree_short_names_are_the_tree_util_functions():
    # one implementation: jax.tree.X is jax.tree_util.tree_X, as in JAX
    for short in ("map", "leaves", "structure", "flatten", "unflatten", "reduce", "all", "transpose", "broadcast",
                  "reduce_associative", "flatten_with_path", "leaves_with_path", "map_with_path"):
        assert getattr(jax.tree, short) is getattr(jax.tree_util, "tree_" + short), short
    # a None prefix is an empty node, not a leaf standing for the whole tree (JAX raises too)
    with pytest.raises(ValueError):
        jax.tree_util.tree_broadcast(None, [1, 2])
    assert jax.tree_util.tree_broadcast((1, None), ([2, 3], None)) == ([1, 1], None)
    # tree_transpose infers a None inner structure from the first entry
    outer = jax.tree.structure([0, 0])
    assert jax.tree_util.tree_transpose(outer, None, [{"a": 1, "b": 2}, {"a": 3, "b": 4}]) == {"a": [1, 3],
                                                                                              "b": [2, 4]}
    # reduce_associative's identity is a real value when given, even None
    assert jax.tree.reduce_associative(lambda a, b: a + b, [], identity=None) is None


def test_tree_broadcast_and_transpose_match_jax():
    jtu = pytest.importorskip("jax").tree_util
    for prefix, full in [((1, None), ([2, 3], None)), ({"a": 1}, {"a": [1, (2, 3)]}), (1, {"x": None, "y": [1]}),
                         ([1, 2], [[3], {"k": 4}])]:
        assert jax.tree_util.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
    for prefix, full in [(None, [1, 2]), ((1, 2), (3,))]:
        with pytest.raises(ValueError):
            jtu.tree_broadcast(prefix, full)
        with pytest.raises(ValueError):
            jax.tree_util.tree_broadcast(prefix, full)
    x = [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert jax.tree_util.tree_transpose(jax.tree.structure([0, 0]), None, x) == \
        jtu.tree_transpose(jtu.tree_structure([0, 0]), None, x)


def test_paths():
    pairs = jax.tree.leaves_with_path(TREE)
    assert [p for p, _ in pairs] == [(DictKey("a"), GetAttrKey("x")), (DictKey("a"), GetAttrKey("y")),
                                     (DictKey("b"), SequenceKey(0)), (DictKey("b"), SequenceKey(1), SequenceKey(0))]
    assert [v for _, v in pairs] == jax.tree.leaves(TREE)
    assert [keystr(p) for p, _ in pairs] == ["['a'].x", "['a'].y", "['b'][0]", "['b'][1][0]"]
    assert keystr((DictKey("a"), SequenceKey(0)), simple=True, separator="/") == "a/0"
    out = jax.tree.map_with_path(lambda p, v, w: (len(p), v + w), TREE, TREE)
    assert out == {"b": [(2, 2), ((3, 4), None)], "a": P((2, 6), (2, 8))}
    flat, td = jax.tree.flatten_with_path(TREE)
    assert td == jax.tree.structure(TREE) and flat == pairs


def test_eval_shape_and_shapedtypestruct():
    s = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    assert (s.shape, s.dtype, s.ndim, s.size) == ((2, 3), np.float32, 2, 6)
    calls = []

    def f(x, y, *, k):
        calls.append(1)
        return {"mm": x @ y, "n": jnp.sum(x, axis=k).astype(jnp.int32)}
    out = jax.eval_shape(functools.partial(f, k=1), s, jnp.ones((3, 5), jnp.float64))
    assert calls == [1]
    assert out == {"mm": jax.ShapeDtypeStruct((2, 5), jnp.float64), "n": jax.ShapeDtypeStruct((2,), jnp.int32)}
    with pytest.raises(ValueError, match="matmul"):
        jax.eval_shape(lambda a, b: a @ b, s, s)
    assert jax.typeof(jnp.ones((4,), jnp.int32)).shape == (4,)


def test_devices():
    assert jax.device_count() == len(jax.local_devices()) == jax.local_device_count() >= 1
    assert jax.process_index() == 0 and jax.process_count() == 1
    assert jax.default_backend() in ("cpu", "gpu")
    assert isinstance(jax.local_devices()[0], jax.Device)
    got = jax.device_get({"a": jnp.arange(3), "b": 1})
    assert isinstance(got["a"], np.ndarray) and got["a"].tolist() == [0, 1, 2] and got["b"] == 1
    with pytest.raises(RuntimeError):
        jax.device_count("tpu")


def test_disable_jit_runs_python_eagerly():
    seen = []

    @jax.jit
    def f(x):
        seen.append(type(x).__name__)
        return x * 2 if x.sum() > 0 else -x  # Python control flow on values: fails when traced
    with jax.disable_jit():
        assert np.allclose(f(jnp.ones(2)), 2) and np.allclose(f(-jnp.ones(2)), 1)
    assert seen == ["Array", "Array"]
    with pytest.raises(jax.ConcretizationError):
        f(jnp.ones(2))
    g = jax.jit(lambda x: x + 1)
    g(jnp.ones(2))
    assert g._cache_size() == 1
    jax.clear_caches()
    assert g._cache_size() == 0


def test_clear_caches_with_a_dead_weak_proxy_alive():
    """clear_caches walks gc's objects: a weakref.proxy whose referent is gone is among them (isinstance on it
    raised ReferenceError) and is skipped."""
    import weakref

    class Referent:
        pass
    r = Referent()
    dead = [weakref.proxy(r)]
    del r
    g = jax.jit(lambda x: x + 1)
    g(jnp.ones(2))
    assert g._cache_size() == 1
    jax.clear_caches()
    assert g._cache_size() == 0 and len(dead) == 1


def test_linear_transpose_matches_matrix_transpose():
    A = np.arange(6.0).reshape(2, 3)
    f_t = jax.linear_transpose(lambda x: jnp.asarray(A) @ x, jax.ShapeDtypeStruct((3,), jnp.float64))
    ct = np.array([1.0, -2.0])
    (out,) = f_t(jnp.asarray(ct))
    np.testing.assert_allclose(out, A.T @ ct)
    with pytest.raises(TypeError):
        f_t(jnp.ones(3))
    with pytest.raises(TypeError):
        jax.linear_transpose(lambda n: n, jnp.arange(3))


def test_closure_convert_hoists_float_constants():
    w = jnp.array([1.0, 2.0])
    fc, consts = jax.closure_convert(lambda x: jnp.sum(x * w), jnp.ones(2))
    assert len(consts) == 1
    np.testing.assert_allclose(fc(jnp.array([3.0, 4.0]), *consts), 11.0)
    np.testing.assert_allclose(fc(jnp.array([3.0, 4.0]), jnp.array([0.0, 1.0])), 4.0)
    # gradients flow to the hoisted constants
    g = jax.grad(lambda c: fc(jnp.array([3.0, 4.0]), c))(jnp.array([0.0, 1.0]))
    np.testing.assert_allclose(g, [3.0, 4.0])


def test_named_scope_call_and_env_info(capsys):
    with jax.named_scope("layer"):
        y = jax.named_call(lambda x: x + 1, name="inc")(jnp.ones(2))
    assert y.tolist() == [2.0, 2.0]
    with jax.ensure_compile_time_eval():
        assert float(jnp.sum(jnp.ones(3))) == 3.0
    jax.print_environment_info()
    assert "numpy" in capsys.readouterr().out
    assert "funcgrad" in jax.print_environment_info(return_string=True)


def test_dtypes_module():
    d = jax.dtypes
    assert d.canonicalize_dtype(float) == jnp.zeros(()).dtype
    assert d.issubdtype(np.float32, np.floating) and not d.issubdtype(np.int32, np.floating)
    assert d.result_type(jnp.ones(2, jnp.float16), 1.0) == np.float16
    assert d.result_type(np.int8, np.int16) == np.int16
    assert d.finfo(np.float32).eps == np.finfo(np.float32).eps and d.iinfo(np.int8).max == 127
    assert d.float0.itemsize == 0
    assert d.scalar_type_of(jnp.ones(2, jnp.int32)) is int


def test_partial_is_a_pytree():
    from funcgrad.tree_util import Partial
    p = Partial(lambda a, b, c=0.0: a * b + c, jnp.ones(2), c=3.0)
    assert len(jax.tree.leaves(p)) == 2
    np.testing.assert_allclose(jax.jit(lambda f, x: f(x))(p, 2.0), [5.0, 5.0])
    g = jax.grad(lambda f: jnp.sum(f(2.0)))(p)
    assert isinstance(g, Partial)
    np.testing.assert_allclose(g.args[0], [2.0, 2.0])
    np.testing.assert_allclose(g.keywords["c"], 2.0)


def test_device_put_replicated_and_sharded():
    devs = jax.local_devices()
    r = jax.device_put_replicated({"a": jnp.arange(3)}, devs)
    assert r["a"].shape == (len(devs), 3)
    s = jax.device_put_sharded([jnp.full((2,), float(i)) for i in range(len(devs))], devs)
    assert s.shape == (len(devs), 2)
    with pytest.raises(ValueError):
        jax.device_put_sharded([jnp.ones(1)] * (len(devs) + 1), devs)


def test_register_with_keys_and_static():
    from funcgrad import tree_util as tu

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_pytree_with_keys(Pair, lambda p: (((tu.GetAttrKey("a"), p.a), (tu.GetAttrKey("b"), p.b)), None),
                                 lambda aux, ch: Pair(*ch))
    paths = [keystr(p) for p, _ in jax.tree.leaves_with_path({"p": Pair(1, 2)})]
    assert paths == ["['p'].a", "['p'].b"]
    assert jax.tree.map(lambda v: v * 3, Pair(1, 2)).b == 6

    @tu.register_static
    class Config:
        def __init__(self, n):
            self.n = n

        def __hash__(self):
            return hash(self.n)

        def __eq__(self, other):
            return isinstance(other, Config) and other.n == self.n

    assert jax.tree.leaves((Config(3), 1.0)) == [1.0]
    calls = []

    @jax.jit
    def f(cfg_and_x):
        cfg, x = cfg_and_x
        calls.append(cfg.n)
        return x * cfg.n
    assert float(f((Config(3), 2.0))) == 6.0 and float(f((Config(4), 2.0))) == 8.0
    assert calls == [3, 4]  # static: a new trace per value, the value usable in Python


def test_tree_util_reduce_all_and_checkpoint_policies():
    from funcgrad import tree_util as tu
    assert tu.tree_reduce(lambda a, b: b, [], None) is None  # None is a real initializer
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tu.tree_all([1, (0,)]) is False and tu.tree_all([[1], None], is_leaf=lambda v: v is None) is False
    pol = jax.checkpoint_policies
    f = jax.checkpoint(lambda x: jnp.sin(x) * 2, policy=pol.save_from_both_policies(pol.dots_saveable,
                                                                                   pol.nothing_saveable))
    np.testing.assert_allclose(jax.grad(f)(1.0), 2 * np.cos(1.0), rtol=1e-6)
    assert pol.everything_saveable() and not pol.nothing_saveable()
    assert pol.checkpoint_name(3.0, "h") == 3.0


def test_tree_util_extras():
    import collections
    tu = jax.tree_util
    assert tu.flatten_one_level({"b": [2, 3], "a": 1}) == ((1, [2, 3]), ("a", "b"))
    assert tu.flatten_one_level((1, 2)) == ((1, 2), None)
    assert tu.flatten_one_level([1, (2,)]) == ([1, (2,)], None)
    assert tu.flatten_one_level(None) == ((), None)
    Pt = collections.namedtuple("Pt", "x y")
    assert tu.flatten_one_level(Pt(1, 2)) == ([1, 2], Pt)
    with pytest.raises(ValueError):
        tu.flatten_one_level(1)
    assert tu.tree_broadcast((1, {"a": 2}), ([3, 4], {"a": (5, 6)})) == ([1, 1], {"a": (2, 2)})
    assert tu.tree_broadcast(7, {"x": 1, "y": [2, 3]}) == {"x": 7, "y": [7, 7]}
    with pytest.raises(ValueError):
        tu.tree_broadcast((1, 2, 3), (1, 2))
    td = tu.treedef_tuple([tu.tree_structure([1, 2]), tu.tree_structure(3)])
    assert td == tu.tree_structure(([1, 2], 3)) and td.num_leaves == 3
    assert tu.tree_unflatten(td, [1, 2, 3]) == ([1, 2], 3)
    assert tu.KeyPath is not None and tu.KeyEntry is not None
