"""examples/finetune_folder.py runs end to end, learns the generated classes and writes its grid PNG into its
--out folder, leaving nothing else behind."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("PIL")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_finetune_folder_example(tmp_path):
    out = tmp_path / "out" / "grid.png"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "finetune_folder.py"), "--root",
                        str(tmp_path / "data"), "--out", str(tmp_path / "out")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert sum(line.startswith("epoch ") for line in lines) == 4
    acc = float(next(line for line in lines if line.startswith("eval accuracy")).split()[-1])
    assert acc >= 0.9
    from PIL import Image
    img = Image.open(out)
    assert img.size == (6 * 34 + 2, 2 * 34 + 2)  # 12 images of 32x32, nrow=6, padding 2


def test_finetune_folder_defaults_clean_up(tmp_path):
    """Without --root the generated images go to a temporary folder that is removed; without --out the grid goes
    to ./finetune_folder_out under the current directory."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), TMPDIR=str(tmp))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "finetune_folder.py"), "--epochs", "1"],
                       capture_output=True, text=True, env=env, cwd=tmp, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(os.listdir(tmp)) == ["finetune_folder_out"]  # no fg_folder_* left behind
    assert os.listdir(tmp / "finetune_folder_out") == ["grid.png"]
    assert str(tmp / "finetune_folder_out" / "grid.png") in r.stdout
