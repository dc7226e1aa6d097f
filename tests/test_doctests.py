"""The `>>>` examples in the docstrings of the JAX face's main public names run and print what they say.

The documentation site renders these docstrings (mkdocs.yml, docs/api/), so a stale example is a wrong page.
Every object listed here must keep at least one example; the examples need neither jax nor torch. They show
the default mode (JAX's x64 off), which each test sets whatever mode the suite runs this module in.
"""
import doctest

import pytest

import funcgrad
import funcgrad.flatten_util
import funcgrad.nn
import funcgrad.numpy
import funcgrad.optim
import funcgrad.scipy.special
import funcgrad.scipy.stats
import funcgrad.utils.data
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
    # funcgrad.numpy, jax.nn, scipy and flatten_util
    "numpy.array": funcgrad.numpy.array, "numpy.where": funcgrad.numpy.where, "numpy.einsum": funcgrad.numpy.einsum,
    "numpy.linalg.solve": funcgrad.numpy.linalg.solve, "Array.at": funcgrad.Array.at,
    "nn.softmax": funcgrad.nn.softmax, "scipy.special.logsumexp": funcgrad.scipy.special.logsumexp,
    "scipy.stats.norm.logpdf": funcgrad.scipy.stats.norm.logpdf,
    "flatten_util.ravel_pytree": funcgrad.flatten_util.ravel_pytree,
    # the torch face's main names
    "torch.Tensor": funcgrad.Tensor, "torch.tensor": funcgrad.tensor, "torch.randn": funcgrad.randn,
    "torch.zeros": funcgrad.zeros, "torch.Tensor.backward": funcgrad.Tensor.backward,
    "torch.Tensor.view": funcgrad.Tensor.view, "torch.Tensor.reshape": funcgrad.Tensor.reshape,
    "torch.no_grad": funcgrad.no_grad, "torch.nn.Linear": funcgrad.nn.Linear, "torch.nn.Conv2d": funcgrad.nn.Conv2d,
    "torch.nn.LSTM": funcgrad.nn.LSTM, "torch.nn.CrossEntropyLoss": funcgrad.nn.CrossEntropyLoss,
    "torch.optim.SGD": funcgrad.optim.SGD, "torch.optim.Adam": funcgrad.optim.Adam,
    "torch.utils.data.DataLoader": funcgrad.utils.data.DataLoader,
    "torch.nn.init.uniform_": funcgrad.nn.init.uniform_,
    "torch.nn.init.kaiming_uniform_": funcgrad.nn.init.kaiming_uniform_,
    "torch.func.jacrev": funcgrad.func.jacrev, "torch.signal.windows.hann": funcgrad.signal.windows.hann,
    "torch.svd_lowrank": funcgrad.svd_lowrank,
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


# --- the documentation pages ---------------------------------------------------------------------------------
# Each page of docs/ runs top to bottom in one namespace, as a reader would paste it: ```python blocks are
# executed, ```pycon blocks (>>> examples) are doctests whose printed output must match. A page that needs an
# optional package says so in a comment `<!-- requires: onnx onnxruntime -->` and is skipped without it.
# Other fences are not run: bash, text, and ```py for scripts that need a launcher (distributed.md's train.py).
import pathlib  # noqa: E402
import re  # noqa: E402

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
_FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
PAGES = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))


def _blocks(text):
    return [(m.group(1), m.group(2)) for m in _FENCE.finditer(text)]


def test_pages_exist():
    assert "index.md" in PAGES and "getting-started.md" in PAGES and "testing.md" in PAGES


@pytest.mark.parametrize("page", PAGES)
def test_page_code_blocks_run(page, tmp_path, monkeypatch):
    text = (DOCS / page).read_text()
    for mod in (re.search(r"<!-- requires: ([^>]*)-->", text) or [None, ""])[1].split():
        pytest.importorskip(mod)
    blocks = [(lang, code) for lang, code in _blocks(text) if lang in ("python", "pycon")]
    if not blocks:
        pytest.skip(f"{page} has no Python code")
    monkeypatch.chdir(tmp_path)  # (pages that save files write them here)
    globs = {"__name__": "__docs__"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    report = []
    with disable_x64():
        try:
            for i, (lang, code) in enumerate(blocks):
                if lang == "python":
                    try:
                        exec(compile(code, f"{page}[block {i}]", "exec"), globs)
                    except Exception as e:
                        pytest.fail(f"{page}, python block {i} raised {type(e).__name__}: {e}\n{code}",
                                    pytrace=False)
                else:
                    test = parser.get_doctest(code, globs, f"{page}[block {i}]", page, 0)
                    test.globs = globs  # (get_doctest copies them: the page's later blocks need its names)
                    runner.run(test, out=report.append, clear_globs=False)
        finally:
            funcgrad.config.update("jax_enable_x64", False)
    if runner.summarize(verbose=False).failed:
        pytest.fail("".join(report), pytrace=False)
