"""torch.package: PackageExporter / PackageImporter, torch's zip layout, intern / extern / mock patterns."""
from __future__ import annotations

import io
import sys
import zipfile

import numpy as np
import pytest

import funcgrad as fg

SRC = '''import math
from . import helper


class Scaler:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return helper.twice(x) * self.k + math.floor(0.5)
'''


@pytest.fixture
def pkgdir(tmp_path, monkeypatch):
    root = tmp_path / "src"
    (root / "mypkg").mkdir(parents=True)
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "models.py").write_text(SRC)
    (root / "mypkg" / "helper.py").write_text("def twice(x):\n    return 2 * x\n")
    (root / "otherdep.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(root))
    yield tmp_path
    for m in [m for m in sys.modules if m == "mypkg" or m.startswith("mypkg.") or m == "otherdep"]:
        del sys.modules[m]


def test_round_trip_interned_source(pkgdir):
    from mypkg.models import Scaler
    path = pkgdir / "scaler.pt"
    with fg.package.PackageExporter(str(path)) as pe:
        pe.intern("mypkg.**")
        pe.save_pickle("res", "obj.pkl", {"model": Scaler(3), "w": [1, 2]})
        pe.save_text("res", "note.txt", "hello")
        pe.save_binary("res", "raw.bin", b"\x00\x01")
    names = zipfile.ZipFile(path).namelist()
    assert {"scaler/.data/version", "scaler/.data/extern_modules", "scaler/mypkg/models.py",
            "scaler/mypkg/helper.py", "scaler/res/obj.pkl", "scaler/res/note.txt"} <= set(names)
    assert zipfile.ZipFile(path).read("scaler/.data/version") == b"6\n"
    imp = fg.package.PackageImporter(str(path))
    obj = imp.load_pickle("res", "obj.pkl")
    assert obj["w"] == [1, 2] and obj["model"](5) == 30
    assert type(obj["model"]).__module__.startswith("<torch_package_") and fg.package.is_from_package(obj["model"])
    assert type(obj["model"]) is not Scaler
    assert imp.load_text("res", "note.txt") == "hello" and imp.load_binary("res", "raw.bin") == b"\x00\x01"
    assert imp.import_module("mypkg.helper").twice(4) == 8


def test_unmatched_dependency_and_patterns(pkgdir):
    from mypkg.models import Scaler
    with pytest.raises(fg.package.PackagingError, match="did not match against any action pattern"):
        with fg.package.PackageExporter(io.BytesIO()) as pe:
            pe.save_pickle("res", "obj.pkl", Scaler(1))
    with pytest.raises(fg.package.EmptyMatchError, match="allow_empty=False"):
        with fg.package.PackageExporter(io.BytesIO()) as pe:
            pe.extern("nothing_like_this.**", allow_empty=False)
    buf = io.BytesIO()
    with fg.package.PackageExporter(buf) as pe:
        pe.extern("mypkg.**")
        pe.mock("otherdep")
        pe.save_pickle("res", "obj.pkl", Scaler(2))
        pe.save_source_string("uses_dep", "import otherdep\nX = otherdep.anything\n")
    buf.seek(0)
    imp = fg.package.PackageImporter(buf)
    assert "mypkg.models" in imp.extern_modules
    assert type(imp.load_pickle("res", "obj.pkl")) is Scaler  # externed: the interpreter's class
    with pytest.raises(NotImplementedError, match="mocked out"):
        imp.import_module("uses_dep").X()


def test_glob_group():
    g = fg.package.GlobGroup("torch.**", exclude="torch.nn.*")
    assert g.matches("torch") and g.matches("torch.utils.data") and not g.matches("torch.nn.linear")
    assert fg.package.GlobGroup("a.*b").matches("a.xb") and not fg.package.GlobGroup("a.*b").matches("a.x.b")


def test_tensors_round_trip():
    buf = io.BytesIO()
    t = fg.tensor([[1.0, 2.0], [3.0, 4.0]])
    with fg.package.PackageExporter(buf) as pe:
        pe.save_pickle("w", "t.pkl", {"t": t})
    buf.seek(0)
    got = fg.package.PackageImporter(buf).load_pickle("w", "t.pkl")["t"]
    np.testing.assert_array_equal(got.numpy(), t.numpy())


def test_real_torch_reads_our_archive(pkgdir):
    torch = pytest.importorskip("torch")
    from mypkg.models import Scaler
    path = pkgdir / "for_torch.pt"
    with fg.package.PackageExporter(str(path)) as pe:
        pe.intern("mypkg.**")
        pe.save_pickle("res", "obj.pkl", [Scaler(4), "x"])
        pe.save_text("res", "note.txt", "hi")
    imp = torch.package.PackageImporter(str(path))
    obj = imp.load_pickle("res", "obj.pkl")
    assert obj[0](1) == 8 and obj[1] == "x" and imp.load_text("res", "note.txt") == "hi"
    # and we read torch's
    path2 = pkgdir / "from_torch.pt"
    with torch.package.PackageExporter(str(path2)) as pe:
        pe.intern("mypkg.**")
        pe.save_pickle("res", "obj.pkl", Scaler(5))
    assert fg.package.PackageImporter(str(path2)).load_pickle("res", "obj.pkl")(1) == 10
