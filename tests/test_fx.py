"""funcgrad.fx (torch.fx): symbolic tracing, graph printing and code generation compared with torch.fx where
torch is installed, and standalone checks that traced and rewritten modules compute what they should."""
from __future__ import annotations

import copy
import math
import operator
import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.nn as nn
import funcgrad.nn.functional as F
from funcgrad import fx
from funcgrad.fx.passes.shape_prop import ShapeProp


def _net(t):
    """The same small CNN in funcgrad (t = funcgrad) or torch (t = torch)."""
    class Net(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = t.nn.Conv2d(3, 4, 3)
            self.bn = t.nn.BatchNorm2d(4)
            self.lin = t.nn.Linear(4, 2)
            self.w = t.nn.Parameter(t.ones(2))
            self.register_buffer("b", t.zeros(2))

        def forward(self, x, y=None):
            x = t.nn.functional.relu(self.bn(self.conv(x)))
            x = t.flatten(x.mean((2, 3)), 1)
            z = self.lin(x) + self.w * 2 - self.b
            n = x.shape[0]
            z = z.view(n, -1).relu()
            return t.add(z, 1.0), z[:, 0]
    return Net()


def _fn(t):
    def f(x, y):
        a = x + y
        b = -a
        c = a @ y.t()
        d = x[0, 1:]
        e = t.cat([a, b], dim=0)
        return {"a": a, "c": c, "e": e, "d": d}
    return f


def _summary(gm):
    """(op, name, target name, args (nodes print as their names)) for each node."""
    out = []
    for n in gm.graph.nodes:
        target = n.target if isinstance(n.target, str) else n.target.__name__
        out.append((n.op, n.name, target, repr(n.args)))
    return out


def _strip_relu_kwargs(code: str) -> str:
    """torch records F.relu with its default `inplace = False` (through __torch_function__); funcgrad records
    the call as written."""
    return code.replace(", inplace = False", "")


def test_cnn_graph_matches_torch_fx():
    torch = pytest.importorskip("torch")
    g, t = fx.symbolic_trace(_net(fg)), torch.fx.symbolic_trace(_net(torch))
    assert _summary(g) == _summary(t)
    assert g.code == _strip_relu_kwargs(t.code)
    assert str(g.graph) == str(t.graph).replace(", kwargs = {inplace: False}", ", kwargs = {}")
    assert type(g).__name__ == type(t).__name__ == "Net"


def test_function_graph_matches_torch_fx():
    torch = pytest.importorskip("torch")
    g, t = fx.symbolic_trace(_fn(fg)), torch.fx.symbolic_trace(_fn(torch))
    assert g.code == t.code
    assert _summary(g) == _summary(t)
    assert [list(map(str, n.users)) for n in g.graph.nodes] == [list(map(str, n.users)) for n in t.graph.nodes]


def test_sequential_and_unpacking_code_match_torch_fx():
    torch = pytest.importorskip("torch")

    def unpack(x):
        a, b = x
        return a
    assert fx.symbolic_trace(unpack).code == torch.fx.symbolic_trace(unpack).code
    g = fx.symbolic_trace(nn.Sequential(nn.Linear(2, 3), nn.ReLU()))
    t = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU()))
    assert g.code == t.code


def test_traced_module_computes_the_same():
    fg.manual_seed(0)
    m = _net(fg)
    gm = fx.symbolic_trace(m)
    x = fg.randn(2, 3, 6, 6)
    for got, want in zip(gm(x), m(x)):
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    # the parameters are shared: a gradient through the GraphModule reaches the module's parameters
    gm(x)[0].sum().backward()
    assert m.conv.weight.grad is not None and m.w.grad is not None
    np.testing.assert_array_equal(m.w.grad.numpy(), 2 * np.ones(2) * 2)  # d/dw sum over 2 rows of relu(... 2w)


def test_node_fields_and_users():
    gm = fx.symbolic_trace(lambda x, y: fg.relu(x) + y)
    x, y, relu, add, out = gm.graph.nodes
    assert (x.op, relu.op, add.op, out.op) == ("placeholder", "call_function", "call_function", "output")
    assert relu.target == fg.relu and add.target is operator.add
    assert add.args == (relu, y) and add.all_input_nodes == [relu, y]
    assert list(relu.users) == [add] and out.args == (add,)
    assert relu.prev is y and relu.next is add
    relu.meta["tag"] = 1
    assert relu.meta == {"tag": 1}


def test_graph_surgery_add_to_mul():
    gm = fx.symbolic_trace(lambda x, y: fg.add(x, y) + fg.sigmoid(x))
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target == fg.add:
            with gm.graph.inserting_after(n):
                new = gm.graph.call_function(fg.mul, n.args, n.kwargs)
                n.replace_all_uses_with(new)
            gm.graph.erase_node(n)
    gm.graph.lint()
    gm.recompile()
    assert "torch.mul(x, y)" in gm.code and "torch.add" not in gm.code
    x, y = fg.tensor([1.0, -2.0]), fg.tensor([3.0, 4.0])
    np.testing.assert_allclose(gm(x, y).numpy(), (x * y).numpy() + 1 / (1 + np.exp(-x.numpy())), rtol=1e-6)


def test_transformer_rewrites():
    gm = fx.symbolic_trace(lambda x, y: fg.add(x, y) * fg.sigmoid(x))

    class Swap(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target == fg.add:
                return fg.mul(*args, **kwargs)  # a torch function called on Proxies is recorded
            if target == fg.sigmoid:
                return fg.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)
    new = Swap(gm).transform()
    assert isinstance(new, fx.GraphModule)
    x, y = fg.tensor([1.0, 2.0]), fg.tensor([3.0, -1.0])
    np.testing.assert_array_equal(new(x, y).numpy(), np.array([-3.0, 4.0]))  # (x*y) * -x
    assert [n.target for n in new.graph.nodes if n.op == "call_function"] == [fg.mul, fg.neg, operator.mul]
    # the original graph is untouched
    np.testing.assert_allclose(gm(x, y).numpy(), (4.0 / (1 + np.exp(-1.0)), 1.0 / (1 + np.exp(-2.0))), rtol=1e-6)


def test_invert_module_example():
    inverse = {fg.exp: fg.log, fg.tan: fg.arctan, fg.log: fg.exp, fg.arctan: fg.tan}

    def invert(model):
        gm = fx.symbolic_trace(model)
        g = fx.Graph()
        env = {}
        for node in reversed(gm.graph.nodes):
            if node.op == "call_function":
                env[node.args[0].name] = g.call_function(inverse[node.target], (env[node.name],))
            elif node.op == "output":
                env[node.args[0].name] = g.placeholder(node.name)
            elif node.op == "placeholder":
                g.output(env[node.name])
        g.lint()
        return fx.GraphModule(gm, g)

    def f(x):
        return fg.exp(fg.tan(x))
    inv = invert(f)
    x = fg.arange(5, dtype=fg.float64) / 5 + 0.1
    np.testing.assert_allclose(f(inv(x)).numpy(), x.numpy(), rtol=1e-12)


def _fuse(model):
    """The fx conv-bn fusion example."""
    from funcgrad.nn.utils.fusion import fuse_conv_bn_eval
    model = copy.deepcopy(model)
    gm = fx.symbolic_trace(model)
    modules = dict(gm.named_modules())
    for node in gm.graph.nodes:
        if node.op != "call_module":
            continue
        if type(modules[node.target]) is nn.BatchNorm2d and type(modules[node.args[0].target]) is nn.Conv2d:
            if len(node.args[0].users) > 1:
                continue
            fused = fuse_conv_bn_eval(modules[node.args[0].target], modules[node.target])
            parent, _, name = node.args[0].target.rpartition(".")
            setattr(modules[parent], name, fused)
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm


def test_conv_bn_fusion_example():
    fg.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 4, 3), nn.BatchNorm2d(4))
    m.to(fg.float64)
    for _ in range(2):
        m(fg.randn(4, 3, 8, 8, dtype=fg.float64))
    m.eval()
    fused = _fuse(m)
    assert [n.op for n in fused.graph.nodes].count("call_module") == 3
    x = fg.randn(2, 3, 8, 8, dtype=fg.float64)
    np.testing.assert_allclose(fused(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_shape_prop():
    m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 4 * 4, 5))
    gm = fx.symbolic_trace(m)
    ShapeProp(gm).propagate(fg.randn(2, 3, 6, 6))
    shapes = [tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes]
    assert shapes == [(2, 3, 6, 6), (2, 8, 4, 4), (2, 8, 4, 4), (2, 128), (2, 5), (2, 5)]
    assert gm.graph.find_nodes(op="placeholder")[0].meta["tensor_meta"].dtype == fg.float32


def test_interpreter_hooks():
    gm = fx.symbolic_trace(lambda x: fg.relu(x) * 2)
    seen = []

    class Log(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            seen.append(target)
            return super().call_function(target, args, kwargs)
    out = Log(gm).run(fg.tensor([-1.0, 3.0]))
    np.testing.assert_array_equal(out.numpy(), [0.0, 6.0])
    assert seen == [fg.relu, operator.mul]


def test_trace_errors_as_torch_fx():
    def loop(x):
        return [i for i in x]

    def branch(x):
        return x if x.sum() > 0 else -x

    def length(x):
        return len(x)
    with pytest.raises(fx.TraceError, match="cannot be iterated"):
        fx.symbolic_trace(loop)
    with pytest.raises(fx.TraceError, match="control flow"):
        fx.symbolic_trace(branch)
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(length)


def test_erase_node_with_users_and_dead_code():
    gm = fx.symbolic_trace(lambda x: fg.relu(x) + 1)
    relu = next(n for n in gm.graph.nodes if n.target == fg.relu)
    with pytest.raises(RuntimeError, match="still had 1 users"):
        gm.graph.erase_node(relu)
    with gm.graph.inserting_after(relu):
        gm.graph.call_function(fg.neg, (relu,))
    assert len(gm.graph.nodes) == 5
    assert gm.graph.eliminate_dead_code() is True
    assert [n.name for n in gm.graph.nodes] == ["x", "relu", "add", "output"]


def test_lint_finds_out_of_order_nodes():
    gm = fx.symbolic_trace(lambda x: fg.relu(x))
    relu = next(n for n in gm.graph.nodes if n.op == "call_function")
    with gm.graph.inserting_after(relu):  # each insert goes right after relu: b before a, as fx
        a = gm.graph.call_function(fg.neg, (relu,))
        gm.graph.call_function(fg.abs, (a,))
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        gm.graph.lint()


class _LeafTracer(fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, nn.Sequential) or super().is_leaf_module(m, qualname)


def test_custom_tracer_leaf_modules():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 2), nn.Tanh())

        def forward(self, x):
            return self.body(x) * 3
    m = M()
    g = _LeafTracer().trace(m)
    assert [(n.op, n.target) for n in g.nodes if n.op == "call_module"] == [("call_module", "body")]
    g2 = fx.Tracer().trace(m)
    assert [n.target for n in g2.nodes if n.op == "call_module"] == ["body.0", "body.1"]
    gm = fx.GraphModule(m, g)
    x = fg.randn(3, 2)
    np.testing.assert_array_equal(gm(x).detach().numpy(), m(x).detach().numpy())


def _helper(x):
    return x.sum()


fx.wrap("_helper")


def test_wrap_records_a_call():
    gm = fx.symbolic_trace(lambda x: _helper(x) + 1)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][0] is _helper
    assert _helper is globals()["_helper"] and not isinstance(globals()["_helper"], type)  # restored
    np.testing.assert_allclose(gm(fg.ones(3)).numpy(), 4.0)


def test_namespaces_restored_and_other_threads_unaffected():
    add, relu = fg.add, F.relu
    gate, results = threading.Event(), []

    def slow(x):
        gate.wait(5)
        return fg.relu(x)

    def other():
        results.append(fg.add(fg.ones(1), fg.ones(1)).item())  # runs eagerly while the trace holds the wrappers
        gate.set()
    t = threading.Thread(target=other)
    t.start()
    fx.symbolic_trace(slow)
    t.join()
    assert results == [2.0]
    assert fg.add is add and F.relu is relu and fg.nn.Module.__call__.__name__ == "__call__"


def test_tensor_constants_and_buffers_are_attributes():
    c = fg.tensor([1.0, 2.0])
    gm = fx.symbolic_trace(lambda x: x * c)
    assert "_tensor_constant0 = self._tensor_constant0" in gm.code
    np.testing.assert_array_equal(gm(fg.ones(2)).numpy(), [1.0, 2.0])


def _module_path_tracer(t):
    """A Tracer noting, for each node it makes through create_proxy, the qualified name of the module whose
    forward made it (placeholders included, as fx makes them through create_proxy)."""
    class PathTracer(t.fx.Tracer):
        current = ""

        def __init__(self):
            super().__init__()
            self.origin = {}

        def call_module(self, m, forward, args, kwargs):
            old, self.current = self.current, self.path_of_module(m)
            try:
                return super().call_module(m, forward, args, kwargs)
            finally:
                self.current = old

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
            proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
            self.origin[proxy.node] = self.current
            return proxy
    return PathTracer()


def _residual(t):
    """torchvision's BasicBlock with a downsample shortcut, in t (branch first, then the shortcut)."""
    class Block(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = t.nn.Conv2d(2, 4, 3, 2, 1, bias=False)
            self.bn1 = t.nn.BatchNorm2d(4)
            self.relu = t.nn.ReLU(inplace=True)
            self.conv2 = t.nn.Conv2d(4, 4, 3, 1, 1, bias=False)
            self.bn2 = t.nn.BatchNorm2d(4)
            self.downsample = t.nn.Sequential(t.nn.Conv2d(2, 4, 1, 2, bias=False), t.nn.BatchNorm2d(4))

        def forward(self, x):
            identity = x
            out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
            identity = self.downsample(x)
            out += identity
            return self.relu(out)
    return Block()


def _origins(t, root):
    tracer = _module_path_tracer(t)
    graph = tracer.trace(root)
    return [(n.name, n.op, tracer.origin.get(n)) for n in graph.nodes]


def test_tracer_subclass_sees_placeholders_and_module_paths():
    torch = pytest.importorskip("torch")

    def model(t):
        class Outer(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = t.nn.Sequential(_residual(t))
                self.fc = t.nn.Linear(4, 3)

            def forward(self, x, scale: float = 2.0):
                return self.fc(t.flatten(self.body(x).mean((2, 3)), 1)) * scale
        return Outer()
    assert _origins(fg, model(fg)) == _origins(torch, model(torch))
    assert _origins(fg, model(fg))[0] == ("x", "placeholder", "")


def test_vision_basic_block_traces_in_torchvisions_order():
    torch = pytest.importorskip("torch")
    from funcgrad.vision.models.resnet import BasicBlock
    down = nn.Sequential(nn.Conv2d(2, 4, 1, 2, bias=False), nn.BatchNorm2d(4))
    ours = [(n.name, n.op, n.target if isinstance(n.target, str) else None)
            for n in fx.symbolic_trace(BasicBlock(2, 4, 2, down)).graph.nodes]
    ref = [(n.name, n.op, n.target if isinstance(n.target, str) else None)
           for n in torch.fx.symbolic_trace(_residual(torch)).graph.nodes]
    assert ours == ref


def _scale_twice(x):
    return x * 2


def _plain_helper(x):
    return x - 1


fx.wrap("_scale_twice")
try:
    import torch as _torch_ref
    _torch_ref.fx.wrap("_scale_twice")
except ImportError:
    _torch_ref = None


def test_wrapped_and_math_calls_are_kept_and_named_as_fx():
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, -4.0], [2.0, 0.5]], np.float32)

    def build(t):
        def f(x):
            return _scale_twice(x) + math.sqrt(x.abs().sum())
        gm = t.fx.symbolic_trace(f)
        again = t.fx.symbolic_trace(gm)   # the generated code wraps them again
        g = t.fx.Graph()
        p = g.placeholder("_plain_helper")
        g.output(g.call_function(_plain_helper, (p,)))
        plain = t.fx.GraphModule(t.nn.Module(), g)
        return gm.code, again.code, plain.code, gm(t.tensor(x)).numpy(), plain(t.tensor(x)).numpy()
    ours, ref = build(fg), build(torch)
    assert ours[:3] == ref[:3]
    assert 'torch.fx._symbolic_trace.wrap("math_sqrt")' in ours[0]
    for a, b in zip(ours[3:], ref[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
