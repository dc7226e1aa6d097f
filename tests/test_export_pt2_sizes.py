"""torch.export .pt2 files whose sizes come from floor division and remainder (x.shape[0] // 2, pooling, strided
convolution) or from derived Dims (2 * Dim("b") + 1): funcgrad writes the expressions and range constraints torch
2.13 writes for the same program, raises torch's errors and guards for derived Dims, torch loads and runs
funcgrad's files at several sizes, and funcgrad torch's."""
import io
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import funcgrad as torch
from funcgrad.export._expr import Poly, floordiv, max1, mod, parse_affine, smul

PROGS = '''
F = torch.nn.functional
Dim = torch.export.Dim
class Scalars(torch.nn.Module):
    def forward(self, x):
        n = x.shape[0]
        return x * (n // 2) + (n % 4)
class Pools(torch.nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 2), F.max_pool2d(F.max_pool2d(x, 3, 2, 1), 2)
class Strided(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.c = torch.nn.Conv2d(2, 3, 3, stride=2, padding=1)
    def forward(self, x):
        return torch.flatten(self.c(x), 1)
class Deep(torch.nn.Module):  # sizes that change only every 12 steps of the input's
    def __init__(s):
        super().__init__()
        s.c1 = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1); s.c2 = torch.nn.Conv2d(4, 2, 5, stride=3, dilation=2)
    def forward(self, x):
        return self.c2(F.max_pool2d(torch.relu(self.c1(x)), 2))
class Halves(torch.nn.Module):
    def forward(self, x):
        return x.view(x.shape[0] // 2, 2 * x.shape[1])
class Shifted(torch.nn.Module):
    def forward(self, x, y):
        return x.narrow(0, 1, y.shape[0]) + y, x.shape[0] * y
def cases():
    b = Dim("b", min=3, max=10)
    return {
        "Scalars": (Scalars(), (torch.randn(6, 3),), {"x": {0: Dim("b", min=4, max=100)}}),
        "Pools": (Pools(), (torch.randn(1, 2, 12, 10),), {"x": {2: Dim("h", min=9), 3: Dim("w", min=9, max=64)}}),
        "Strided": (Strided(), (torch.randn(1, 2, 8, 10),), {"x": {2: Dim("h", min=4), 3: Dim("w", min=4)}}),
        "Deep": (Deep(), (torch.randn(2, 3, 70, 66),), {"x": {2: Dim("h", min=64, max=512), 3: Dim("w", min=64)}}),
        "Halves": (Halves(), (torch.randn(6, 3),), {"x": {0: 2 * Dim("b")}}),
        "Shifted": (Shifted(), (torch.randn(7, 3), torch.randn(6, 3)), {"x": {0: b + 1}, "y": {0: b}}),
        "Shifted2": (Shifted(), (torch.randn(13, 3), torch.randn(12, 3)), {"x": {0: 2 * b + 1}, "y": {0: 2 * b}}),
    }
SIZES = {"Scalars": [[(4, 3)], [(9, 3)], [(17, 3)]], "Pools": [[(1, 2, 9, 9)], [(1, 2, 14, 11)], [(1, 2, 21, 30)]],
         "Strided": [[(1, 2, 4, 5)], [(1, 2, 9, 12)], [(1, 2, 16, 7)]],
         "Deep": [[(2, 3, 64, 64)], [(2, 3, 101, 77)], [(2, 3, 200, 97)]], "Halves": [[(4, 3)], [(10, 3)], [(30, 3)]],
         "Shifted": [[(4, 3), (3, 3)], [(11, 3), (10, 3)]], "Shifted2": [[(7, 3), (6, 3)], [(21, 3), (20, 3)]]}
'''


def _programs(lib):
    ns = {"torch": lib}
    exec(PROGS, ns)
    return ns


def _model_json(path) -> dict:
    z = zipfile.ZipFile(path)
    return json.loads(z.read(next(n for n in z.namelist() if n.endswith("models/model.json"))))


def _torch_run(script: str) -> str:
    """Run script under the real torch (a separate process: funcgrad is `torch` here)."""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


# The torch side: export each program with real torch, compare every expression of funcgrad's file with torch's
# (torch's symbols renamed to funcgrad's through the inputs' sizes; sympy re-canonicalises after renaming, so the
# strings compare exactly), run funcgrad's file at the SIZES against funcgrad's outputs, and save torch's files
# and outputs for funcgrad to load.
_TORCH_SIDE = r'''
import json, sys, zipfile, numpy as np, sympy, torch
from torch.utils._sympy.functions import FloorDiv, Mod, PythonMod, Max
exec(PROGS)
LOC = {"FloorDiv": FloorDiv, "Mod": Mod, "PythonMod": PythonMod, "Max": Max, "Symbol": sympy.Symbol,
       "Integer": sympy.Integer, "Add": sympy.Add, "Mul": sympy.Mul, "Pow": sympy.Pow}
def model(path):
    z = zipfile.ZipFile(path)
    return json.loads(z.read(next(n for n in z.namelist() if n.endswith("models/model.json"))))
def exprs(sizes):
    return [s.get("as_int", s.get("as_expr", {}).get("expr_str")) for s in sizes]
refs = torch.load(TMP + "/refs.pt")
torch.manual_seed(0)
for name, (m, args, ds) in cases().items():
    ep = torch.export.export(m, args, dynamic_shapes=ds)
    torch.export.save(ep, TMP + f"/torch_{name}.pt2")
    t, f = model(TMP + f"/torch_{name}.pt2"), model(TMP + f"/fg_{name}.pt2")
    tg, fg = t["graph_module"]["graph"], f["graph_module"]["graph"]
    ren = {}
    for spec in t["graph_module"]["signature"]["input_specs"]:
        if "user_input" in spec:
            n = spec["user_input"]["arg"]["as_tensor"]["name"]
            for a, b in zip(exprs(tg["tensor_values"][n]["sizes"]), exprs(fg["tensor_values"][n]["sizes"])):
                if isinstance(a, str):
                    ta, fb = sympy.sympify(a, locals=LOC), sympy.sympify(b, locals=LOC)
                    (sa,), (sb,) = ta.free_symbols, fb.free_symbols
                    ren[sa] = sb
    canon = lambda e: e if isinstance(e, int) else sympy.srepr(sympy.sympify(e, locals=LOC).xreplace(ren))
    bad = []
    rc = {str(sympy.sympify(k, locals={**LOC, **{str(s): s for s in ren}}).xreplace(ren)): v
          for k, v in t["range_constraints"].items()}
    if list(rc.items()) != list(f["range_constraints"].items()):
        bad.append(("range_constraints", rc, f["range_constraints"]))
    for n, meta in tg["tensor_values"].items():
        for field in ("sizes", "strides"):
            want = [canon(e) for e in exprs(meta[field])]
            if want != exprs(fg["tensor_values"][n][field]):
                bad.append((n, field, want, exprs(fg["tensor_values"][n][field])))
    value = lambda v: v.get("as_int", v.get("as_expr", {}).get("expr_str"))
    want = sorted(str(canon(value(v))) for v in tg["sym_int_values"].values())
    got = sorted(str(value(v)) for v in fg["sym_int_values"].values())
    if want != got:
        bad.append(("sym_int_values", want, got))
    print(name, "expressions", "same" if not bad else bad)
    fm = torch.export.load(TMP + f"/fg_{name}.pt2").module()
    errs, arrays = [], []
    for xs, want in zip(*refs[name]):
        out = fm(*xs)
        out = out if isinstance(out, tuple) else (out,)
        errs.append(max(float((a - b).abs().max()) if a.shape == b.shape else float("inf") for a, b in zip(out, want)))
        xs = [torch.randn(*x.shape) for x in xs]
        ref = m(*xs)
        arrays += [x.numpy() for x in xs] + [o.detach().numpy() for o in (ref if isinstance(ref, tuple) else (ref,))]
    np.savez(TMP + f"/torch_{name}.npz", *arrays)
    print(name, "runs", max(errs))
'''


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """funcgrad's files and reference outputs, then the torch side's report (lines) and files."""
    pytest.importorskip("torch")
    tmp = tmp_path_factory.mktemp("pt2sizes")
    torch.manual_seed(0)
    refs = {}
    for name, (m, args, ds) in _programs(torch)["cases"]().items():
        torch.export.save(torch.export.export(m, args, dynamic_shapes=ds), tmp / f"fg_{name}.pt2")
        xs_all, outs = [], []
        for shapes in _programs(torch)["SIZES"][name]:
            xs = [torch.randn(*s) for s in shapes]
            out = m(*xs)
            xs_all.append(xs)
            outs.append([o.detach() for o in (out if isinstance(out, tuple) else (out,))])
        refs[name] = (xs_all, outs)
    torch.save(refs, tmp / "refs.pt")
    out = _torch_run(f"PROGS = {PROGS!r}\nTMP = {str(tmp)!r}\n" + _TORCH_SIDE)
    return tmp, out.strip().splitlines()


NAMES = ["Scalars", "Pools", "Strided", "Deep", "Halves", "Shifted", "Shifted2"]


@pytest.mark.parametrize("name", NAMES)
def test_expressions_and_ranges_are_torchs(both, name):
    _, lines = both
    assert f"{name} expressions same" in lines, [ln for ln in lines if ln.startswith(name)]


@pytest.mark.parametrize("name", NAMES)
def test_torch_runs_funcgrad_file_at_several_sizes(both, name):
    _, lines = both
    err = next(ln for ln in lines if ln.startswith(f"{name} runs ")).split()[-1]
    assert float(err) < 1e-5


@pytest.mark.parametrize("name", NAMES)
def test_funcgrad_runs_torch_file_at_several_sizes(both, name):
    tmp, _ = both
    ep = torch.export.load(tmp / f"torch_{name}.pt2")
    r = np.load(tmp / f"torch_{name}.npz")
    arrays = [r[f"arr_{i}"] for i in range(len(r.files))]
    sizes = _programs(torch)["SIZES"][name]
    n_in = len(sizes[0])
    n_out = len(arrays) // len(sizes) - n_in
    gm = ep.module()
    for k in range(len(sizes)):
        chunk = arrays[k * (n_in + n_out):(k + 1) * (n_in + n_out)]
        out = gm(*[torch.tensor(a) for a in chunk[:n_in]])
        out = out if isinstance(out, tuple) else (out,)
        assert len(out) == n_out
        for o, want in zip(out, chunk[n_in:]):
            np.testing.assert_allclose(np.asarray(o.detach().numpy()), want, rtol=1e-5, atol=1e-5)


def test_round_trip_keeps_floordiv_and_derived_sizes():
    ns = _programs(torch)
    m, args, ds = ns["cases"]()["Halves"]
    ep = torch.export.export(m, args, dynamic_shapes=ds)
    assert {k: (v.lower, v.upper) for k, v in ep.range_constraints.items()} == {
        "2*s0": (0, torch.export.dynamic_shapes.int_oo), "s0": (2, torch.export.dynamic_shapes.int_oo)}
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    ep2 = torch.export.load(io.BytesIO(buf.getvalue()))
    assert list(ep2.range_constraints) == ["2*s0", "s0"]
    out = ep2.module()(torch.arange(30.0).reshape(10, 3))
    np.testing.assert_array_equal(out.numpy(), np.arange(30.0).reshape(5, 6))
    buf2 = io.BytesIO()
    torch.export.save(ep2, buf2)  # a loaded program saves the same expressions again
    assert _model_json(buf2)["graph_module"]["graph"]["sym_int_values"] == \
        _model_json(buf)["graph_module"]["graph"]["sym_int_values"]
    m, args, ds = ns["cases"]()["Pools"]
    ep = torch.export.export(m, args, dynamic_shapes=ds)
    assert '"f32[1, 2, (s0//2), (s1//2)]"' in str(ep)
    assert '"f32[1, 2, (s0//2), (s1//2)]"' in str(torch.export.load(_saved(ep)))


def _saved(ep):
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    return io.BytesIO(buf.getvalue())


# --- derived Dims: errors, ranges and module() guards against torch's -------------------------------------------

_DERIVED = r'''
Dim = torch.export.Dim
class G(torch.nn.Module):
    def forward(self, x, y):
        return x.sum() + y.sum()
def msg(f):
    try:
        r = f()
        return "OK " + repr(r)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
b = Dim("b", min=3, max=10)
R = torch.randn
out = []
for x, y, spec in [(13, 11, {"x": {0: 2*b + 1}, "y": {0: 2*b}}), (12, 5, {"x": {0: 2*b + 1}, "y": {0: b}}),
                   (25, None, {"x": {0: 2*b + 1}, "y": None}), (13, 5, {"x": {0: 2*b + 1}, "y": {0: b}}),
                   (5, 13, {"x": {0: b}, "y": {0: 2*b + 1}})]:
    out.append(msg(lambda: torch.export.export(G(), (R(x, 3), R(y, 3) if y else R(2, 2)), dynamic_shapes=spec)))
for spec, good, bad in [({"x": {0: b + 1}, "y": {0: b}}, (7, 6), [(7, 5), (12, 11), (3, 2), (5, 4)]),
                        ({"x": {0: 2*b + 1}, "y": {0: 2*b}}, (13, 12), [(13, 10), (12, 11), (23, 22), (9, 8)]),
                        ({"x": {0: 2*b + 1}, "y": {0: b}}, (13, 6), [(13, 5), (12, 6), (9, 4)]),
                        ({"x": {0: b}, "y": {0: 2*b + 1}}, (6, 13), [(6, 11), (11, 23), (4, 9)]),
                        ({"x": {0: 2*b + 1}, "y": None}, (13, None), [(12, None), (5, None), (23, None)])]:
    ep = torch.export.export(G(), (R(good[0], 3), R(good[1], 3) if good[1] else R(2, 2)), dynamic_shapes=spec)
    out.append(repr({str(k): (int(v.lower), str(v.upper)) for k, v in ep.range_constraints.items()}))
    m = ep.module()
    for x, y in bad:
        out.append(msg(lambda: tuple(m(R(x, 3), R(y, 3) if y else R(2, 2)).shape)))
class G3(torch.nn.Module):
    def forward(self, x, y, z):
        return x.sum() + y.sum() + z.sum()
m = torch.export.export(G3(), (R(13, 3), R(13, 2), R(12, 1)),
                        dynamic_shapes={"x": {0: 2 * b + 1}, "y": {0: 2 * b + 1}, "z": {0: 2 * b}}).module()
out += [msg(lambda: tuple(m(R(9, 3), R(x, 2), R(z, 1)).shape)) for x, z in ((11, 8), (9, 10), (9, 8))]
c = Dim("c", min=3, max=7)
out.append(repr([str(d) for d in (2 * Dim("c") + 1, Dim("c") * 2, Dim("c") - 1, 3 * (2 * Dim("c") + 1), 1 + c)]))
out.append(repr([((2 * c + 1).min, (2 * c + 1).max), ((c - 3).min, (c * 4).max), (c + 2).root.__name__]))
for f in (lambda: 1 - c, lambda: c * 0, lambda: c + 1.5, lambda: 2.0 * c, lambda: (Dim("c") - 1).min):
    out.append(msg(f))
'''


def _canon(line: str) -> str:
    """torch's symbols (s17, s65, ...) renamed in order of appearance, as funcgrad numbers them."""
    import re
    names: dict = {}
    return re.sub(r"\bs\d+\b", lambda m: names.setdefault(m.group(0), f"s{len(names)}"), line)


def test_derived_dims_errors_ranges_and_guards_are_torchs():
    pytest.importorskip("torch")
    want = _torch_run("import json, torch\n" + _DERIVED + "\nprint(json.dumps(out))")
    ns = {"torch": torch}
    exec(_DERIVED, ns)
    got = ns["out"]
    want = json.loads(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert _canon(g) == _canon(w)


def test_derived_dim_keeps_guards_through_the_archive():
    Dim = torch.export.Dim
    b = Dim("b", min=3, max=10)
    ns = {"torch": torch}
    exec(_DERIVED.split("b = Dim")[0], ns)
    ep = torch.export.export(ns["G"](), (torch.randn(13, 3), torch.randn(12, 3)),
                             dynamic_shapes={"x": {0: 2 * b + 1}, "y": {0: 2 * b}})
    ep2 = torch.export.load(_saved(ep))
    assert {k: (v.lower, v.upper) for k, v in ep2.range_constraints.items()} == {
        "2*s0 + 1": (7, 21), "2*s0": (6, 20), "s0": (3, 10)}
    m = ep2.module()
    assert float(m(torch.ones(9, 3), torch.ones(8, 3))) == 51.0
    with pytest.raises(AssertionError, match=r"Guard failed: -1 \+ x.size\(\)\[0\] == y.size\(\)\[0\]"):
        m(torch.ones(9, 3), torch.ones(6, 3))
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] <= 21"):
        m(torch.ones(23, 3), torch.ones(22, 3))


# --- the expressions themselves ---------------------------------------------------------------------------------

def test_expressions_simplify_and_print_as_torchs_sympy():
    """Each funcgrad expression against the same one built with torch's sympy functions (in a torch process)."""
    pytest.importorskip("torch")
    S, T = Poly({("s0",): 1}), Poly({("s1",): 1})
    ours = [S // 2, S % 4, (S - 1) // 2 + 1, S + S // 2, 3 * (T // 2) + S * T + 1, (T // 2) * (S // 2) * 2,
            (S % 4) * (S // 2), smul(max1(S // 2), T), (S // 2) * (S // 2), (S - 5) % 4, (2 * S + 2) // 4,
            (4 * S + 3) // 2, (2 * S + 1) % 2, S // 2 + T // 3, max1(S - 1), max1((S - 1) // 2 + 1), max1(2 * S - 1),
            (S // 2) // 3, ((S - 1) // 2 - 1) // 2 + 1, 2 * ((S - 1) // 2 + 1), smul(12, max1(S - 1)),
            smul(smul((S - 1) // 2 + 1, (T - 1) // 2 + 1), 3), smul(S, (S - 1) // 2 + 1), smul(3 * S, T + 1)]
    theirs = ("[FloorDiv(s,2), Mod(s,4), FloorDiv(s-1,2)+1, s+FloorDiv(s,2), 3*FloorDiv(t,2)+s*t+1, "
              "FloorDiv(t,2)*FloorDiv(s,2)*2, Mod(s,4)*FloorDiv(s,2), Max(1, FloorDiv(s,2))*t, FloorDiv(s,2)**2, "
              "PythonMod(s-5, 4), FloorDiv(2*s+2, 4), FloorDiv(4*s+3, 2), Mod(2*s+1, 2), FloorDiv(s,2)+FloorDiv(t,3), "
              "Max(1, s-1), Max(1, FloorDiv(s-1,2)+1), Max(1, 2*s-1), FloorDiv(FloorDiv(s,2),3), "
              "FloorDiv(FloorDiv(s-1,2)-1,2)+1, 2*(FloorDiv(s-1,2)+1), 12*Max(1, s-1), "
              "(FloorDiv(s-1,2)+1)*(FloorDiv(t-1,2)+1)*3, s*(FloorDiv(s-1,2)+1), 3*s*(t+1)]")
    out = _torch_run(f"""
import sympy, torch
from torch.utils._sympy.functions import FloorDiv, Mod, PythonMod, Max
s, t = (sympy.Symbol(n, positive=True, integer=True) for n in ("s0", "s1"))
for e in {theirs}:
    print(sympy.srepr(e))
""").splitlines()
    assert [p.srepr() for p in ours] == out
    assert str((S - 1) // 2 + 1) == "(((s0 - 1)//2)) + 1" and str(S // 2) == "(s0//2)"
    assert [floordiv(S, 1), mod(S * 6, 3), floordiv(Poly.of(7), 2)] == [S, 0, 3]
    assert (S // 2).value({"s0": 9}) == 4 and ((S - 5) % 4).value({"s0": 2}) == 1


def test_affine_sizes_parse_back():
    sym = "Symbol('{}', positive=True, integer=True)"
    assert parse_affine(sym.format("s3")) == Poly({("s3",): 1})
    assert parse_affine(f"Add(Mul(Integer(2), {sym.format('s0')}), Integer(1))") == 2 * Poly({("s0",): 1}) + 1
    assert parse_affine(f"Add({sym.format('s0')}, Integer(-1))") == Poly({("s0",): 1}) - 1
    assert parse_affine(f"FloorDiv({sym.format('s0')}, Integer(2))") is None
    assert parse_affine(f"Mul({sym.format('s0')}, {sym.format('s1')})") is None


_GUARD_SPECS = '''
Dim = torch.export.Dim
class G(torch.nn.Module):
    def forward(self, x, y):
        return x.sum() + y.sum()
class G3(torch.nn.Module):
    def forward(self, x, y, z):
        return x.sum() + y.sum() + z.sum()
b = Dim("b", min=3, max=10)
SPECS = [({"x": {0: b + 1}, "y": {0: b}}, (7, 6)), ({"x": {0: 2 * b + 1}, "y": {0: b}}, (13, 6)),
         ({"x": {0: b}, "y": {0: 2 * b + 1}}, (6, 13)), ({"x": {0: 2 * b + 1}, "y": {0: 2 * b}}, (13, 12)),
         ({"x": {0: b}, "y": {0: 2 * b}}, (6, 12)), ({"x": {0: b - 2}, "y": {0: b}}, (4, 6)),
         ({"x": {0: b}, "y": {0: b}}, (6, 6)), ({"x": {0: b}, "y": None}, (6, 2)),
         ({"x": {0: b}, "y": {0: b}, "z": {0: b}}, (6, 6, 6)),
         ({"x": {0: 2 * b + 1}, "y": {0: 2 * b + 1}, "z": {0: b}}, (13, 13, 6))]
def program(spec, sizes):
    return (G() if len(sizes) == 2 else G3()), tuple(torch.randn(n, 3) for n in sizes)
'''


def test_guards_code_is_torchs_and_torch_checks_it(tmp_path):
    """The related sizes' guards funcgrad writes are torch's, and torch's module() of funcgrad's file applies them."""
    pytest.importorskip("torch")
    ns = {"torch": torch}
    exec(_GUARD_SPECS, ns)
    ours = []
    for k, (spec, sizes) in enumerate(ns["SPECS"]):
        ep = torch.export.export(*ns["program"](spec, sizes), dynamic_shapes=spec)
        torch.export.save(ep, tmp_path / f"g{k}.pt2")
        ours.append(_model_json(tmp_path / f"g{k}.pt2")["guards_code"])
    assert ours[0] == ["L['x'].size()[0] == (1 + L['y'].size()[0])"] and ours[3] == [] and ours[7] == []
    assert ours[8] == ["L['y'].size()[0] == L['x'].size()[0]", "L['z'].size()[0] == L['y'].size()[0]"]
    out = _torch_run("import json, torch, zipfile\n" + _GUARD_SPECS + f"""
theirs, checks = [], []
for k, (spec, sizes) in enumerate(SPECS):
    ep = torch.export.export(*program(spec, sizes), dynamic_shapes=spec)
    torch.export.save(ep, {str(tmp_path)!r} + f"/t{{k}}.pt2")
    z = zipfile.ZipFile({str(tmp_path)!r} + f"/t{{k}}.pt2")
    theirs.append(json.loads(z.read(next(n for n in z.namelist() if n.endswith("models/model.json"))))["guards_code"])
    m = torch.export.load({str(tmp_path)!r} + f"/g{{k}}.pt2").module()
    m(*program(spec, sizes)[1])
    try:
        m(*program(spec, sizes[:-1] + (sizes[-1] + 1,))[1])
        checks.append("no guard")
    except AssertionError as e:
        checks.append(str(e))
print(json.dumps([theirs, checks]))
""")
    theirs, checks = json.loads(out)
    assert ours == theirs
    assert checks[:3] == ["Guard failed: x.size()[0] == 1 + y.size()[0]",
                          "Guard failed: x.size()[0] == 1 + 2 * y.size()[0]",
                          "Guard failed: y.size()[0] == 1 + 2 * x.size()[0]"]
    assert checks[6] == "Guard failed: y.size()[0] == x.size()[0]"


_PERIODIC = '''
class Halves(torch.nn.Module):
    def forward(self, x):
        return x.view(x.shape[0] // 2, 2 * x.shape[1])
class Sixths(torch.nn.Module):
    def forward(self, x):
        return x.view(x.shape[0] // 6, 6, x.shape[1])
Dim = torch.export.Dim
fixes = []
for m, n, d in [(Halves(), 6, Dim("b", max=100)), (Sixths(), 12, Dim("b", min=4, max=200)), (Halves(), 8, Dim("b"))]:
    try:
        torch.export.export(m, (torch.randn(n, 3),), dynamic_shapes={"x": {0: d}})
        fixes.append("exported")
    except Exception as e:  # noqa: BLE001 (torch's UserError lives in torch._dynamo.exc, ours in torch.export)
        fixes.append(type(e).__name__ + ": " + str(e).split("Suggested fixes:")[1].split("\\n\\n")[0].strip())
'''


def test_size_that_must_be_a_multiple_suggests_torchs_derived_dim():
    """x.view(n // 2, ...) with a plain Dim: torch's error suggests the derived Dim `b = 2*_b`, and so does ours."""
    pytest.importorskip("torch")
    theirs = json.loads(_torch_run("import json, torch\n" + _PERIODIC + "\nprint(json.dumps(fixes))"))
    ns = {"torch": torch}
    exec(_PERIODIC, ns)
    assert ns["fixes"] == theirs
    assert theirs[0] == "UserError: _b = Dim('_b', min=1, max=50)\n  b = 2*_b"
