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
