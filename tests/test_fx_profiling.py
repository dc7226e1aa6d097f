"""torch.ops.profiler's record_function ops and torch.ops' `__torch_function__` dispatch, as fx programs use them:
a tracer that turns record_function regions into _record_function_enter / _exit nodes gives torch 2.13's code,
and the traced module records the region when profiled."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

_X = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)


def _profiler_tracer(t):
    """A Tracer that records record_function regions as profiler op calls (patching the class while tracing)."""
    class ProfilerTracer(t.fx.Tracer):
        def trace(self, root, concrete_args=None):
            rf = t.autograd.profiler.record_function
            saved = rf.__enter__, rf.__exit__

            def enter(region):
                region._fx_handle = self.create_proxy("call_function", t.ops.profiler._record_function_enter,
                                                      (region.name,), {})
                return region._fx_handle

            def exit_(region, *exc):
                t.ops.profiler._record_function_exit(region._fx_handle)   # a Proxy: dispatched to fx
            rf.__enter__, rf.__exit__ = enter, exit_
            try:
                return super().trace(root, concrete_args)
            finally:
                rf.__enter__, rf.__exit__ = saved
    return ProfilerTracer()


def _model(t):
    class Scaled(t.nn.Module):
        def forward(self, x):
            with t.profiler.record_function("scaled_relu"):
                y = t.relu(x) * 3
            return y.sum(0)
    return Scaled()


def _traced(t):
    tracer = _profiler_tracer(t)
    graph = tracer.trace(_model(t))
    return t.fx.GraphModule(tracer.root, graph)


def _regions(t, fn):
    with t.autograd.profiler.profile() as prof:
        out = fn()
    return [e.key for e in prof.key_averages() if not e.key.startswith("aten::")], out


def test_profiler_tracer_code_and_graph_match_torch():
    gf, gt = _traced(fg), _traced(torch)
    assert gf.code == gt.code
    assert str(gf.graph) == str(gt.graph)
    assert "torch.ops.profiler._record_function_exit(_record_function_enter)" in gf.code


def test_traced_module_records_the_region():
    for t in (fg, torch):
        gm = _traced(t)
        x = t.tensor(_X)
        names, out = _regions(t, lambda: gm(x))
        assert names == ["scaled_relu"]
        np.testing.assert_allclose(out.numpy(), (np.maximum(_X, 0) * 3).sum(0), rtol=1e-6)
        plain = t.fx.symbolic_trace(_model(t))
        names, _ = _regions(t, lambda: plain(x))   # a plain trace drops the region
        assert names == []


def test_dead_code_elimination_keeps_the_profiler_ops():
    gf, gt = _traced(fg), _traced(torch)
    assert gf.graph.eliminate_dead_code() == gt.graph.eliminate_dead_code()
    gf.recompile()
    gt.recompile()
    assert gf.code == gt.code


def test_profiler_ops_open_and_close_a_region():
    for t in (fg, torch):
        ops = t.ops.profiler
        assert ops._record_function_exit.overloads() == ["default", "_RecordFunction"]
        assert ops._record_function_enter.overloads() == ["default"]
        assert str(ops._record_function_enter_new.default._schema) == \
            "profiler::_record_function_enter_new(str name, str? args=None) -> " \
            "__torch__.torch.classes.profiler._RecordFunction"

        def run():
            h = ops._record_function_enter("outer", "detail")
            h2 = ops._record_function_enter_new("inner")
            ops._record_function_exit._RecordFunction(h2)
            ops._record_function_exit(h)
        names, _ = _regions(t, run)
        assert sorted(names) == ["inner", "outer"]


@pytest.mark.parametrize("call", [lambda ops: ops._record_function_enter(3),
                                  lambda ops: ops._record_function_exit(3)])
def test_profiler_ops_refuse_wrong_arguments(call):
    for t in (fg, torch):
        with pytest.raises(RuntimeError, match="_record_function_"):
            call(t.ops.profiler)


def test_ops_dispatch_torch_function_to_their_arguments():
    class Seen:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return str(func), type(func).__name__, len(args)

    for t in (fg, torch):
        assert t.ops.aten.relu(Seen()) == ("aten.relu", "OpOverloadPacket", 1)
        assert t.ops.aten.relu.default(Seen()) == ("aten.relu.default", "OpOverload", 1)
        assert t.ops.profiler._record_function_exit(Seen()) == \
            ("profiler._record_function_exit", "OpOverloadPacket", 1)
        assert t.ops.aten.cat([t.ones(1), Seen()]) == ("aten.cat", "OpOverloadPacket", 1)


def test_tracing_calls_of_torch_ops():
    def build(t):
        def f(x):
            return t.ops.aten.relu(x) + t.ops.aten.sigmoid.default(x)
        gm = t.fx.symbolic_trace(f)
        return gm.code, str(gm.graph), gm(t.tensor(_X)).numpy()
    (cf, gf, of), (ct, gt, ot) = build(fg), build(torch)
    assert cf == ct and gf == gt
    np.testing.assert_allclose(of, ot, rtol=1e-6)
