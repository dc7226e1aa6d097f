"""ONNX export benchmarks: an exported model on onnxruntime against the same model in funcgrad.

    python benchmarks/bench_onnx.py            # prints one markdown table
    python benchmarks/bench_onnx.py --quick    # fewer repeats (noisy)

For each model (the MLP and the BatchNorm CNN of the examples, a Transformer encoder layer, ResNet-18 from
funcgrad.vision.models; eval mode, float32): the export time, then the median time of one forward pass on the
same inputs in funcgrad eager (`model(x)` under no_grad), funcgrad.jit (`jit` of `functional_call`) and
onnxruntime (`InferenceSession.run`, CPU provider, one intra-op thread as funcgrad's BLAS), interleaved in one
run. Before timing, the three outputs are checked to agree. Needs the `onnx` extra.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import funcgrad as torch  # noqa: E402
import funcgrad.nn as nn  # noqa: E402
from funcgrad.nn.utils.stateless import functional_call  # noqa: E402


def _models():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    enc = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
    from funcgrad.vision import models
    yield "MLP 784-512-512-10, batch 128", mlp, (128, 784)
    yield "CNN (BatchNorm), batch 32x1x28x28", cnn, (32, 1, 28, 28)
    yield "TransformerEncoderLayer d64, batch 16x32", enc, (16, 32, 64)
    yield "ResNet-18, batch 8x3x64x64", models.resnet18(num_classes=10), (8, 3, 64, 64)


def _median_us(fn, repeats: int, inner: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    try:
        import onnxruntime as ort
    except ImportError:
        print("bench_onnx needs onnx and onnxruntime: pip install 'funcgrad[onnx]'", file=sys.stderr)
        return 2
    repeats = 5 if args.quick else 15
    print(f"funcgrad {torch.__version__}, onnxruntime {ort.__version__}, NumPy {np.__version__}, "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs, 1-minute load {os.getloadavg()[0]:.2f}")
    print("| model | export | funcgrad eager | funcgrad.jit | onnxruntime | ort / jit |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for name, model, shape in _models():
        model.eval()
        x = rng.standard_normal(shape).astype(np.float32)
        t0 = time.perf_counter()
        proto = torch.onnx.export(model, (torch.tensor(x),), input_names=["x"])
        export_s = time.perf_counter() - t0
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        params = dict(model.state_dict())
        xt = torch.tensor(x)
        jitted = _jit_forward(model, params)
        with torch.no_grad():
            eager_out = model(xt).numpy()
        jit_out = np.asarray(jitted(params, xt))
        ort_out = sess.run(None, {"x": x})[0]
        for other in (jit_out, ort_out):
            np.testing.assert_allclose(other, eager_out, rtol=1e-3, atol=1e-4)
        inner = max(1, int(2e-2 / max(1e-6, _median_us(lambda: sess.run(None, {"x": x}), 3, 1) * 1e-6)))

        def eager():
            with torch.no_grad():
                model(xt)
        rows = {"eager": [], "jit": [], "ort": []}
        for _ in range(3):  # interleaved rounds
            rows["eager"].append(_median_us(eager, repeats // 3 + 1, inner))
            rows["jit"].append(_median_us(lambda: jitted(params, xt), repeats // 3 + 1, inner))
            rows["ort"].append(_median_us(lambda: sess.run(None, {"x": x}), repeats // 3 + 1, inner))
        e, j, o = (statistics.median(rows[k]) for k in ("eager", "jit", "ort"))
        print(f"| {name} | {export_s * 1e3:.0f} ms | {e / 1e3:.3f} ms | {j / 1e3:.3f} ms | {o / 1e3:.3f} ms | {o / j:.2f}x |")
    return 0


def _jit_forward(model, params):
    import funcgrad
    return funcgrad.jit(lambda p, x: functional_call(model, p, (x,)))


if __name__ == "__main__":
    sys.exit(main())
