"""The `>>>` examples in the docstrings of the JAX face's main public names run and print what they say.

The documentation site renders these docstrings (mkdocs.yml, docs/api/), so a stale example is a wrong page.
Every object listed here must keep at least one example; the examples need neither jax nor torch. They show
the default mode (JAX's x64 off), which each test sets whatever mode the suite runs this module in.
"""
import doctest

import pytest

import funcgrad
from funcgrad import lax, random, tree_util
from funcgrad._src.interpreters import batching
from funcgrad.experimental import disable_x64

OBJECTS = {
    # the transformations (funcgrad.vmap is the two-face wrapper: its docstring is the JAX vmap's, tested here)
    "grad": funcgrad.grad, "value_and_grad": funcgrad.value_and_grad, "jvp": funcgrad.jvp,
    "vjp": funcgrad.vjp, "linearize": funcgrad.linearize, "jacfwd": funcgrad.jacfwd,
    "jacrev": funcgrad.jacrev, "hessian": funcgrad.hessian, "vmap": batching.vmap, "jit": funcgrad.jit,
    "custom_jvp": funcgrad.custom_jvp, "custom_vjp": funcgrad.custom_vjp, "checkpoint": funcgrad.checkpoint,
    "eval_shape": funcgrad.eval_shape, "make_jaxpr": funcgrad.make_jaxpr, "stop_gradient": funcgrad.stop_gradient,
    # pytrees
    "tree_util.tree_map": tree_util.tree_map, "tree_util.tree_flatten": tree_util.tree_flatten,
    "tree_util.tree_unflatten": tree_util.tree_unflatten, "tree_util.tree_leaves": tree_util.tree_leaves,
    "tree_util.tree_structure": tree_util.tree_structure, "tree_util.tree_reduce": tree_util.tree_reduce,
    "tree_util.register_pytree_node": tree_util.register_pytree_node,
    "tree_util.register_pytree_node_class": tree_util.register_pytree_node_class,
    # random keys and samplers
    "random.PRNGKey": random.PRNGKey, "random.key": random.key, "random.split": random.split,
    "random.fold_in": random.fold_in, "random.uniform": random.uniform, "random.normal": random.normal,
    "random.bernoulli": random.bernoulli, "random.randint": random.randint,
    "random.permutation": random.permutation, "random.choice": random.choice,
    "random.categorical": random.categorical,
    # control flow
    "lax.cond": lax.cond, "lax.switch": lax.switch, "lax.while_loop": lax.while_loop,
    "lax.fori_loop": lax.fori_loop, "lax.scan": lax.scan, "lax.map": lax.map,
    "lax.associative_scan": lax.associative_scan,
}


def _tests(name, obj):
    finder = doctest.DocTestFinder(recurse=False)
    return [t for t in finder.find(obj, name=name, globs={}) if t.examples]


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_docstring_examples(name):
    tests = _tests(name, OBJECTS[name])
    assert tests, f"{name}'s docstring has no >>> example"
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    with disable_x64():
        for t in tests:
            runner.run(t, out=report.append)
    if runner.summarize(verbose=False).failed:
        pytest.fail("".join(report), pytrace=False)


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_docstring_sections(name):
    """Each documented transform says what it takes and returns (a Google-style section the site renders)."""
    doc = OBJECTS[name].__doc__ or ""
    assert "Examples:" in doc, f"{name}: no 'Examples:' section"


def test_top_level_vmap_shows_the_jax_docstring():
    assert funcgrad.vmap.__doc__ == batching.vmap.__doc__
