"""examples/vae.py runs end to end and its ELBO improves."""
import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_vae_elbo_improves():
    proc = subprocess.run([sys.executable, str(EXAMPLES / "vae.py"), "--epochs", "4"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"exit code {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    elbos = [float(v) for v in re.findall(r"epoch \d+: ELBO (-?[0-9.]+)", proc.stdout)]
    assert len(elbos) == 4, proc.stdout
    assert all(b > a for a, b in zip(elbos, elbos[1:])), elbos  # improves every epoch
    assert elbos[-1] > elbos[0] + 5.0, elbos  # by several nats per image (from about -35 to about -21)
