"""torch.export.save / load in torch's .pt2 format: funcgrad's files load in torch 2.13 and torch's in funcgrad,
with the same outputs; a call torch's schema cannot express raises naming it; the archive's layout and schema
version are torch's."""
import io
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import funcgrad as torch
from funcgrad.export._aten import SCHEMAS, UnsupportedOp

nn = torch.nn
F = nn.functional

MODEL = '''
nn = torch.nn; F = torch.nn.functional
class Net(nn.Module):
    def __init__(s):
        super().__init__()
        s.conv = nn.Conv2d(3, 4, 3, padding=1); s.bn = nn.BatchNorm2d(4); s.pool = nn.MaxPool2d(2)
        s.fc = nn.Linear(4 * 4 * 4, 5); s.ln = nn.LayerNorm(5); s.drop = nn.Dropout(0.1)
        s.register_buffer("scale", torch.full((5,), 0.5))
    def forward(s, x, y):
        h = s.pool(F.relu(s.bn(s.conv(x))))
        h = torch.flatten(h, 1)
        h = s.drop(s.ln(s.fc(h)))
        h = torch.softmax(h, dim=-1) * 2.0 + y.mean() + s.scale
        z = torch.matmul(h, h.t()).view(-1) - 1
        return h.sigmoid(), z.tanh(), F.gelu(h).sum(dim=1, keepdim=True), torch.cat([h, h], 1).transpose(0, 1)
'''


def _net(lib):
    ns = {"torch": lib}
    exec(MODEL, ns)
    return ns["Net"]().eval()


def _np(t):
    return np.asarray(t.detach().numpy())


def _torch_run(script: str) -> str:
    """Run script under the real torch (a separate process: funcgrad is `torch` here)."""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_archive_layout_is_torchs(tmp_path):
    m = _net(torch)
    ep = torch.export.export(m, (torch.randn(2, 3, 8, 8), torch.randn(3)))
    path = tmp_path / "m.pt2"
    torch.export.save(ep, path)
    z = zipfile.ZipFile(path)
    names = set(z.namelist())
    for rec in ("archive_format", "archive_version", ".data/version", "byteorder", "models/model.json",
                "data/weights/model_weights_config.json", "data/constants/model_constants_config.json",
                "data/sample_inputs/model.pt"):
        assert "archive/" + rec in names
    assert z.read("archive/archive_format") == b"pt2"
    prog = json.loads(z.read("archive/models/model.json"))
    assert prog["schema_version"] == {"major": 8, "minor": 20}
    targets = [n["target"] for n in prog["graph_module"]["graph"]["nodes"]]
    assert targets[:3] == ["torch.ops.aten.conv2d.default", "torch.ops.aten.batch_norm.default",
                           "torch.ops.aten.relu.default"]
    assert "torch.ops.aten.sum.dim_IntList" in targets and "torch.ops.aten.mean.default" in targets
    cfg = json.loads(z.read("archive/data/weights/model_weights_config.json"))["config"]
    w = cfg["conv.weight"]
    assert w["is_param"] and w["tensor_meta"]["dtype"] == 7
    assert [s["as_int"] for s in w["tensor_meta"]["sizes"]] == [4, 3, 3, 3]
    raw = np.frombuffer(z.read("archive/data/weights/" + w["path_name"]), dtype="<f4").reshape(4, 3, 3, 3)
    np.testing.assert_array_equal(raw, _np(m.conv.weight))
    assert cfg["bn.num_batches_tracked"]["tensor_meta"]["dtype"] == 5


def test_round_trip_in_funcgrad(tmp_path):
    m = _net(torch)
    args = (torch.randn(2, 3, 8, 8), torch.randn(3))
    ep = torch.export.export(m, args)
    buf = io.BytesIO()
    torch.export.save(ep, buf, extra_files={"note": "hi"})
    buf.seek(0)
    extra = {"note": ""}
    ep2 = torch.export.load(buf, extra_files=extra)
    assert extra == {"note": "hi"}
    assert ep2.graph_signature.parameters == ep.graph_signature.parameters
    assert ep2.graph_signature.buffers == ep.graph_signature.buffers
    x = (torch.randn(2, 3, 8, 8), torch.randn(3))
    for a, b in zip(ep2.module()(*x), m(*x)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-7)
    with pytest.raises(AssertionError, match=r"x.size\(\)\[0\] == 2"):
        ep2.module()(torch.randn(3, 3, 8, 8), torch.randn(3))
    buf2 = io.BytesIO()
    torch.export.save(ep2, buf2)  # a loaded program saves again (its targets are ATen operators)
    buf2.seek(0)
    ep3 = torch.export.load(buf2)
    np.testing.assert_allclose(_np(ep3.module()(*x)[0]), _np(m(*x)[0]), rtol=1e-6)


def test_exact_values_through_the_archive(tmp_path):
    class Aff(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))

        def forward(self, x):
            return 1 - torch.relu(x @ self.w) * 0.5

    ep = torch.export.export(Aff(), (torch.ones(1, 2),))
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    buf.seek(0)
    out = torch.export.load(buf).module()(torch.tensor([[1.0, -1.0]]))
    # x @ w = [-2, -2]; relu -> 0; 1 - 0 = 1
    np.testing.assert_array_equal(_np(out), [[1.0, 1.0]])
    out = torch.export.load(io.BytesIO(buf.getvalue())).module()(torch.tensor([[1.0, 1.0]]))
    np.testing.assert_array_equal(_np(out), [[1 - 2.0, 1 - 3.0]])


def test_unsupported_call_names_the_op(tmp_path):
    class M(nn.Module):
        def forward(self, x):
            return torch.logdet(x)

    ep = torch.export.export(M(), (torch.randn(3, 3),))
    with pytest.raises(UnsupportedOp, match="logdet"):
        torch.export.save(ep, io.BytesIO())


def test_schemas_parse():
    s = SCHEMAS["aten.conv2d.default"]
    assert s.names() == ["input", "weight", "bias", "stride", "padding", "dilation", "groups"]
    assert s.args[3] == ("SymInt[2]", "stride", True, [1, 1], False)
    assert SCHEMAS["aten.add.Tensor"].args[2] == ("Scalar", "alpha", True, 1, True)
    assert SCHEMAS["aten.scaled_dot_product_attention.default"].args[4][3] == 0.0


def test_torch_loads_funcgrad_file(tmp_path):
    pytest.importorskip("torch")
    m = _net(torch)
    args = (torch.randn(2, 3, 8, 8), torch.randn(3))
    ep = torch.export.export(m, args)
    torch.export.save(ep, tmp_path / "fg.pt2")
    x = (torch.randn(2, 3, 8, 8), torch.randn(3))
    torch.save((x, [o.detach() for o in m(*x)]), tmp_path / "ref.pt")
    out = _torch_run(f"""
import torch
ep = torch.export.load({str(tmp_path / 'fg.pt2')!r})
x, ref = torch.load({str(tmp_path / 'ref.pt')!r})
out = ep.module()(*x)
print(max(float((a - b).abs().max()) for a, b in zip(out, ref)))
print(list(ep.graph_signature.parameters[:2]), "scale" in ep.graph_signature.buffers)
""")
    err, names = out.strip().splitlines()
    assert float(err) < 1e-6
    assert names == "['conv.weight', 'conv.bias'] True"


def test_funcgrad_loads_torch_file(tmp_path):
    pytest.importorskip("torch")
    path, ref = tmp_path / "th.pt2", tmp_path / "ref.npz"
    _torch_run(f"""
import torch, numpy as np
ns = {{"torch": torch}}
exec({MODEL!r}, ns)
m = ns["Net"]().eval()
args = (torch.randn(2, 3, 8, 8), torch.randn(3))
torch.export.save(torch.export.export(m, args), {str(path)!r})
x = (torch.randn(2, 3, 8, 8), torch.randn(3))
np.savez({str(ref)!r}, *[a.numpy() for a in x], *[o.detach().numpy() for o in m(*x)])
""")
    ep = torch.export.load(path)
    r = np.load(ref)
    outs = ep.module()(torch.tensor(r["arr_0"]), torch.tensor(r["arr_1"]))
    for i, o in enumerate(outs):
        np.testing.assert_allclose(_np(o), r[f"arr_{i + 2}"], rtol=1e-5, atol=1e-6)
    assert "scale" in ep.graph_signature.buffers


def test_widened_table_saves_ops_torch_loads(tmp_path):
    """Operators the one ATen table added for export (cumsum, clamp, flip, logsumexp, where, ...) save to a file
    torch 2.13 loads and runs to the same outputs."""
    pytest.importorskip("torch")

    class M(nn.Module):
        def forward(self, x):
            h = torch.cumsum(x, 1).clamp(-1.0, 2.0).flip([0])
            return torch.where(h > 0, torch.logsumexp(x, 1, keepdim=True), h).sin() + torch.erfinv(x.tanh() * 0.5)

    m = M()
    x = torch.randn(3, 4)
    torch.export.save(torch.export.export(m, (x,)), tmp_path / "w.pt2")
    torch.save((x, m(x)), tmp_path / "ref.pt")
    err = _torch_run(f"""
import torch
ep = torch.export.load({str(tmp_path / 'w.pt2')!r})
x, ref = torch.load({str(tmp_path / 'ref.pt')!r})
print(float((ep.module()(x) - ref).abs().max()))
""")
    assert float(err) < 1e-6


# --- dynamic shapes and torch.cond --------------------------------------------------------------------------

DYN_MODEL = '''
nn = torch.nn; F = torch.nn.functional
class Dyn(nn.Module):
    def __init__(s):
        super().__init__()
        s.fc = nn.Linear(6, 4); s.ln = nn.LayerNorm(4)
        s.register_buffer("scale", torch.full((4,), 0.5))
    def forward(s, x, y):
        B, T, C = x.shape
        h = s.ln(s.fc(x.reshape(B * T, C))).view(B, T, 4)
        h = torch.softmax(h, dim=-1) * 2.0 + s.scale
        z = torch.cat([h.sum(1), y], 0)
        return z * x.shape[0], h.transpose(0, 1).flatten(1), F.gelu(y).view(-1)
class Cnd(nn.Module):
    def __init__(s):
        super().__init__()
        s.fc = nn.Linear(3, 3)
    def forward(s, x):
        def pos(a):
            return s.fc(a).sin()
        def neg(a):
            return a.cos() * 2
        out = torch.cond(x.sum() > 0, pos, neg, (x,))
        return torch.cond(x.shape[0] > 4, lambda a: a + 1, lambda a: a - 1, (out,))
'''


def _dyn(lib, name):
    ns = {"torch": lib}
    exec(DYN_MODEL, ns)
    return ns[name]().eval()


def _dyn_export(lib, m, name):
    Dim = lib.export.Dim
    if name == "Dyn":
        return lib.export.export(m, (lib.randn(3, 5, 6), lib.randn(2, 4)), dynamic_shapes={
            "x": {0: Dim("batch", max=64), 1: Dim("seq")}, "y": {0: Dim("extra", min=2)}})
    return lib.export.export(m, (lib.randn(6, 3),), dynamic_shapes={"x": {0: Dim("batch", max=64)}})


# (name, inputs at several sizes; Cnd: both branches of both conds)
_SIZES = {"Dyn": [((3, 5, 6), (2, 4)), ((7, 2, 6), (5, 4)), ((2, 9, 6), (3, 4))],
          "Cnd": [((6, 3), 1.0), ((6, 3), -1.0), ((3, 3), 1.0), ((2, 3), -1.0)]}


def _inputs(lib, name):
    out = []
    for spec in _SIZES[name]:
        if name == "Dyn":
            out.append(tuple(lib.randn(*s) for s in spec))
        else:
            shape, sign = spec
            out.append(((lib.rand(*shape) + 0.1) * sign,))
    return out


def test_dynamic_program_json_is_torchs(tmp_path):
    ep = _dyn_export(torch, _dyn(torch, "Dyn"), "Dyn")
    path = tmp_path / "d.pt2"
    torch.export.save(ep, path)
    prog = json.loads(zipfile.ZipFile(path).read("archive/models/model.json"))
    assert prog["range_constraints"] == {"s0": {"min_val": 0, "max_val": 64}, "s1": {"min_val": 0, "max_val": None},
                                         "s2": {"min_val": 2, "max_val": None}}
    g = prog["graph_module"]["graph"]
    sym = "Symbol('{}', positive=True, integer=True)"
    x = g["tensor_values"]["x"]
    assert x["sizes"] == [{"as_expr": {"expr_str": sym.format("s0"), "hint": {"as_int": 3}}},
                          {"as_expr": {"expr_str": sym.format("s1"), "hint": {"as_int": 5}}}, {"as_int": 6}]
    # x's strides: [6*s1, 6, 1]
    assert x["strides"][0] == {"as_expr": {"expr_str": f"Mul(Integer(6), {sym.format('s1')})", "hint": {"as_int": 30}}}
    nodes = {n["name"]: n for n in g["nodes"]}
    sizes = [n for n in g["nodes"] if n["target"] == "torch.ops.aten.sym_size.int"]
    assert [(n["inputs"][0]["arg"], n["inputs"][1]["arg"]) for n in sizes][:2] == [
        ({"as_tensor": {"name": "x"}}, {"as_int": 0}), ({"as_tensor": {"name": "x"}}, {"as_int": 1})]
    mul = next(n for n in g["nodes"] if n["target"] == "_operator.mul")
    assert mul["outputs"] == [{"as_sym_int": {"as_name": mul["name"]}}]
    assert g["sym_int_values"][mul["name"]]["as_expr"]["expr_str"] == \
        f"Mul({sym.format('s0')}, {sym.format('s1')})"
    reshape = next(n for n in g["nodes"] if n["target"] == "torch.ops.aten.reshape.default")
    assert reshape["inputs"][1]["arg"] == {"as_sym_ints": [{"as_name": mul["name"]}, {"as_int": 6}]}
    cat = nodes["cat"]["name"]
    assert g["tensor_values"][cat]["sizes"][0]["as_expr"] == {
        "expr_str": f"Add({sym.format('s0')}, {sym.format('s2')})", "hint": {"as_int": 5}}


def test_dynamic_round_trip_in_funcgrad(tmp_path):
    m = _dyn(torch, "Dyn")
    ep = _dyn_export(torch, m, "Dyn")
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    ep2 = torch.export.load(io.BytesIO(buf.getvalue()))
    assert {k: (v.lower, v.upper) for k, v in ep2.range_constraints.items()} == {
        "s0": (0, 64), "s1": (0, torch.export.dynamic_shapes.int_oo), "s2": (2, torch.export.dynamic_shapes.int_oo)}
    assert '"f32[s0 + s2, 4]"' in str(ep2)
    for x, y in _inputs(torch, "Dyn"):
        for a, b in zip(ep2.module()(x, y), m(x, y)):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-7)
    with pytest.raises(AssertionError, match=r"x.size\(\)\[0\] <= 64"):
        ep2.module()(torch.randn(65, 2, 6), torch.randn(2, 4))
    buf2 = io.BytesIO()
    torch.export.save(ep2, buf2)  # a loaded dynamic program saves again
    assert json.loads(zipfile.ZipFile(buf2).read("archive/models/model.json"))["range_constraints"] == \
        json.loads(zipfile.ZipFile(buf).read("archive/models/model.json"))["range_constraints"]


def test_cond_round_trip_exact_values():
    class M(nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda a: a * 2, lambda a: a - 10, (x,)), x.shape[0] * x

    ep = torch.export.export(M(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: torch.export.Dim("n")}})
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    prog = json.loads(zipfile.ZipFile(buf).read("archive/models/model.json"))
    cond = next(n for n in prog["graph_module"]["graph"]["nodes"] if n["target"] == "torch.ops.higher_order.cond")
    assert [next(iter(i["arg"])) for i in cond["inputs"]] == ["as_tensor", "as_graph", "as_graph", "as_tensors"]
    assert [i["arg"]["as_graph"]["name"] for i in cond["inputs"][1:3]] == ["true_graph_0", "false_graph_0"]
    assert cond["outputs"] == [{"as_tensor": {"name": "getitem"}}] and cond["is_hop_single_tensor_return"] is False
    gm = torch.export.load(io.BytesIO(buf.getvalue())).module()
    a, b = gm(torch.tensor([[1.0, 2.0]] * 4))
    np.testing.assert_array_equal(_np(a), [[2.0, 4.0]] * 4)
    np.testing.assert_array_equal(_np(b), [[4.0, 8.0]] * 4)
    a, b = gm(-torch.ones(5, 2))
    np.testing.assert_array_equal(_np(a), [[-11.0, -11.0]] * 5)
    np.testing.assert_array_equal(_np(b), [[-5.0, -5.0]] * 5)


def test_unsupported_size_and_operator_name_the_construct():
    class Ratio(nn.Module):
        def forward(self, x):
            return x * (x.shape[0] // x.shape[1])  # FloorDiv(s0, s1): a symbol divisor, which funcgrad does not find

    Dim = torch.export.Dim
    ep = torch.export.export(Ratio(), (torch.randn(8, 3),), dynamic_shapes={"x": {0: Dim("a"), 1: Dim("b")}})
    with pytest.raises(UnsupportedOp, match=r"the int floordiv = 2 is not an expression funcgrad finds"):
        torch.export.save(ep, io.BytesIO())
    m = _dyn(torch, "Cnd")
    buf = io.BytesIO()
    torch.export.save(_dyn_export(torch, m, "Cnd"), buf)
    files = {n: zipfile.ZipFile(buf).read(n) for n in zipfile.ZipFile(buf).namelist()}
    files["archive/models/model.json"] = files["archive/models/model.json"].replace(
        b"torch.ops.higher_order.cond", b"torch.ops.higher_order.while_loop", 1)
    bad = io.BytesIO()
    with zipfile.ZipFile(bad, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
    with pytest.raises(UnsupportedOp, match="higher-order operator torch.ops.higher_order.while_loop"):
        torch.export.load(io.BytesIO(bad.getvalue()))


def test_size_polynomials_print_as_sympy():
    from funcgrad.export._expr import Poly
    p = Poly({("s0",): 2, (): -1})
    q = Poly({("s2", "s2"): 1, ("s0", "s1"): 3, (): 4})
    assert str(p) == "2*s0 - 1" and str(q) == "3*s0*s1 + s2**2 + 4"
    assert p.value({"s0": 5}) == 9 and q.value({"s0": 2, "s1": 3, "s2": 4}) == 38
    sympy = pytest.importorskip("sympy")
    s0, s1, s2 = (sympy.Symbol(n, positive=True, integer=True) for n in ("s0", "s1", "s2"))
    assert p.srepr() == sympy.srepr(2 * s0 - 1)
    assert sympy.sympify(q.srepr()) == 3 * s0 * s1 + s2 ** 2 + 4


def test_torch_loads_funcgrad_dynamic_file(tmp_path):
    """Both models in one torch process: each at several sizes (Cnd: both branches of both conds)."""
    pytest.importorskip("torch")
    cases = []
    for name in ("Dyn", "Cnd"):
        m = _dyn(torch, name)
        torch.export.save(_dyn_export(torch, m, name), tmp_path / f"{name}.pt2")
        xs = _inputs(torch, name)
        refs = [[o.detach() for o in (m(*x) if name == "Dyn" else (m(*x),))] for x in xs]
        cases.append((name, xs, refs))
    torch.save([(xs, refs) for _, xs, refs in cases], tmp_path / "ref.pt")
    out = _torch_run(f"""
import torch
for name, (xs, refs) in zip(("Dyn", "Cnd"), torch.load({str(tmp_path / 'ref.pt')!r})):
    ep = torch.export.load({str(tmp_path)!r} + f"/{{name}}.pt2")
    m = ep.module()
    for x, ref in zip(xs, refs):
        out = m(*x)
        out = out if isinstance(out, (tuple, list)) else (out,)
        print(max(float(((a - b).abs() / b.abs().clamp(min=1)).max()) for a, b in zip(out, ref)),
              [tuple(o.shape) for o in out])
    print(sorted(str(k) for k in ep.range_constraints))
""")
    lines = iter(out.strip().splitlines())
    for name, xs, refs in cases:
        for ref in refs:
            err, shapes = next(lines).split(" ", 1)
            assert float(err) < 1e-6  # relative to the value where it exceeds 1 (float32 outputs up to ~20)
            assert shapes == str([tuple(r.shape) for r in ref])
        assert next(lines) == (str(["s0", "s1", "s2"]) if name == "Dyn" else "['s0']")


def test_funcgrad_loads_torch_dynamic_file(tmp_path):
    pytest.importorskip("torch")
    _torch_run(f"""
import torch, numpy as np
exec({_DYN_HELPERS!r})
for name in ("Dyn", "Cnd"):
    ns = {{"torch": torch}}
    exec({DYN_MODEL!r}, ns)
    m = ns[name]().eval()
    torch.export.save(_dyn_export(torch, m, name), {str(tmp_path)!r} + f"/{{name}}.pt2")
    arrays = []
    for x in _inputs(torch, name):
        out = m(*x)
        arrays += [a.numpy() for a in x] + [o.detach().numpy() for o in (out if isinstance(out, tuple) else (out,))]
    np.savez({str(tmp_path)!r} + f"/{{name}}.npz", *arrays)
""")
    for name in ("Dyn", "Cnd"):
        ep = torch.export.load(tmp_path / f"{name}.pt2")
        r = np.load(tmp_path / f"{name}.npz")
        arrays = [r[f"arr_{i}"] for i in range(len(r.files))]
        n_in, n_out = (2, 3) if name == "Dyn" else (1, 1)
        gm = ep.module()
        for k in range(len(_SIZES[name])):
            chunk = arrays[k * (n_in + n_out):(k + 1) * (n_in + n_out)]
            out = gm(*[torch.tensor(a) for a in chunk[:n_in]])
            out = out if isinstance(out, tuple) else (out,)
            for o, want in zip(out, chunk[n_in:]):
                np.testing.assert_allclose(_np(o), want, rtol=1e-6, atol=1e-6)
        assert len(ep.range_constraints) == (3 if name == "Dyn" else 1)
    with pytest.raises(AssertionError, match=r"<= 64"):
        gm(torch.randn(65, 3))


_DYN_HELPERS = "\n".join(__import__("inspect").getsource(f) for f in (_dyn_export, _inputs)) + \
    f"\n_SIZES = {_SIZES!r}\n"
