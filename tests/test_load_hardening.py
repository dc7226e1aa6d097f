"""funcgrad.load on untrusted files: weights_only loads cannot change objects outside the load (classes, dtype
singletons, module-level containers), memo bombs and storage reads stay within the file's data, mmap=True maps
storages copy-on-write, every bad-file kind gets its own error, and hub downloads load weights only. Checked
against real torch where it is installed (files written by torch load here and vice versa, same refusals)."""
import collections
import io
import os
import pickle
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import serialization as S

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(fg.__file__)))


# --- pickles built opcode by opcode ---------------------------------------------------------------------------
def _g(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _s(text):
    b = text.encode()
    return b"X" + len(b).to_bytes(4, "little") + b


def _build_on(target, attr, value):
    """PROTO 2; push `target`; BUILD it with slot state {attr: value} (the C unpickler then setattr()s it)."""
    return b"\x80\x02" + target + b"N}" + _s(attr) + value + b"s\x86b."


def _zip(pkl, records=(), byteorder=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        if byteorder is not None:
            z.writestr("archive/byteorder", byteorder)
        for name, data in records:
            z.writestr(f"archive/{name}", data)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


# The five class-rewriting files of the issue: BUILD on a dtype singleton, on the device class, on Size, on the
# standard library's Counter and on the Tensor class, each through globals a weights_only load allows.
ATTACKS = {
    "dtype_singleton": (_build_on(_g("torch", "float32"), "name", _s("int64")),
                        lambda: (fg.float32, "name"), "torch.float32"),
    "device_class": (_build_on(_g("torch", "device"), "__init__", _g("builtins", "set")),
                     lambda: (fg.device, "__init__"), "funcgrad._torch._dtype.device"),
    "size_numel": (_build_on(_g("torch", "Size"), "numel", _g("collections", "Counter")),
                   lambda: (fg.Size, "numel"), "funcgrad._torch._dtype.Size"),
    "counter_most_common": (_build_on(_g("collections", "Counter"), "most_common", _g("builtins", "set")),
                            lambda: (collections.Counter, "most_common"), "collections.Counter"),
    "tensor_class": (_build_on(_g("torch", "Tensor"), "__len__", _g("builtins", "set")),
                     lambda: (fg.Tensor, "__len__"), "funcgrad._torch._tensor.Tensor"),
}


def _snapshot(obj, attr):
    return vars(obj).get(attr, None) if isinstance(obj, type) else getattr(obj, attr)


def _restore(obj, attr, value):
    if getattr(obj, attr, None) is not value and value is not None:
        setattr(obj, attr, value)


def _process_intact():
    """The behaviours the attacks break, checked from scratch."""
    assert str(fg.ones(2).dtype) == "torch.float32" and fg.ones(2).dtype is fg.float32
    assert fg.float32.name == "float32"
    assert fg.device("cpu").type == "cpu" and str(fg.device("cpu", 0)) == "cpu:0"
    assert fg.Size([2, 3]).numel() == 6
    assert collections.Counter("aab").most_common(1) == [("a", 2)]
    assert len(fg.zeros(4)) == 4


@pytest.mark.parametrize("name", list(ATTACKS))
def test_build_on_globals_is_refused_and_changes_nothing(name):
    pkl, where, desc = ATTACKS[name]
    obj, attr = where()
    saved = _snapshot(obj, attr)
    try:
        with pytest.raises(pickle.UnpicklingError, match="Can only build") as ei:
            fg.load(io.BytesIO(_zip(pkl)))
        assert "weights_only" in str(ei.value) and desc in str(ei.value)
        assert _snapshot(obj, attr) is saved
        _process_intact()
        # get_unsafe_globals_in_checkpoint reports the refused operation (the globals themselves are allowed)
        assert S.get_unsafe_globals_in_checkpoint(io.BytesIO(_zip(pkl))) == [f"BUILD on {desc}"]
    finally:
        _restore(obj, attr, saved)


def test_the_issues_minimal_file_byte_for_byte():
    pkl = b"\x80\x02ctorch\nfloat32\nN}X\x04\x00\x00\x00nameX\x05\x00\x00\x00int64s\x86b."
    try:
        with pytest.raises(pickle.UnpicklingError):
            fg.load(io.BytesIO(_zip(pkl)))
        _process_intact()
    finally:
        fg.float32.name = "float32"


SHARED_DICT = {"k": 1}
SHARED_LIST = [1]


def test_setitem_and_append_only_on_containers_made_by_the_load():
    d_name, l_name = f"{__name__}.SHARED_DICT", f"{__name__}.SHARED_LIST"
    mod, _, _ = d_name.rpartition(".")
    setitem = b"\x80\x02" + _g(mod, "SHARED_DICT") + _s("k") + _s("pwned") + b"s."
    append = b"\x80\x02" + _g(mod, "SHARED_LIST") + _s("pwned") + b"a."
    extend = b"\x80\x02" + _g(mod, "SHARED_LIST") + b"(" + _s("pwned") + b"e."
    with S.safe_globals([(SHARED_DICT, d_name), (SHARED_LIST, l_name)]):
        for pkl, kind in ((setitem, "SETITEM"), (append, "APPEND"), (extend, "APPENDS")):
            with pytest.raises(pickle.UnpicklingError, match=f"Can only {kind}"):
                fg.load(io.BytesIO(_zip(pkl)))
            assert S.get_unsafe_globals_in_checkpoint(io.BytesIO(_zip(pkl)))[0].startswith(f"{kind} on ")
        # fresh containers are filled as usual
        ok = b"\x80\x02}" + _s("a") + b"]" + _s("x") + b"a" + b"s."
        assert fg.load(io.BytesIO(_zip(ok))) == {"a": ["x"]}
    assert SHARED_DICT == {"k": 1} and SHARED_LIST == [1]


def test_state_cannot_reach_shared_objects_through_rebuild_functions():
    strided = fg.strided
    # _rebuild_from_type_v2(_get_layout, Tensor, ("torch.strided",), {"name": "x"}) would set state on a singleton
    pkl = (b"\x80\x02" + _g("torch._tensor", "_rebuild_from_type_v2") + b"(" + _g("torch.serialization", "_get_layout")
           + _g("torch", "Tensor") + _s("torch.strided") + b"\x85}" + _s("name") + _s("x") + b"stR.")
    with pytest.raises(pickle.UnpicklingError, match="does not rebuild a tensor"):
        fg.load(io.BytesIO(_zip(pkl)))
    assert strided.name == "strided" and str(fg.zeros(1).layout) == "torch.strided"
    # a BUILD on the layout the load itself looked up is refused too
    pkl = _build_on(_g("torch.serialization", "_get_layout") + _s("torch.strided") + b"\x85R", "name", _s("x"))
    with pytest.raises(pickle.UnpicklingError, match="Can only build"):
        fg.load(io.BytesIO(_zip(pkl)))
    assert strided.name == "strided"
    # an allow-listed class whose __new__ hands back an existing object (an Enum) is not "fresh"
    import enum
    color = enum.Enum("Color", "RED BLUE", module=__name__)
    globals()["Color"] = color
    try:
        pkl = _build_on(_g(__name__, "Color") + b"K\x01\x85R", "value", b"K\x07")
        with S.safe_globals([color]):
            with pytest.raises(pickle.UnpicklingError, match="Can only build"):
                fg.load(io.BytesIO(_zip(pkl)))
        assert color.RED.value == 1
    finally:
        del globals()["Color"]


def test_refused_opcodes_and_allocations():
    # INST / OBJ / EXT* build objects without naming what they call: refused as torch does
    for pkl in (b"\x80\x02(ibuiltins\nset\n.", b"\x80\x02\x82\x01."):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported operand"):
            fg.load(io.BytesIO(_zip(pkl)))
    # bytearray(n) would allocate n bytes from a 20-byte pickle
    pkl = b"\x80\x02" + _g("builtins", "bytearray") + b"J\x00\x00\x00\x40\x85R."
    with pytest.raises(pickle.UnpicklingError, match="bytearray"):
        fg.load(io.BytesIO(_zip(pkl)))
    # and so would torch.Tensor(n) / Parameter(n), through REDUCE or NEWOBJ
    for cls in (_g("torch", "Tensor"), _g("torch.nn.parameter", "Parameter")):
        for call in (b"\x85R.", b"\x85\x81."):
            with pytest.raises(pickle.UnpicklingError, match="storages only"):
                fg.load(io.BytesIO(_zip(b"\x80\x02" + cls + b"J\x00\x00\x00\x40" + call)))
    # the blocked modules stay blocked even when allow-listed (as torch)
    with S.safe_globals([(os.system, "os.system")]):
        with pytest.raises(pickle.UnpicklingError, match="blocked"):
            fg.load(io.BytesIO(_zip(b"\x80\x02" + _g("os", "system") + b".")))


# --- memory -------------------------------------------------------------------------------------------------
def _run(code, timeout=120):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                         timeout=timeout, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


_MEASURE = """
    import os, pickle, sys, tracemalloc
    import numpy as np
    import funcgrad as fg
    def rss():
        return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    def peak_rss():        # VmHWM: this process image's peak (ru_maxrss would carry the forking parent's)
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    def measure(fn):
        base = rss()
        assert peak_rss() - base < 64 << 20, "baseline peak too far above current RSS"
        tracemalloc.start()
        try:
            out = fn()
        except Exception as e:
            out = e
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out, traced, peak_rss() - base
"""


@pytest.mark.parametrize("index", [0x04000000, 0xFFFFFFF0])
@pytest.mark.parametrize("weights_only", [True, False])
def test_memo_index_bomb_stays_small(tmp_path, index, weights_only):
    p = tmp_path / "memo.pt"
    p.write_bytes(_zip(b"\x80\x02Nr" + index.to_bytes(4, "little") + b"."))
    assert p.stat().st_size < 400
    out = _run(_MEASURE + f"""
    r, traced, grown = measure(lambda: fg.load({str(p)!r}, weights_only={weights_only}))
    print(type(r).__name__, traced, grown)
    print(r)
    """)
    kind, traced, grown = out.split("\n")[0].split()
    assert int(traced) < 100 << 20 and int(grown) < 100 << 20, out
    assert kind == "UnpicklingError" and "memo index" in out, out


def _state_dict_file(path, mib):
    rng = np.random.default_rng(0)
    sd = {f"layer{i}.weight": fg.tensor(rng.standard_normal((256, 1024)).astype(np.float32)) for i in range(mib)}
    sd["step"] = fg.tensor(7)
    fg.save(sd, path)
    return sum(v.numel() * v.element_size() for v in sd.values())


def test_load_peak_memory_is_about_the_data(tmp_path):
    p = tmp_path / "sd.pt"
    nbytes = _state_dict_file(p, 64)
    assert nbytes >= 64 << 20
    out = _run(_MEASURE + f"""
    sd, traced, grown = measure(lambda: fg.load({str(p)!r}))
    assert sd["step"].item() == 7 and sd["layer3.weight"].shape == (256, 1024), sd
    print(traced, grown)
    """)
    out += _run(_MEASURE + f"""
    sd, traced, grown = measure(lambda: fg.load({str(p)!r}, mmap=True))
    assert sd["step"].item() == 7 and float(sd["layer3.weight"].sum()) != 0.0, sd
    print(traced, grown)
    """)
    (traced, grown), (traced_m, grown_m) = [map(int, line.split()) for line in out.split("\n")[:2]]
    print(f"load: tracemalloc peak {traced / nbytes:.3f}x, RSS growth {grown / nbytes:.3f}x of {nbytes >> 20} MiB; "
          f"mmap=True: {traced_m / nbytes:.4f}x, {grown_m / nbytes:.4f}x")
    assert traced <= 1.3 * nbytes and grown <= 1.3 * nbytes, (traced / nbytes, grown / nbytes)
    assert traced_m <= 0.05 * nbytes and grown_m <= 0.05 * nbytes, (traced_m / nbytes, grown_m / nbytes)


def test_mmap_is_copy_on_write_and_exact(tmp_path):
    p = tmp_path / "m.pt"
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    base = fg.tensor(a)
    fg.save({"w": base, "view": base[1:3, ::2], "i": fg.tensor([1, -2, 3], dtype=fg.int16),
             "b": fg.tensor([True, False]), "c": fg.tensor([1 + 2j], dtype=fg.complex64), "e": fg.zeros(0)}, p)
    before = p.read_bytes()
    r = fg.load(p, mmap=True)
    np.testing.assert_array_equal(r["w"].numpy(), a)
    np.testing.assert_array_equal(r["view"].numpy(), a[1:3, ::2])
    assert r["i"].tolist() == [1, -2, 3] and r["b"].tolist() == [True, False] and r["c"].tolist() == [1 + 2j]
    assert r["e"].shape == (0,)
    r["w"][1, 0] = -5.0                        # writes are private: visible to views, never to the file
    assert r["view"][0, 0].item() == -5.0
    assert p.read_bytes() == before
    assert fg.load(p)["w"][1, 0].item() == 6.0
    with pytest.raises(ValueError, match="file path"):
        fg.load(io.BytesIO(before), mmap=True)


def test_saved_records_are_64_byte_aligned(tmp_path):
    p = tmp_path / "a.pt"
    fg.save({"x": fg.ones(3), "y": fg.arange(5, dtype=fg.float64), "z": fg.ones(1, dtype=fg.int8)}, p)
    raw = p.read_bytes()
    with zipfile.ZipFile(p) as z:
        for info in z.infolist():
            if "/data/" in info.filename:
                h = info.header_offset
                start = h + 30 + int.from_bytes(raw[h + 26:h + 28], "little") + int.from_bytes(raw[h + 28:h + 30],
                                                                                               "little")
                assert start % 64 == 0, info.filename
                assert raw[start:start + info.file_size] == z.read(info)


# --- what a bad file says -----------------------------------------------------------------------------------
def _good():
    buf = io.BytesIO()
    fg.save({"w": fg.arange(64.0)}, buf)
    return buf.getvalue()


def test_error_per_bad_file_kind():
    good = _good()
    cases = [
        (b"", EOFError, "empty"),
        (good[:len(good) // 2], RuntimeError, "truncated"),
        (good[:-5], RuntimeError, "truncated"),
        (b"hello, this is not a checkpoint", RuntimeError, "not a torch checkpoint.*b'hello, t'"),
        (pickle.dumps({"a": 1}, protocol=2), RuntimeError, "plain pickle"),
        (b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.", RuntimeError, "unsupported legacy format"),
        (b"PK\x05\x06" + b"\x00" * 18, RuntimeError, "empty zip"),
        (_zip(b"\x80\x02K\x01.", byteorder="middle"), ValueError, "Unknown endianness type: middle"),
        (_zip(b"\x80\x02K\x01"), pickle.UnpicklingError, "truncated"),
    ]
    for data, exc, pattern in cases:
        for wo in (True, False):
            with pytest.raises(exc, match=pattern):
                fg.load(io.BytesIO(data), weights_only=wo)
    # no legacy message for any of them except the legacy file
    for data, _, pattern in cases:
        if pattern != "unsupported legacy format":
            with pytest.raises(Exception) as ei:
                fg.load(io.BytesIO(data))
            assert "legacy" not in str(ei.value)


def test_storage_records_must_match_what_the_pickle_declares():
    good = _good()
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        pkl, data = z.read("archive/data.pkl"), z.read("archive/data/0")
    short = _zip(pkl, [("data/0", data[:-4])], byteorder="little")
    with pytest.raises(RuntimeError, match="holds 252 bytes but the checkpoint declares a storage of 64"):
        fg.load(io.BytesIO(short))
    with pytest.raises(RuntimeError, match="no record 'archive/data/0'"):
        fg.load(io.BytesIO(_zip(pkl, byteorder="little")))
    # a stored record whose data runs past the end of the file
    cut = good[:good.index(b"PK\x01\x02")]          # keep the records, drop the central directory
    with pytest.raises(RuntimeError, match="truncated"):
        fg.load(io.BytesIO(cut))


def test_big_endian_files_and_compressed_records_load_exactly():
    good = _good()
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        pkl, data = z.read("archive/data.pkl"), z.read("archive/data/0")
    swapped = np.frombuffer(data, "<f4").astype(">f4").tobytes()
    r = fg.load(io.BytesIO(_zip(pkl, [("data/0", swapped)], byteorder="big")))
    np.testing.assert_array_equal(r["w"].numpy(), np.arange(64.0, dtype=np.float32))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, rec in (("data.pkl", pkl), ("data/0", data), ("byteorder", b"little")):
            z.writestr(f"archive/{name}", rec)
    np.testing.assert_array_equal(fg.load(io.BytesIO(buf.getvalue()))["w"].numpy(), np.arange(64.0))


# --- hub -------------------------------------------------------------------------------------------------------
class Payload:
    def __init__(self, x=1):
        self.x = x


def test_hub_downloads_load_weights_only_by_default(tmp_path, monkeypatch):
    monkeypatch.setattr(fg.hub, "_hub_dir", str(tmp_path / "hub"))
    src = tmp_path / "bad.pth"
    fg.save({"w": fg.ones(2), "obj": Payload(3)}, src)
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False") as ei:
        fg.hub.load_state_dict_from_url(src.as_uri())
    assert "torch.hub's default is False" in str(ei.value) and "Payload" in str(ei.value)
    r = fg.hub.load_state_dict_from_url(src.as_uri(), weights_only=False)
    assert r["obj"].x == 3
    # hub.load runs the local hubconf (code the caller chose); the checkpoints it fetches load weights only
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "hubconf.py").write_text(textwrap.dedent(f"""
        import funcgrad
        def model(**kw):
            return funcgrad.hub.load_state_dict_from_url({src.as_uri()!r}, **kw)
    """))
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        fg.hub.load(str(tmp_path / "repo"), "model", source="local")
    assert fg.hub.load(str(tmp_path / "repo"), "model", source="local", weights_only=False)["obj"].x == 3


# --- against real torch ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(ATTACKS))
def test_torch_refuses_the_same_files_with_the_same_error(name, tmp_path):
    torch = pytest.importorskip("torch")
    pkl = ATTACKS[name][0]
    p = tmp_path / "a.pt"
    p.write_bytes(_zip(pkl))
    with pytest.raises(pickle.UnpicklingError) as te:
        torch.load(p)
    with pytest.raises(pickle.UnpicklingError) as fe:
        fg.load(p)
    assert type(te.value) is type(fe.value)
    assert "Can only build" in str(te.value) and "Can only build" in str(fe.value)


def test_torch_errors_for_bad_files_have_the_same_types(tmp_path):
    torch = pytest.importorskip("torch")
    good = _good()
    for data, exc in ((b"", EOFError), (good[:len(good) // 2], RuntimeError),
                      (_zip(b"\x80\x02K\x01.", byteorder="middle"), ValueError)):
        for lib in (torch, fg):
            with pytest.raises(exc):
                lib.load(io.BytesIO(data))


def test_torch_files_load_with_mmap_and_funcgrad_files_mmap_in_torch(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16))
    sd = m.state_dict()
    p = tmp_path / "t.pt"
    torch.save(sd, p)
    for mm in (False, True):
        r = fg.load(p, mmap=mm)
        assert list(r) == list(sd)
        for k, v in sd.items():
            assert str(r[k].dtype) == str(v.dtype)
            np.testing.assert_array_equal(r[k].numpy(), v.numpy())
    before = p.read_bytes()
    r["0.weight"][0, 0] = 123.0
    assert p.read_bytes() == before and torch.load(p)["0.weight"][0, 0].item() == sd["0.weight"][0, 0].item()
    q = tmp_path / "f.pt"
    base = fg.arange(20.0)
    fg.save({"w": base, "v": base[3:11].reshape(2, 4), "i": fg.tensor([5, 6], dtype=fg.int64)}, q)
    for mm in (False, True):
        t = torch.load(q, mmap=mm)
        np.testing.assert_array_equal(t["v"].numpy(), np.arange(3.0, 11.0).reshape(2, 4))
        assert t["i"].tolist() == [5, 6] and t["v"].untyped_storage().data_ptr() == t["w"].untyped_storage().data_ptr()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_object_kinds_torch_accepts_load_here(tmp_path):
    torch = pytest.importorskip("torch")
    dense = torch.tensor([[0.0, 2.0, 0.0, 0.0], [3.0, 0.0, 0.0, 4.0], [0.0, 0.0, 5.0, 0.0], [0.0, 6.0, 0.0, 0.0]])
    objs = {"coo": dense.to_sparse(), "coo_uncoalesced": torch.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]],
                                                                                  [1.0, 2.0, 3.0], (2, 2)),
            "csr": dense.to_sparse_csr(), "csc": dense.to_sparse_csc(), "bsr": dense.to_sparse_bsr((2, 2)),
            "bsc": dense.to_sparse_bsc((2, 2))}
    p = tmp_path / "s.pt"
    torch.save(objs, p)
    r = fg.load(p)
    for k, v in objs.items():
        assert r[k].is_sparse and r[k].shape == v.shape, k
        np.testing.assert_array_equal(r[k].to_dense().numpy(), v.to_dense().numpy(), err_msg=k)
    assert not r["coo_uncoalesced"].is_coalesced()
    np.testing.assert_array_equal(r["coo"].indices().numpy(), objs["coo"].indices().numpy())
    # layouts, qschemes and the dtypes funcgrad has no arrays for load as objects that print as torch's and
    # are written back as the same torch globals
    names = ["strided", "sparse_coo", "sparse_csr", "per_tensor_affine", "per_channel_symmetric", "quint8", "qint32",
             "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "complex32", "int4", "uint3", "float4_e2m1fn_x2"]
    torch.save([getattr(torch, n) for n in names], p)
    r = fg.load(p)
    assert [str(x) for x in r] == [f"torch.{n}" for n in names]
    assert r[0] is fg.strided and r[1] is fg.sparse_coo and r[2] is fg.sparse_csr
    assert fg.load(p)[3] is r[3]
    fg.save(r, tmp_path / "back.pt")
    assert torch.load(tmp_path / "back.pt") == [getattr(torch, n) for n in names]
    # tensors of a dtype funcgrad has no arrays for: a RuntimeError naming the dtype, not an "unsupported global"
    # (float8 tensors load: test_float8_tensors_torch_saved_load_and_save_back)
    for dt in (torch.complex32,):
        torch.save({"t": torch.ones(2).to(dt)}, p)
        with pytest.raises(RuntimeError, match=str(dt).replace("torch.", "")):
            fg.load(p)
        assert S.get_unsafe_globals_in_checkpoint(p) == []
    # quantized tensors load as funcgrad's quantized tensors (tests/test_quantization.py)
    torch.save(torch.quantize_per_tensor(torch.tensor([1.0, 2.0]), 0.1, 0, torch.quint8), p)
    q = fg.load(p)
    assert q.dtype is fg.quint8 and q.int_repr().tolist() == [10, 20] and q.q_scale() == 0.1


FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_tensors_torch_saved_load_and_save_back(tmp_path, name):
    torch = pytest.importorskip("torch")
    pytest.importorskip("ml_dtypes")
    dt = getattr(torch, name)
    values = [[0.5, 1.0, 2.0], [4.0, 0.25, 8.0]]  # exact in every float8 format
    x = torch.tensor(values).to(dt)
    p = tmp_path / "f8.pt"
    torch.save({"x": x, "col": x[:, 1:], "p": torch.nn.Parameter(x, requires_grad=False)}, p)
    assert S.get_unsafe_globals_in_checkpoint(p) == []
    r = fg.load(p)  # weights_only, as torch's default
    assert r["x"].dtype is getattr(fg, name) and str(r["x"].dtype) == f"torch.{name}"
    assert r["x"].dtype.is_floating_point and r["x"].dtype.is_signed == dt.is_signed
    assert r["x"].float().tolist() == values and r["col"].float().tolist() == [v[1:] for v in values]
    assert r["x"].untyped_storage().data_ptr() == r["col"].untyped_storage().data_ptr()
    assert isinstance(r["p"], fg.nn.Parameter) and r["p"].dtype is getattr(fg, name)
    assert repr(r["x"]) == repr(x)
    fg.save(r, tmp_path / "back.pt")
    back = torch.load(tmp_path / "back.pt")
    for k in ("x", "col", "p"):
        assert back[k].dtype == dt and back[k].float().tolist() == r[k].float().tolist(), k
    assert back["x"].untyped_storage().data_ptr() == back["col"].untyped_storage().data_ptr()


def test_float8_tensor_without_ml_dtypes_names_the_extra(tmp_path, monkeypatch):
    """Without ml_dtypes a float8 tensor is refused with an error naming the `safetensors` extra."""
    from funcgrad._torch import _dtype as D
    monkeypatch.setattr(D, "FLOAT8", {})
    monkeypatch.setattr(D, "_NAMES", {k: v for k, v in D._NAMES.items() if k not in D.FLOAT8_NAMES})
    with pytest.raises(RuntimeError, match=r"float8_e4m3fn.*safetensors.*funcgrad\[safetensors\]"):
        S._fg_dtype("float8_e4m3fn")
