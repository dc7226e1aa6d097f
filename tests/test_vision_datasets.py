"""funcgrad.vision.datasets from files in the real published formats, and downloads from a local HTTP server
(mirrors, md5 refusal, interrupted and resumed transfers, atomic writes), and the progress bars of downloads
and extraction."""
import gzip
import hashlib
import http.server
import os
import pickle
import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.vision.transforms as T
from funcgrad.vision import datasets
from funcgrad._torch import _progress
from funcgrad.vision.datasets.utils import download_url, extract_archive

Image = pytest.importorskip("PIL.Image")
RNG = np.random.default_rng(7)


def _idx(arr, code=8):
    hdr = bytes([0, 0, code, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    return hdr + arr.astype(">u1" if code == 8 else arr.dtype).tobytes()


def _mnist_files(n_train=5, n_test=3):
    imgs = {s: RNG.integers(0, 256, (n, 28, 28), dtype=np.uint8) for s, n in (("train", n_train), ("t10k", n_test))}
    labs = {s: RNG.integers(0, 10, (len(imgs[s]),), dtype=np.uint8) for s in imgs}
    files = {}
    for s in imgs:
        files[f"{s}-images-idx3-ubyte"] = _idx(imgs[s])
        files[f"{s}-labels-idx1-ubyte"] = _idx(labs[s])
    return imgs, labs, files


@pytest.mark.parametrize("cls", [datasets.MNIST, datasets.FashionMNIST, datasets.KMNIST])
@pytest.mark.parametrize("gz", [False, True])
def test_mnist_family_raw(tmp_path, cls, gz):
    imgs, labs, files = _mnist_files()
    raw = tmp_path / cls.__name__ / "raw"
    raw.mkdir(parents=True)
    for name, data in files.items():
        if gz:
            (raw / (name + ".gz")).write_bytes(gzip.compress(data))
        else:
            (raw / name).write_bytes(data)
    for train, split in ((True, "train"), (False, "t10k")):
        ds = cls(str(tmp_path), train=train, transform=T.ToTensor(), target_transform=lambda t: t * 10)
        assert len(ds) == len(imgs[split])
        assert ds.data.dtype == fg.uint8 and tuple(ds.data.shape[1:]) == (28, 28)
        assert ds.targets.dtype == fg.int64
        x, y = ds[1]
        np.testing.assert_allclose(x.numpy()[0], imgs[split][1] / 255.0, rtol=1e-6)
        assert y == int(labs[split][1]) * 10
    img, _ = cls(str(tmp_path))[0]
    assert isinstance(img, Image.Image) and img.mode == "L"
    assert len(cls.classes) == 10 and cls(str(tmp_path)).class_to_idx[cls.classes[3]] == 3


def test_mnist_processed_layout_and_errors(tmp_path):
    data = fg.from_numpy(RNG.integers(0, 256, (4, 28, 28), dtype=np.uint8))
    targets = fg.tensor([1, 2, 3, 4])
    proc = tmp_path / "MNIST" / "processed"
    proc.mkdir(parents=True)
    fg.save((data, targets), str(proc / "training.pt"))
    fg.save((data[:2], targets[:2]), str(proc / "test.pt"))
    ds = datasets.MNIST(str(tmp_path), train=False)
    assert len(ds) == 2 and ds[1][1] == 2
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.MNIST(str(tmp_path / "nothing"))
    raw = tmp_path / "bad" / "MNIST" / "raw"
    raw.mkdir(parents=True)
    _, _, files = _mnist_files()
    for name, d in files.items():
        (raw / name).write_bytes(d[:-5] if "train-images" in name else d)
    with pytest.raises(RuntimeError, match="expected"):
        datasets.MNIST(str(tmp_path / "bad"))


def _cifar_batch(n, labels_key):
    data = RNG.integers(0, 256, (n, 3072), dtype=np.uint8)
    labels = RNG.integers(0, 10, n).tolist()
    return {"batch_label": "testing batch", labels_key: labels, "data": data,
            "filenames": [f"img{i}.png" for i in range(n)]}


def _md5(b):
    return hashlib.md5(b).hexdigest()


def _cifar_tree(tmp_path, cls, base, names, meta_name, meta_key, labels_key):
    folder = tmp_path / base
    folder.mkdir()
    batches = {}
    for name in names:
        b = _cifar_batch(4, labels_key)
        raw = pickle.dumps(b, protocol=2)
        (folder / name).write_bytes(raw)
        batches[name] = (b, _md5(raw))
    meta_raw = pickle.dumps({meta_key: [f"class{i}" for i in range(10)]}, protocol=2)
    (folder / meta_name).write_bytes(meta_raw)
    return batches, _md5(meta_raw)


def test_cifar10_and_100(tmp_path):
    b10, m10 = _cifar_tree(tmp_path, datasets.CIFAR10, "cifar-10-batches-py",
                           ["data_batch_1", "data_batch_2", "test_batch"], "batches.meta", "label_names", "labels")

    class C10(datasets.CIFAR10):
        train_list = [["data_batch_1", b10["data_batch_1"][1]], ["data_batch_2", b10["data_batch_2"][1]]]
        test_list = [["test_batch", b10["test_batch"][1]]]
        meta = {"filename": "batches.meta", "key": "label_names", "md5": m10}
    ds = C10(str(tmp_path), train=True)
    assert len(ds) == 8 and ds.classes[2] == "class2" and ds.data.shape == (8, 32, 32, 3)
    img, y = ds[5]
    ref = b10["data_batch_2"][0]["data"][1].reshape(3, 32, 32).transpose(1, 2, 0)
    np.testing.assert_array_equal(np.asarray(img), ref)
    assert y == b10["data_batch_2"][0]["labels"][1]
    assert len(C10(str(tmp_path), train=False)) == 4
    # md5 mismatch -> refused as corrupted
    with pytest.raises(RuntimeError, match="corrupted"):
        datasets.CIFAR10(str(tmp_path))

    b100, m100 = _cifar_tree(tmp_path, datasets.CIFAR100, "cifar-100-python", ["train", "test"], "meta",
                             "fine_label_names", "fine_labels")

    class C100(datasets.CIFAR100):
        train_list = [["train", b100["train"][1]]]
        test_list = [["test", b100["test"][1]]]
        meta = {"filename": "meta", "key": "fine_label_names", "md5": m100}
    ds = C100(str(tmp_path), train=False, transform=T.PILToTensor())
    x, y = ds[3]
    assert x.dtype == fg.uint8 and tuple(x.shape) == (3, 32, 32)
    assert y == b100["test"][0]["fine_labels"][3]


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_cifar_restricted_unpickler(tmp_path):
    from funcgrad.vision.datasets.cifar import load_batch
    p = tmp_path / "evil"
    p.write_bytes(pickle.dumps({"data": _Evil()}, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        load_batch(str(p))
    p.write_bytes(pickle.dumps({"data": np.array([object()], dtype=object)}, protocol=2))
    with pytest.raises(pickle.UnpicklingError):
        load_batch(str(p))


def test_svhn(tmp_path):
    sio = pytest.importorskip("scipy.io")
    X = RNG.integers(0, 256, (32, 32, 3, 5), dtype=np.uint8)
    y = np.array([[10], [1], [2], [10], [9]], np.uint8)
    sio.savemat(str(tmp_path / "test_32x32.mat"), {"X": X, "y": y})

    class S(datasets.SVHN):
        split_list = dict(datasets.SVHN.split_list,
                          test=["u", "test_32x32.mat", _md5((tmp_path / "test_32x32.mat").read_bytes())])
    ds = S(str(tmp_path), split="test")
    assert len(ds) == 5 and ds.labels.tolist() == [0, 1, 2, 0, 9]
    np.testing.assert_array_equal(np.asarray(ds[3][0]), X[:, :, :, 3])
    with pytest.raises(ValueError, match="split"):
        S(str(tmp_path), split="validation")
    with pytest.raises(RuntimeError, match="not found or corrupted"):
        datasets.SVHN(str(tmp_path), split="test")


def test_image_folder(tmp_path):
    for cls, n in (("cat", 2), ("dog", 3), ("ant", 1)):
        d = tmp_path / cls / "sub"
        d.mkdir(parents=True)
        for i in range(n):
            Image.fromarray(RNG.integers(0, 256, (6, 5, 3), dtype=np.uint8)).save(d / f"{i}.png")
        (tmp_path / cls / "notes.txt").write_text("x")
    ds = datasets.ImageFolder(str(tmp_path), transform=T.ToTensor())
    assert ds.classes == ["ant", "cat", "dog"] and ds.class_to_idx == {"ant": 0, "cat": 1, "dog": 2}
    assert ds.targets == [0, 1, 1, 2, 2, 2] and ds.imgs == ds.samples and len(ds) == 6
    x, y = ds[4]
    assert tuple(x.shape) == (3, 6, 5) and y == 2
    assert ds.samples[1][0].endswith(os.path.join("cat", "sub", "0.png"))
    df = datasets.DatasetFolder(str(tmp_path), loader=lambda p: open(p).read(), extensions=(".txt",))
    assert len(df) == 3 and df[0] == ("x", 0)
    only_png = datasets.ImageFolder(str(tmp_path), is_valid_file=lambda p: p.endswith("0.png"))
    assert len(only_png) == 3
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        datasets.DatasetFolder(str(tmp_path), loader=open)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="empty"):
        datasets.ImageFolder(str(tmp_path))
    assert len(datasets.ImageFolder(str(tmp_path), allow_empty=True)) == 6
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        datasets.ImageFolder(str(tmp_path / "ant" / "sub"))


def test_fake_data_repeatable():
    ds = datasets.FakeData(size=4, image_size=(3, 8, 6), num_classes=3, transform=T.PILToTensor())
    fg.manual_seed(0)
    before = fg.rand(2)
    a = ds[2]
    fg.manual_seed(0)
    np.testing.assert_array_equal(fg.rand(2).numpy(), before.numpy())  # global RNG untouched
    b = ds[2]
    assert tuple(a[0].shape) == (3, 8, 6) and np.array_equal(a[0].numpy(), b[0].numpy()) and a[1] == b[1]
    with pytest.raises(IndexError):
        ds[4]


# --- downloads from a local server -----------------------------------------------------------------------
class _Server:
    def __init__(self, files, cut=None):
        self.files, self.cut, self.requests = files, dict(cut or {}), []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                name = self.path.rsplit("/", 1)[-1]
                outer.requests.append((self.path, self.headers.get("Range")))
                if not self.path.startswith("/good/") or name not in outer.files:
                    self.send_error(404)
                    return
                data = outer.files[name]
                start = 0
                rng = self.headers.get("Range")
                if rng:
                    start = int(rng.split("=")[1].split("-")[0])
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                body = data[start:]
                if name in outer.cut:  # interrupted transfer: send part, then drop the connection
                    self.wfile.write(body[:outer.cut.pop(name)])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def mnist_server():
    imgs, labs, files = _mnist_files()
    gz = {k + ".gz": gzip.compress(v, mtime=0) for k, v in files.items()}
    srv = _Server(gz)
    yield srv, gz, imgs
    srv.close()


def _mnist_cls(srv, gz, mirrors=None, md5s=None):
    class Mine(datasets.MNIST):
        pass
    Mine.__name__ = "MNIST"
    Mine.mirrors = mirrors or [f"{srv.url}/dead/", f"{srv.url}/good/"]
    Mine.resources = [(k, (md5s or {}).get(k, _md5(v))) for k, v in gz.items()]
    return Mine


def test_download_from_mirrors(tmp_path, mnist_server):
    srv, gz, imgs = mnist_server
    cls = _mnist_cls(srv, gz)
    ds = cls(str(tmp_path), train=True, download=True)
    assert len(ds) == 5
    np.testing.assert_array_equal(ds.data.numpy(), imgs["train"])
    assert any("/dead/" in p for p, _ in srv.requests)  # first mirror failed, second served
    n = len(srv.requests)
    cls(str(tmp_path), download=True)  # already there: no new requests
    assert len(srv.requests) == n
    assert not [f for f in os.listdir(tmp_path / "MNIST" / "raw") if f.endswith(".part")]


def test_download_md5_refused(tmp_path, mnist_server):
    srv, gz, _ = mnist_server
    name = "train-images-idx3-ubyte.gz"
    cls = _mnist_cls(srv, gz, md5s={name: "0" * 32})
    with pytest.raises(RuntimeError, match="md5") as e:
        cls(str(tmp_path), download=True)
    assert name in str(e.value) and "/good/" in str(e.value)
    raw = tmp_path / "MNIST" / "raw"
    assert not (raw / name).exists() and not (raw / (name + ".part")).exists()
    assert not (raw / "train-images-idx3-ubyte").exists()
    with pytest.raises(RuntimeError, match="Dataset not found"):
        cls(str(tmp_path))


def test_download_interrupted_then_resumed(tmp_path, mnist_server):
    srv, gz, imgs = mnist_server
    name = "train-images-idx3-ubyte.gz"
    srv.cut[name] = 100
    cls = _mnist_cls(srv, gz, mirrors=[f"{srv.url}/good/"])
    with pytest.raises(RuntimeError, match="interrupted|IncompleteRead|Could not download"):
        cls(str(tmp_path), download=True)
    raw = tmp_path / "MNIST" / "raw"
    assert not (raw / name).exists() and not (raw / "train-images-idx3-ubyte").exists()
    assert (raw / (name + ".part")).stat().st_size == 100  # kept only as .part, for resuming
    with pytest.raises(RuntimeError, match="Dataset not found"):
        cls(str(tmp_path))
    ds = cls(str(tmp_path), download=True)  # resumes with a Range request
    assert ("/good/" + name, "bytes=100-") in srv.requests
    np.testing.assert_array_equal(ds.data.numpy(), imgs["train"])


def test_download_without_network_names_url(tmp_path):
    with pytest.raises(RuntimeError, match=r"127\.0\.0\.1:9/x/data\.bin") as e:
        download_url("http://127.0.0.1:9/x/data.bin", str(tmp_path), md5=None)
    assert "data.bin" in str(e.value)
    assert os.listdir(tmp_path) == []


# --- progress bars (tqdm when installed, else the plain stderr fallback) -----------------------------------
class _RecordingBar(_progress._Faketqdm):
    """The fallback bar, remembering every bar made so a test can read its total and final count."""
    made = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kwargs = kwargs
        _RecordingBar.made.append(self)


@pytest.fixture
def recording_bar(monkeypatch):
    _RecordingBar.made = []
    monkeypatch.setattr(_progress, "tqdm", _RecordingBar)
    return _RecordingBar.made


def test_download_progress_counts_bytes(tmp_path, mnist_server, recording_bar, capsys):
    srv, gz, _ = mnist_server
    name = "train-images-idx3-ubyte.gz"
    download_url(f"{srv.url}/good/{name}", str(tmp_path))
    (bar,) = recording_bar
    assert bar.total == len(gz[name]) and bar.n == len(gz[name]) and bar.kwargs["unit"] == "B"
    assert f"{name}: 100.0%" in capsys.readouterr().err  # the fallback's line
    download_url(f"{srv.url}/good/{name}", str(tmp_path / "quiet"), progress=False)
    assert capsys.readouterr().err == ""


def test_resumed_download_progress_starts_at_the_bytes_kept(tmp_path, mnist_server, recording_bar):
    srv, gz, _ = mnist_server
    name = "train-images-idx3-ubyte.gz"
    srv.cut[name] = 100
    with pytest.raises(RuntimeError, match="interrupted|IncompleteRead"):
        download_url(f"{srv.url}/good/{name}", str(tmp_path))
    download_url(f"{srv.url}/good/{name}", str(tmp_path))
    resumed = recording_bar[-1]
    assert resumed.kwargs["initial"] == 100 and resumed.total == len(gz[name]) and resumed.n == len(gz[name])


@pytest.mark.parametrize("kind", ["tar.gz", "zip", "gz"])
def test_extract_progress(tmp_path, recording_bar, capsys, kind):
    import tarfile
    import zipfile
    files = {f"d/f{i}.bin": bytes([i]) * (1000 + i) for i in range(3)}
    src = tmp_path / "src"
    for rel, data in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(data)
    if kind == "tar.gz":
        archive = tmp_path / "a.tar.gz"
        with tarfile.open(archive, "w:gz") as t:
            for rel in files:
                t.add(src / rel, arcname=rel)
    elif kind == "zip":
        archive = tmp_path / "a.zip"
        with zipfile.ZipFile(archive, "w") as z:
            for rel in files:
                z.write(src / rel, arcname=rel)
    else:
        archive = tmp_path / "f0.bin.gz"
        archive.write_bytes(gzip.compress(files["d/f0.bin"]))
    out = tmp_path / "out"
    out.mkdir()
    extract_archive(str(archive), str(out))
    (bar,) = recording_bar
    if kind == "gz":  # one file: its bytes, total unknown up front
        assert (out / "f0.bin").read_bytes() == files["d/f0.bin"] and bar.n == len(files["d/f0.bin"])
        assert "extracting f0.bin: 1000.0" in capsys.readouterr().err
    else:  # an archive: its members
        assert all((out / rel).read_bytes() == data for rel, data in files.items())
        assert bar.total == len(files) and bar.n == len(files) and bar.kwargs["unit"] == "file"
        assert "100.0%" in capsys.readouterr().err
    extract_archive(str(archive), str(out), progress=False)
    assert capsys.readouterr().err == ""


def test_hub_download_progress(tmp_path, recording_bar, capsys):
    src = tmp_path / "w.bin"
    src.write_bytes(b"x" * 200_000)
    fg.hub.download_url_to_file(src.as_uri(), str(tmp_path / "d" / "w.bin"))
    assert (tmp_path / "d" / "w.bin").read_bytes() == src.read_bytes()
    (bar,) = recording_bar
    assert bar.total == 200_000 and bar.n == 200_000 and "w.bin: 100.0%" in capsys.readouterr().err
    fg.hub.download_url_to_file(src.as_uri(), str(tmp_path / "d" / "w2.bin"), progress=False)
    assert capsys.readouterr().err == ""
