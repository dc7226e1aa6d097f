"""Pytrees: flatten/unflatten round trips and the container kinds JAX users rely on."""
import collections
import dataclasses

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import tree_util as tu

Point = collections.namedtuple("Point", ["x", "y"])


@pytest.mark.parametrize("tree", [
    1, None, (1, 2), [1, (2, 3)], {"b": 1, "a": [2, None]}, Point(1, (2, 3)),
    collections.OrderedDict([("z", 1), ("a", 2)]), {"x": {"y": {"z": 3}}}, (), [], {},
])
def test_round_trip(tree):
    leaves, td = tu.tree_flatten(tree)
    assert tu.tree_unflatten(td, leaves) == tree


def test_dict_keys_are_sorted_and_none_is_a_node():
    leaves, td = tu.tree_flatten({"b": 2, "a": 1, "c": None})
    assert leaves == [1, 2]
    assert td.num_leaves == 2


def test_dict_keys_that_do_not_compare_raise_as_jax():
    """JAX sorts a dict's keys with Python's <: mixed numbers sort by value; keys that do not compare
    raise its ValueError (a defaultdict's, flattened in Python, the TypeError itself); an OrderedDict
    keeps its order. Was: keys sorted by type name, so {1: 1, 'a': 2} flattened where JAX raises."""
    jax = pytest.importorskip("jax")
    cases = [{1: 1, "a": 2}, {None: 1, "a": 2}, {"b": 1, "a": 2, "c": {None: 5}}, {2: "x", 1.5: "y", 0: "z", True: "w"},
             collections.OrderedDict([(1, 1), ("a", 2)]), collections.defaultdict(int, {1: 1, "a": 2}),
             {(1, "a"): 1, (1, 2): 2}, {"only": {3: 1}}]

    def outcome(lib, tree):
        try:
            return lib.tree_util.tree_leaves(tree), [str(k) for k, _ in lib.tree_util.tree_flatten_with_path(tree)[0]]
        except Exception as e:  # noqa: BLE001 (the exception's type and message are what is compared)
            return type(e), str(e)

    for tree in cases:
        assert outcome(fg, tree) == outcome(jax, tree), tree
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree dictionary keys"):
        fg.tree.map(lambda v: v, {1: 1, "a": 2})


def test_dict_keys_of_the_pytrees_page_raise_as_jax():
    """JAX's pytrees page: {1: 7, "y": 42} has keys that cannot be sorted, and JAX refuses it."""
    jax = pytest.importorskip("jax")
    tree = {1: 7, "y": 42}
    with pytest.raises(ValueError) as ref:
        jax.tree_util.tree_flatten(tree)
    with pytest.raises(ValueError) as got:
        tu.tree_flatten(tree)
    assert str(got.value) == str(ref.value)
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        fg.tree.map(lambda x: x + 1, tree)
    # keys of one kind (or numbers of several) still sort as Python sorts them
    assert tu.tree_leaves({2: "b", 1.5: "a", 3: "c"}) == jax.tree_util.tree_leaves({2: "b", 1.5: "a", 3: "c"})


def test_namedtuple_treedef_repr_names_the_class_as_jax():
    jax = pytest.importorskip("jax")
    for tree in (Point(1, (2, 3)), [Point(None, 1)]):
        assert repr(tu.tree_structure(tree)) == repr(jax.tree_util.tree_structure(tree))
        assert str(tu.tree_structure(tree)) == str(jax.tree_util.tree_structure(tree))


def test_tree_map_multi_tree_and_structure_mismatch():
    out = tu.tree_map(lambda a, b: a + b, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
    assert out == {"a": 11, "b": (22, 33)}
    with pytest.raises(ValueError, match="structures differ"):
        tu.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})


def test_register_pytree_node_class_and_dataclass():
    @tu.register_pytree_node_class
    class Box:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag

        def tree_flatten(self):
            return [self.v], self.tag

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(children[0], aux)

    b = tu.tree_map(lambda x: x * 2, Box(3, "t"))
    assert b.v == 6 and b.tag == "t"

    @dataclasses.dataclass
    class Params:
        w: object
        b: object

    tu.register_dataclass(Params)
    p = Params(np.float64(1.0), np.float64(2.0))
    g = fg.grad(lambda p: p.w * 3.0 + p.b ** 2)(p)
    assert isinstance(g, Params) and float(g.w) == 3.0 and float(g.b) == 4.0


def test_structure_equality_and_leaves():
    assert tu.tree_structure((1, {"a": 2})) == tu.tree_structure((5, {"a": 7}))
    assert tu.tree_structure((1, 2)) != tu.tree_structure([1, 2])
    assert tu.tree_leaves([1, (2, {"k": 3})]) == [1, 2, 3]


def test_transforms_accept_namedtuples():
    g = fg.grad(lambda p: p.x * p.y)(Point(np.float64(2.0), np.float64(5.0)))
    assert isinstance(g, Point) and float(g.x) == 5.0 and float(g.y) == 2.0


def test_treedef_flatten_up_to_as_jax():
    """PyTreeDef.flatten_up_to: the subtrees at the structure's leaves, JAX's ValueError where the
    structure differs (was: no such method)."""
    jax = pytest.importorskip("jax")
    for lib in (fg, jax):
        td = lib.tree_util.tree_structure([0, (0, 0)])
        assert td.flatten_up_to([1, ({"a": 2}, [3])]) == [1, {"a": 2}, [3]]
        assert lib.tree_util.tree_structure({"a": 0, "b": None}).flatten_up_to({"a": [1], "b": None}) == [[1]]
        for bad in [[1, 2], [1, (2, 3), 4], (1, (2, 3)), [1, [2, 3]]]:
            with pytest.raises(ValueError):
                td.flatten_up_to(bad)
        with pytest.raises(ValueError):
            lib.tree_util.tree_structure(None).flatten_up_to(3)


def test_treedef_str_as_jax():
    """str(PyTreeDef) prints every node kind as JAX's does: namedtuples by class name, OrderedDict and
    defaultdict as custom nodes with their keys (and factory), custom nodes' aux data as str prints it."""
    jax = pytest.importorskip("jax")
    P = collections.namedtuple("P", ["x", "y"])

    def classes(lib):
        @lib.tree_util.register_pytree_node_class
        class B:
            def __init__(self, v, t):
                self.v, self.t = v, t

            def tree_flatten(self):
                return (self.v,), self.t

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(children[0], aux)
        return B

    trees = lambda B: [P(1, (2, 3)), collections.OrderedDict(a=1, b=[2]), collections.defaultdict(int, {"a": 1}),
                       B(1, "tag"), B(1, None), {"k": (1,), "j": None}, [()]]
    ours = [str(fg.tree_util.tree_structure(t)) for t in trees(classes(fg))]
    theirs = [str(jax.tree_util.tree_structure(t)) for t in trees(classes(jax))]
    assert ours == theirs
