"""The PyTorch-style examples run end to end (fast settings) and reach their stated results."""
import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _run(script, *args):
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, f"exit code {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


def test_train_classifier_learns_the_shapes():
    out = _run("train_classifier.py", "--epochs", "3", "--n", "2000", "--workers", "2")
    losses = [float(v) for v in re.findall(r"epoch \d+: loss ([0-9.]+)", out)]
    accs = [float(v) for v in re.findall(r"test accuracy ([0-9.]+)", out)]
    assert len(losses) == len(accs) == 3, out
    assert losses[-1] < losses[0] / 2, out
    m = re.search(r"final accuracy: ([0-9.]+)", out)
    assert m and float(m.group(1)) >= 0.9 and abs(float(m.group(1)) - accs[-1]) < 1e-9, out


def test_hogwild_loss_falls():
    out = _run("hogwild.py", "--procs", "2", "--steps", "60")
    before = float(re.search(r"before: loss ([0-9.]+)", out).group(1))
    after = float(re.search(r"after .*loss ([0-9.]+)", out).group(1))
    assert after < before / 3, out
