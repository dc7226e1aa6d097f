"""The examples run end to end and reach their stated results."""
import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_functional_mlp_trains_to_95_percent():
    proc = subprocess.run([sys.executable, str(EXAMPLES / "functional_mlp.py")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"exit code {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    m = re.search(r"final accuracy:\s*([0-9.]+)", proc.stdout)
    assert m, f"no 'final accuracy' line in the output:\n{proc.stdout}"
    assert float(m.group(1)) >= 0.95, proc.stdout
