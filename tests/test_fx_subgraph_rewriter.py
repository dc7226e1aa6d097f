"""funcgrad.fx.replace_pattern / replace_pattern_with_filters and passes.utils.matcher_utils.SubgraphMatcher
(torch.fx's subgraph rewriter): the same programs rewritten by funcgrad and by torch 2.13 give the same code,
graph, matches and outputs."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import fx
from funcgrad.fx.passes.utils.matcher_utils import SubgraphMatcher
from funcgrad.fx.subgraph_rewriter import Match, ReplacedPatterns, replace_pattern_with_filters

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
_X, _Y, _Z = (_RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(3))


def _both(build):
    """build(t) for t = funcgrad and t = torch: (code, str(graph), summary, outputs) of each."""
    return build(fg), build(torch)


def _summary(matches):
    """Matches as names: (anchor, sorted pattern->graph names, replacement names when reported)."""
    out = []
    for m in matches:
        pairs = sorted((k.name, v.name if hasattr(v, "name") else repr(v)) for k, v in m.nodes_map.items())
        out.append((m.anchor.name, pairs, [n.name for n in getattr(m, "replacements", [])]))
    return out


def _run(t, gm, *arrays):
    out = gm(*(t.tensor(a) for a in arrays))
    outs = out if isinstance(out, tuple) else (out,)
    return [o.detach().numpy() for o in outs]


def _check(build, rtol=1e-6):
    (code_f, graph_f, sum_f, out_f), (code_t, graph_t, sum_t, out_t) = _both(build)
    assert code_f == code_t
    assert graph_f == graph_t
    assert sum_f == sum_t
    assert len(out_f) == len(out_t)
    for a, b in zip(out_f, out_t):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6)


def test_neg_cat_sum_becomes_stack_twice():
    def build(t):
        class M(t.nn.Module):
            def forward(self, x, a, b):
                s1 = t.cat([t.neg(a), b]).sum()
                s2 = t.cat([t.neg(a), b]).sum()
                return x * t.max(s1) - t.max(s2)

        def pattern(p, q):
            return t.cat([t.neg(p), q]).sum()

        def replacement(p, q):
            return t.stack([p, q]).sum()
        gm = t.fx.symbolic_trace(M())
        matches = t.fx.replace_pattern(gm, pattern, replacement)
        assert len(matches) == 2 and all(type(m).__name__ == "Match" for m in matches)
        return gm.code, str(gm.graph), _summary(matches), _run(t, gm, _X, _Y, _Z)
    _check(build)


def test_operator_pattern_matches_each_occurrence_and_respects_data_flow():
    def build(t):
        def f(x, y, z):
            m = t.relu(x * y + z)
            return m * y + x

        def pattern(a, b, c):
            return a * b + c

        def replacement(a, b, c):
            return t.addcmul(c, a, b)
        gm = t.fx.symbolic_trace(f)
        matches = t.fx.replace_pattern(gm, pattern, replacement)
        return gm.code, str(gm.graph), _summary(matches), _run(t, gm, _X, _Y, _Z)
    _check(build)


def test_placeholder_used_twice_must_be_the_same_value():
    def build(t):
        def f(x, y):
            return (x + x) * (x + y)

        def pattern(a):
            return a + a

        def replacement(a):
            return a * 2
        gm = t.fx.symbolic_trace(f)
        matches = t.fx.replace_pattern(gm, pattern, replacement)
        return gm.code, str(gm.graph), _summary(matches), _run(t, gm, _X, _Y)
    _check(build)
    gm = fx.symbolic_trace(lambda x, y: x + y)
    assert fx.replace_pattern(gm, lambda a: a + a, lambda a: a * 2) == []


def test_a_match_whose_inner_node_is_used_elsewhere_is_not_replaced():
    def build(t):
        def f(x, y):
            n = t.neg(x)
            return t.cat([n, y]).sum() + n.mean()

        def pattern(a, b):
            return t.cat([t.neg(a), b]).sum()

        def replacement(a, b):
            return t.stack([a, b]).sum()
        gm = t.fx.symbolic_trace(f)
        matches = t.fx.replace_pattern(gm, pattern, replacement)
        return gm.code, str(gm.graph), _summary(matches), _run(t, gm, _X, _Y)
    _check(build)


def test_pattern_with_two_outputs_and_methods():
    def build(t):
        def f(x, y):
            s = x.sigmoid()
            a = s.sum(1)
            b = s.mean(0)
            return a.relu() + y.sum(), b * 2

        def pattern(v):
            s = v.sigmoid()
            return s.sum(1), s.mean(0)

        def replacement(v):
            return v.tanh().sum(1), v.tanh().mean(0)
        gm = t.fx.symbolic_trace(f)
        matches = t.fx.replace_pattern(gm, pattern, replacement)
        return gm.code, str(gm.graph), _summary(matches), _run(t, gm, _X, _Y)
    _check(build)


def test_with_filters_ignore_literals_and_replacements():
    def build(t):
        def f(x):
            return t.add(x, 1) * t.add(x, 2) + t.add(x.sum(), 3)

        def pattern(a):
            return t.add(a, 1)

        def replacement(a):
            return t.sub(a, -1)

        def not_on_sum(match, original_graph, pattern_graph):
            return match.placeholder_nodes[0].op == "placeholder"
        gm = t.fx.symbolic_trace(f)
        rewriter = t.fx.subgraph_rewriter
        res = rewriter.replace_pattern_with_filters(gm, pattern, replacement, match_filters=[not_on_sum],
                                                    ignore_literals=True)
        assert all(type(r).__name__ == "ReplacedPatterns" for r in res)
        return gm.code, str(gm.graph), _summary(res), _run(t, gm, _X)
    _check(build)
    gm = fx.symbolic_trace(lambda x: fg.add(x, 1) * fg.add(x, 2))
    res = replace_pattern_with_filters(gm, lambda a: fg.add(a, 1), lambda a: fg.sub(a, -1))
    assert len(res) == 1 and isinstance(res[0], ReplacedPatterns)   # literals compared: only add(x, 1)


def test_graph_module_replacement_brings_its_submodule():
    w = _RNG.standard_normal((3, 3)).astype(np.float32)

    def build(t):
        class Lin(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = t.nn.Linear(3, 3, bias=False)
                with t.no_grad():
                    self.proj.weight.copy_(t.tensor(w))

            def forward(self, v):
                return self.proj(v)

        def f(x, y):
            return t.relu(x) + t.relu(y).sum()

        def pattern(v):
            return t.relu(v)
        gm = t.fx.symbolic_trace(f)
        matches = t.fx.replace_pattern(gm, pattern, t.fx.symbolic_trace(Lin()))
        assert isinstance(gm.get_submodule("proj"), t.nn.Linear)
        return gm.code, str(gm.graph), _summary(matches), _run(t, gm, _X, _Y)
    _check(build, rtol=1e-5)


def test_replacement_must_take_the_patterns_parameters():
    for t in (fg, torch):
        gm = t.fx.symbolic_trace(lambda x, y: t.neg(x) + y)
        with pytest.raises(AssertionError, match="Placeholder count mismatch: 2 vs 1"):
            t.fx.replace_pattern(gm, lambda a, b: t.neg(a) + b, lambda a: t.neg(a))


def test_match_is_a_named_tuple():
    gm = fx.symbolic_trace(lambda x: fg.neg(x).sum())
    (m,) = fx.replace_pattern(gm, lambda a: fg.neg(a), lambda a: a * -1)
    assert isinstance(m, Match) and m == (m.anchor, m.nodes_map)
    np.testing.assert_allclose(gm(fg.tensor(_X)).numpy(), -_X.sum(), rtol=1e-6)


def _matcher_summary(t, **kw):
    def f(x, y):
        return t.relu(x + y), t.relu(y)

    def pattern(a):
        return t.relu(a)
    g = t.fx.symbolic_trace(f).graph
    p = t.fx.symbolic_trace(pattern).graph
    mod = __import__(t.__name__ + ".fx.passes.utils.matcher_utils", fromlist=["SubgraphMatcher"])
    out = mod.SubgraphMatcher(p, **kw).match(g)
    return [([n.name for n in m.placeholder_nodes], [n.name for n in m.returning_nodes],
             [n.name for n in m.anchors]) for m in out]


@pytest.mark.parametrize("kw", [{}, {"match_placeholder": True}, {"match_output": True},
                                {"remove_overlapping_matches": False}])
def test_subgraph_matcher_options(kw):
    assert _matcher_summary(fg, **kw) == _matcher_summary(torch, **kw)


def test_subgraph_matcher_refuses_empty_and_dead_patterns():
    for t in (fg, torch):
        mod = __import__(t.__name__ + ".fx.passes.utils.matcher_utils", fromlist=["SubgraphMatcher"])
        with pytest.raises(ValueError, match="empty pattern"):
            mod.SubgraphMatcher(t.fx.Graph())
        g = t.fx.Graph()
        x = g.placeholder("x")
        g.call_function(t.neg, (x,))
        g.output(x)
        with pytest.raises(AssertionError, match="dead code"):
            mod.SubgraphMatcher(g)
    assert SubgraphMatcher.__module__ == "funcgrad.fx.passes.utils.matcher_utils"
