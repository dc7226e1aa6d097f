"""torch.export (funcgrad.export): export's graph, signature, input checks, dynamic shapes, torch.cond, save/load,
against eager results and exact expectations, and against torch 2.13 where it is installed."""
import io
import operator

import numpy as np
import pytest

import funcgrad as torch
from funcgrad.export import Dim, export
from funcgrad.export.dynamic_shapes import ConstraintViolationError, GuardOnDataDependentSymNode, UserError
from funcgrad.export.graph_signature import InputKind, OutputKind

nn = torch.nn


class LinBuf(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("buf", torch.ones(3))

    def forward(self, x):
        return torch.relu(self.fc(x)) + self.buf


def _np(t):
    return np.asarray(t.detach().numpy())


def test_signature_lifts_parameters_buffers_then_user_inputs():
    ep = export(LinBuf(), (torch.randn(2, 4),))
    specs = ep.graph_signature.input_specs
    assert [(s.kind, s.arg.name, s.target) for s in specs] == [
        (InputKind.PARAMETER, "p_fc_weight", "fc.weight"), (InputKind.PARAMETER, "p_fc_bias", "fc.bias"),
        (InputKind.BUFFER, "b_buf", "buf"), (InputKind.USER_INPUT, "x", None)]
    assert specs[2].persistent is True
    assert [s.kind for s in ep.graph_signature.output_specs] == [OutputKind.USER_OUTPUT]
    assert ep.graph_signature.parameters == ("fc.weight", "fc.bias")
    assert ep.graph_signature.buffers == ("buf",)
    assert ep.graph_signature.user_inputs == ("x",)
    assert [n.op for n in ep.graph.nodes] == ["placeholder"] * 4 + ["call_function"] * 3 + ["output"]
    assert [n.target for n in ep.graph.nodes if n.op == "call_function"] == [
        torch.nn.functional.linear, torch.relu, operator.add]
    assert list(ep.state_dict) == ["fc.weight", "fc.bias", "buf"]
    assert [n for n, _ in ep.named_parameters()] == ["fc.weight", "fc.bias"]
    assert [n for n, _ in ep.named_buffers()] == ["buf"]
    assert ep.dialect == "TRAINING"


def test_module_matches_eager_and_shares_state():
    m = LinBuf()
    x = torch.randn(2, 4)
    ep = export(m, (x,))
    gm = ep.module()
    np.testing.assert_array_equal(_np(gm(x)), _np(m(x)))
    assert gm.fc.weight is ep.state_dict["fc.weight"] or np.array_equal(_np(gm.fc.weight), _np(m.fc.weight))
    assert {n for n, _ in gm.named_parameters()} == {"fc.weight", "fc.bias"}
    args, kwargs = ep.example_inputs
    np.testing.assert_array_equal(_np(args[0]), _np(x))
    assert kwargs == {}


def test_calling_the_program_raises_like_torch():
    ep = export(LinBuf(), (torch.randn(2, 4),))
    with pytest.raises(RuntimeError, match=r"Unable to call ExportedProgram directly. You should use "
                                           r"`exported_program.module\(\)` instead."):
        ep(torch.randn(2, 4))


def test_static_shape_guards():
    gm = export(LinBuf(), (torch.randn(2, 4),)).module()
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[0\] == 2$"):
        gm(torch.randn(3, 4))
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[1\] == 4$"):
        gm(torch.randn(2, 5))
    with pytest.raises(ValueError, match="Trying to flatten user inputs with exported input tree spec"):
        gm(torch.randn(2, 4), torch.randn(2, 4))


def test_dynamic_batch_dimension():
    m = LinBuf()
    batch = Dim("batch", min=3, max=10)
    ep = export(m, (torch.randn(4, 4),), dynamic_shapes={"x": {0: batch}})
    assert repr(ep.range_constraints) == "{'s0': VR[3, 10]}"
    gm = ep.module()
    for n in (3, 7, 10):
        x = torch.randn(n, 4)
        np.testing.assert_allclose(_np(gm(x)), _np(m(x)), rtol=1e-6)
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[0\] <= 10$"):
        gm(torch.randn(11, 4))
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[0\] >= 3$"):
        gm(torch.randn(2, 4))
    assert 'x: "f32[s0, 4]"' in str(ep)


def test_view_with_dynamic_size_records_sym_size():
    class V(nn.Module):
        def forward(self, x):
            return x.view(x.shape[0], -1).sum(1)
    ep = export(V(), (torch.randn(4, 3, 2),), dynamic_shapes=({0: Dim("b", max=8)},))
    targets = [n.target.__name__ for n in ep.graph.nodes if n.op == "call_function"]
    assert targets == ["sym_size_int", "view", "sum"]
    np.testing.assert_array_equal(_np(ep.module()(torch.ones(6, 3, 2))), np.full(6, 6.0, np.float32))


class TwoIn(nn.Module):
    def forward(self, x, y):
        return x + y


def test_shared_dim_and_its_guard():
    b = Dim("b")
    gm = export(TwoIn(), (torch.randn(4, 3), torch.randn(4, 3)), dynamic_shapes={"x": {0: b}, "y": {0: b}}).module()
    np.testing.assert_array_equal(_np(gm(torch.ones(6, 3), torch.ones(6, 3))), np.full((6, 3), 2.0, np.float32))
    with pytest.raises(AssertionError, match=r"Guard failed: y.size\(\)\[0\] == x.size\(\)\[0\]"):
        gm(torch.ones(6, 3), torch.ones(5, 3))


def test_specialised_dynamic_dims_raise():
    with pytest.raises(UserError, match=r"(?s)Constraints violated \(b\)!.*specialized it to be a constant \(4\)"):
        export(TwoIn(), (torch.randn(4, 3), torch.randn(4, 3)), dynamic_shapes={"x": {0: Dim("b")}, "y": None})
    with pytest.raises(UserError, match=r"specialized it to be a constant \(1\)"):
        export(TwoIn(), (torch.randn(1, 3), torch.randn(1, 3)),
               dynamic_shapes={"x": {0: Dim("b")}, "y": {0: Dim("b")}})
    with pytest.raises(ConstraintViolationError, match=r"^12 not in range \[2, 10\]\n\nThe error above occurred when "
                                                    r"calling torch.export.export\."):
        export(TwoIn(), (torch.randn(12, 3), torch.randn(12, 3)),
               dynamic_shapes={"x": {0: Dim("b", max=10)}, "y": {0: Dim("b", max=10)}})
    with pytest.raises(UserError, match=r"top-level keys must be the arg names \['x', 'y'\]"):
        export(TwoIn(), (torch.randn(4, 3), torch.randn(4, 3)), dynamic_shapes={"x": {0: Dim("b")}})


def test_branch_on_dynamic_size():
    class S(nn.Module):
        def forward(self, x):
            if x.shape[0] > 5:
                return x + 1
            return x - 1
    with pytest.raises(UserError, match=r"(?s)Constraints violated \(batch\)!.*generated guard 2 <= L\['x'\]"
                                        r"\.size\(\)\[0\] and L\['x'\]\.size\(\)\[0\] <= 5.*batch = Dim\('batch', max=5\)"):
        export(S(), (torch.randn(4, 4),), dynamic_shapes={"x": {0: Dim("batch")}})
    gm = export(S(), (torch.randn(4, 4),), dynamic_shapes={"x": {0: Dim("batch", max=5)}}).module()
    np.testing.assert_array_equal(_np(gm(torch.zeros(3, 4))), -np.ones((3, 4), np.float32))


def test_data_dependent_control_flow_raises():
    class D(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x.sin()
            return x.cos()
    with pytest.raises(GuardOnDataDependentSymNode, match="torch.cond"):
        export(D(), (torch.randn(2, 3),))


class CondModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        def true_fn(x):
            return self.lin(x).sin()

        def false_fn(x):
            return x.cos()
        return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))


def test_cond_records_both_branches():
    m = CondModel()
    ep = export(m, (torch.randn(2, 3),))
    names = [n.name for n in ep.graph.nodes]
    assert "true_graph_0" in names and "false_graph_0" in names
    cond_nodes = [n for n in ep.graph.nodes if n.op == "call_function" and n.target is torch.export._trace.cond]
    assert len(cond_nodes) == 1
    true_ph = [n.name for n in ep.graph_module.true_graph_0.graph.nodes if n.op == "placeholder"]
    assert true_ph == ["x", "p_lin_weight", "p_lin_bias"]
    gm = ep.module()
    for x in (torch.ones(2, 3), -torch.ones(2, 3)):
        np.testing.assert_allclose(_np(gm(x)), _np(m(x)), rtol=1e-6)
    np.testing.assert_allclose(_np(gm(-torch.ones(2, 3))), np.cos(-np.ones((2, 3))), rtol=1e-6)


def test_constants_kwargs_and_inplace_buffer():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cnt", torch.zeros(()))
            self.t = torch.ones(3)

        def forward(self, x, *, scale=1.0):
            self.cnt.add_(1)
            y = (x + self.t + torch.tensor([1., 2., 3.])) * scale
            return y, x.shape[0]
    m = M()
    ep = export(m, (torch.zeros(2, 3),), {"scale": 2.0})
    assert float(m.cnt) == 0.0  # exporting does not run the module's effects
    kinds = [(s.kind, s.arg.name, s.target) for s in ep.graph_signature.input_specs]
    assert kinds == [(InputKind.BUFFER, "b_cnt", "cnt"), (InputKind.CONSTANT_TENSOR, "c_t", "t"),
                     (InputKind.CONSTANT_TENSOR, "c_lifted_tensor_0", "lifted_tensor_0"),
                     (InputKind.USER_INPUT, "x", None), (InputKind.USER_INPUT, "scale", None)]
    assert set(ep.constants) == {"t", "lifted_tensor_0"}
    gm = ep.module()
    y, n = gm(torch.zeros(2, 3), scale=2.0)
    np.testing.assert_array_equal(_np(y), np.array([[4., 6., 8.]] * 2, np.float32))
    assert n == 2 and float(gm.cnt) == 1.0
    with pytest.raises(AssertionError, match=r"^Guard failed: scale == 2.0$"):
        gm(torch.zeros(2, 3), scale=3.0)


@pytest.mark.parametrize("make, shape", [
    (lambda: nn.Conv2d(3, 4, 3), (2, 3, 8, 8)), (lambda: nn.BatchNorm2d(3).eval(), (2, 3, 4, 4)),
    (lambda: nn.LayerNorm(4), (2, 4)), (lambda: nn.MaxPool2d(2), (2, 3, 4, 4)),
    (lambda: nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2), nn.Softmax(-1)), (3, 4)),
    (lambda: nn.TransformerEncoderLayer(4, 2, 8, batch_first=True).eval(), (2, 3, 4)),
])
def test_nn_modules_export_static_and_dynamic(make, shape):
    m = make()
    x = torch.randn(*shape)
    np.testing.assert_allclose(_np(export(m, (x,)).module()(x)), _np(m(x)), rtol=1e-6, atol=1e-7)
    ep = export(m, (x,), dynamic_shapes=({0: Dim("b")},))
    x5 = torch.randn(5, *shape[1:])
    np.testing.assert_allclose(_np(ep.module()(x5)), _np(m(x5)), rtol=1e-6, atol=1e-7)


def test_run_decompositions_linear_to_addmm():
    m = nn.Linear(4, 3)
    ep = export(m, (torch.randn(2, 4),)).run_decompositions()
    assert [n.target for n in ep.graph.nodes if n.op == "call_function"] == [torch.permute, torch.addmm]
    assert ep.dialect == "ATEN"
    x = torch.randn(2, 4)
    np.testing.assert_allclose(_np(ep.module()(x)), _np(m(x)), rtol=1e-6)


def test_save_load_round_trip(tmp_path):
    m = CondModel()
    m.register_buffer("b", torch.arange(3.0))
    ep = export(m, (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("batch", max=64)}})
    path = tmp_path / "m.pt2"
    torch.export.save(ep, path, extra_files={"note": "hi"})
    extra = {"note": ""}
    ep2 = torch.export.load(path, extra_files=extra)
    assert extra == {"note": "hi"}
    assert [s.kind for s in ep2.graph_signature.input_specs] == [s.kind for s in ep.graph_signature.input_specs]
    assert [n.name for n in ep2.graph.nodes] == [n.name for n in ep.graph.nodes]
    for x in (torch.ones(7, 3), -torch.ones(5, 3)):
        np.testing.assert_allclose(_np(ep2.module()(x)), _np(m(x)), rtol=1e-6)
    with pytest.raises(AssertionError, match=r"x.size\(\)\[0\] <= 64"):
        ep2.module()(torch.randn(65, 3))
    buf = io.BytesIO()
    torch.export.save(ep2, buf)
    buf.seek(0)
    assert torch.export.load(buf).graph_signature.parameters == ("lin.weight", "lin.bias")


def test_dim_repr_and_hints():
    assert repr(Dim("b")) == "Dim('b', min=0)"
    assert repr(Dim("c", min=3, max=9)) == "Dim('c', min=3, max=9)"
    assert repr(Dim("batch", min=2, max=10)) == "Dim('batch', max=10)"
    assert repr(Dim.AUTO) == "DimHint(AUTO)" and repr(Dim.STATIC) == "DimHint(STATIC)"


def test_against_torch():
    real = pytest.importorskip("torch")
    if not hasattr(real, "export"):
        pytest.skip("torch without torch.export")

    class RLinBuf(real.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = real.nn.Linear(4, 3)
            self.register_buffer("buf", real.ones(3))

        def forward(self, x):
            return real.relu(self.fc(x)) + self.buf
    rep = real.export.export(RLinBuf(), (real.randn(2, 4),))
    ep = export(LinBuf(), (torch.randn(2, 4),))
    assert [str(s) for s in ep.graph_signature.input_specs] == [str(s) for s in rep.graph_signature.input_specs]
    assert [s.kind.name for s in ep.graph_signature.output_specs] == [
        s.kind.name for s in rep.graph_signature.output_specs]
    assert list(ep.state_dict) == list(rep.state_dict)
    for bad in ((3, 4), (2, 5)):
        with pytest.raises(AssertionError) as ours:
            ep.module()(torch.randn(*bad))
        with pytest.raises(AssertionError) as theirs:
            rep.module()(real.randn(*bad))
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as theirs:
        rep(real.randn(2, 4))
    with pytest.raises(RuntimeError) as ours:
        ep(torch.randn(2, 4))
    assert str(ours.value) == str(theirs.value)
    assert repr(real.export.Dim("b")) == repr(Dim("b"))
    assert repr(real.export.Dim("batch", min=2, max=10)) == repr(Dim("batch", min=2, max=10))
