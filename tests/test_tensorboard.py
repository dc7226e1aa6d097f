"""funcgrad.utils.tensorboard.SummaryWriter (torch.utils.tensorboard's): event files read back by
tensorboard's own loaders, and the same events (summaries, steps, wall times, PNG bytes) as torch's
SummaryWriter writes for the same calls where torch is installed."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import funcgrad as ft

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402

from funcgrad.utils.tensorboard import FileWriter, SummaryWriter  # noqa: E402


def _calls(lib, W, d):
    """The same sequence of writer calls for torch's and funcgrad's SummaryWriter (lib: the tensor library)."""
    with W(d) as w:
        for s in range(3):
            w.add_scalar("loss", 1.0 / (s + 1), s, walltime=100.0 + s)
        w.add_scalar("t", lib.tensor(2.5), 0, walltime=1.0)
        w.add_scalar("d", 0.1, 0, walltime=1.0, new_style=True, double_precision=True)
        w.add_scalars("run", {"a": 1.0, "b": 2.0}, 1, walltime=5.0)
        w.add_histogram("h", lib.tensor(np.linspace(-2, 3, 101, dtype=np.float32)), 0, walltime=1.0)
        w.add_histogram("h2", lib.tensor(np.arange(10.0)), 1, bins=5, walltime=1.0)
        w.add_histogram("h3", lib.tensor(np.linspace(0, 1, 50)), 2, bins="auto", max_bins=4, walltime=1.0)
        w.add_histogram_raw("raw", 0.0, 3.0, 4, 6.0, 14.0, [1.0, 2.0, 3.0], [1, 1, 2], 0, walltime=1.0)
        img = lib.tensor(np.linspace(0, 1, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5))
        w.add_image("img", img, 0, walltime=1.0)
        w.add_image("hw", lib.tensor(np.arange(12, dtype=np.uint8).reshape(3, 4) * 20), 0, walltime=1.0,
                    dataformats="HW")
        w.add_images("imgs", lib.stack([img, img * 0.5, img * 0.25]), 0, walltime=1.0)
        w.add_text("note", "hello **world**", 2, walltime=1.0)
        w.add_tensor("tens", lib.tensor([[1.0, 2.0], [3.0, 4.0]]), 0, walltime=1.0)
        w.add_pr_curve("pr", lib.tensor([0, 1, 1, 0]), lib.tensor([0.1, 0.8, 0.6, 0.4]), 0, walltime=1.0)
        w.add_hparams({"lr": 0.1, "bs": 32, "opt": "adam", "flag": True}, {"hp/acc": 0.9},
                      hparam_domain_discrete={"opt": ["adam", "sgd"]}, run_name="hp")


def _events(d):
    """(run directory, event text) of every event below d, wall times of the hparams run (now) zeroed."""
    out = []
    for f in sorted(glob.glob(d + "/**/events.out.tfevents.*", recursive=True)):
        run = os.path.relpath(os.path.dirname(f), d)
        for e in EventFileLoader(f).Load():
            if e.HasField("file_version"):
                continue
            if run == "hp":
                e.wall_time = 0
            out.append((run, str(e)))
    return out


def test_events_are_torchs(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    _calls(torch, TorchWriter, str(tmp_path / "torch"))
    _calls(ft, SummaryWriter, str(tmp_path / "fg"))
    theirs, ours = _events(str(tmp_path / "torch")), _events(str(tmp_path / "fg"))
    assert len(ours) == len(theirs) == 21
    for t, o in zip(theirs, ours):
        assert o == t


def test_read_back_with_event_accumulator(tmp_path):
    _calls(ft, SummaryWriter, str(tmp_path))
    acc = EventAccumulator(str(tmp_path), size_guidance={"images": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in loss], [1.0, 0.5, 1.0 / 3], rtol=1e-7)
    assert [e.wall_time for e in loss] == [100.0, 101.0, 102.0]
    h = acc.Histograms("h2")[0].histogram_value
    # np.histogram(arange(10), 5): two values a bucket; limits are upper edges, a zero bucket in front
    assert (h.min, h.max, h.num, h.sum, h.sum_squares) == (0.0, 9.0, 10, 45.0, 285.0)
    assert list(h.bucket) == [0, 2, 2, 2, 2, 2]
    np.testing.assert_allclose(h.bucket_limit, [0.0, 1.8, 3.6, 5.4, 7.2, 9.0])
    im = acc.Images("img")[0]
    assert (im.width, im.height) == (5, 4)
    from PIL import Image
    import io
    px = np.asarray(Image.open(io.BytesIO(im.encoded_image_string)))
    expect = (np.linspace(0, 1, 60, dtype=np.float32).reshape(3, 4, 5) * 255).clip(0, 255).astype(np.uint8)
    np.testing.assert_array_equal(px, expect.transpose(1, 2, 0))
    grid = Image.open(io.BytesIO(acc.Images("imgs")[0].encoded_image_string))
    assert grid.size == (15, 4)     # three 5x4 images side by side
    t = acc.Tensors("note/text_summary")[0]
    assert t.step == 2 and t.tensor_proto.string_val == [b"hello **world**"]
    tens = acc.Tensors("tens")[0].tensor_proto
    assert list(tens.float_val) == [1.0, 2.0, 3.0, 4.0] and [d.size for d in tens.tensor_shape.dim] == [2, 2]
    runs = sorted(os.listdir(tmp_path))
    assert "run_a" in runs and "run_b" in runs and "hp" in runs


def test_hparams_run(tmp_path):
    from tensorboard.plugins.hparams import plugin_data_pb2
    with SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"lr": 0.01, "opt": "sgd"}, {"acc": 0.75}, run_name="r1")
    acc = EventAccumulator(str(tmp_path / "r1"))
    acc.Reload()
    assert [e.value for e in acc.Scalars("acc")] == [pytest.approx(0.75)]
    content = acc.PluginTagToContent("hparams")
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    assert start.session_start_info.hparams["lr"].number_value == 0.01
    assert start.session_start_info.hparams["opt"].string_value == "sgd"
    with pytest.raises(TypeError, match="dictionary"):
        w.add_hparams([("lr", 1)], {})


def test_graph_embedding_flush_close(tmp_path):
    model = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.ReLU(), ft.nn.Linear(4, 2))
    w = SummaryWriter(str(tmp_path), flush_secs=1)
    w.add_graph(model, ft.randn(1, 3))
    w.add_embedding(ft.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), metadata=["a", "b", "c"], tag="emb/x",
                    global_step=3)
    w.flush()
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    g = acc.Graph()
    ops = [n.op for n in g.node]
    assert ops == ["IO Node", "Linear", "ReLU", "Linear", "IO Node"]
    assert list(g.node[2].input) == [g.node[1].name] and g.node[1].name == "Sequential/Linear[0]"
    assert acc.RunMetadata("step1").step_stats.dev_stats[0].device == "/device:CPU:0"
    sub = tmp_path / "00003" / "emb%2fx"
    assert (sub / "tensors.tsv").read_text() == "1.0\t2.0\n3.0\t4.0\n5.0\t6.0\n"
    assert (sub / "metadata.tsv").read_text() == "a\nb\nc\n"
    cfg = (tmp_path / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "emb/x:00003"' in cfg and 'tensor_path: "00003/emb%2fx/tensors.tsv"' in cfg
    w.close()
    w.add_scalar("after_close", 1.0, 0)     # reopens a new event file, as torch's writer does
    w.close()
    assert len(glob.glob(str(tmp_path / "events.out.tfevents.*"))) == 2


def test_default_logdir_and_filewriter(tmp_path, monkeypatch):
    import socket
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_x")
    d = w.get_logdir()
    w.close()
    parts = d.split(os.sep)
    assert parts[0] == "runs" and parts[1].endswith("_" + socket.gethostname() + "_x")
    assert os.path.isdir(tmp_path / d)
    fw = FileWriter(str(tmp_path / "fw"), filename_suffix=".v2")
    assert fw.get_logdir() == str(tmp_path / "fw")
    fw.close()
    assert glob.glob(str(tmp_path / "fw" / "events.out.tfevents.*.v2"))


def test_errors_as_torch(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("x", ft.ones(2), 0)
        with pytest.raises(ValueError, match="len\\(bucket_limits\\)"):
            w.add_histogram_raw("r", 0, 1, 1, 1, 1, [1.0], [1, 2])
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("e", ft.zeros(0))


def test_import_error_names_the_package():
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    import funcgrad.utils.tensorboard\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert "pip install tensorboard" in out.stdout
