"""Two torch-face examples print the same numbers under funcgrad as the same file run with torch (2.13) in its place.

Each script runs twice in a subprocess: as is (`import funcgrad as torch`), and through a shim that binds
`funcgrad`, `funcgrad.nn`, ... to torch's modules before running the file, so the very same source runs on torch.
Both seed with `torch.manual_seed(0)` and shuffle with a seeded `Generator`; funcgrad's CPU generator is torch's
Mersenne Twister with torch's transforms, so the initial weights, the shuffles and the Normal samples are the
same numbers, and the printed per-epoch losses agree to 1e-5 relative.

- vae.py (Linear/ReLU, Normal.rsample, Bernoulli log_prob, kl_divergence, Adam): every epoch's ELBO agrees to
  float32 rounding, ~1e-7.
- train_classifier.py (Conv2d, MaxPool2d, CrossEntropyLoss, Adam, StepLR): the forward pass is bit-identical;
  the backward pass's float32 reductions (a bias gradient summed over batch and pixels) round in another order
  than torch's vectorised kernels, ~1 ulp, which Adam amplifies over steps: 7e-8 relative after 48 steps (the
  settings below), 8e-6 after 63 steps (--n 2000, epoch 2), 7e-4 after 125 (epoch 4).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# runs argv[1:] with torch bound to funcgrad's module names (the only lines that differ between the two faces)
SHIM = """
import importlib, runpy, sys
for name in ("", ".nn", ".nn.functional", ".optim", ".utils", ".utils.data", ".distributions"):
    sys.modules["funcgrad" + name] = importlib.import_module("torch" + name)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

CASES = {
    "vae": (["vae.py", "--epochs", "3"], r"epoch \d+: ELBO (-?[0-9.]+)", 3),
    # (at these short settings the accuracy stays under the script's 90% floor: both runs exit with status 1)
    "train_classifier": (["train_classifier.py", "--epochs", "3", "--n", "1000", "--workers", "0"],
                         r"epoch \d+: loss ([0-9.]+)", 3),
}


def _run(argv, torch_face: bool):
    script, *args = argv
    cmd = [sys.executable, *(["-c", SHIM] if torch_face else []), str(EXAMPLES / script), *args]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, \
        f"{cmd}: exit code {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_prints_torchs_numbers(name):
    pytest.importorskip("torch")
    argv, pattern, count = CASES[name]
    (rc, out), (trc, tout) = _run(argv, torch_face=False), _run(argv, torch_face=True)
    ours, theirs = ([float(v) for v in re.findall(pattern, o)] for o in (out, tout))
    assert len(ours) == len(theirs) == count, (out, tout)
    assert rc == trc, (out, tout)
    assert re.findall(r"accuracy:? ([0-9.]+)", out) == re.findall(r"accuracy:? ([0-9.]+)", tout), (out, tout)
    for epoch, (a, b) in enumerate(zip(ours, theirs), 1):
        assert abs(a - b) <= 1e-5 * abs(b), f"{name}, epoch {epoch}: funcgrad {a!r}, torch {b!r}\n{ours}\n{theirs}"


def test_shim_runs_the_file_on_torch():
    """The comparison is between two libraries: under the shim the script's `torch` is torch itself."""
    torch = pytest.importorskip("torch")
    probe = ROOT / "examples" / "vae.py"
    code = SHIM.replace('runpy.run_path(sys.argv[0], run_name="__main__")',
                        'import funcgrad; print(funcgrad.__name__, funcgrad.__version__)')
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code, str(probe)], capture_output=True, text=True, env=env,
                         timeout=120).stdout.split()
    assert out == ["torch", torch.__version__]
