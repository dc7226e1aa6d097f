"""docs/aten-coverage.md is current: tools/aten_coverage.py regenerates it from torch 2.13's ATen operators and
funcgrad's one ATen table (funcgrad/_torch/_aten.py), and every table line is torch's schema of that overload."""
import re
import runpy
from pathlib import Path

import pytest

from funcgrad._torch import _aten

ROOT = Path(__file__).resolve().parent.parent
TOOL = runpy.run_path(str(ROOT / "tools" / "aten_coverage.py"))   # (torch is imported only when a function runs)
PAGE = TOOL["PAGE"]


def test_table_lines_are_torchs_schemas():
    pytest.importorskip("torch")
    bad = TOOL["mismatched_schemas"]()
    assert not bad, f"table lines that differ from torch 2.13's schema: {bad}"


def test_page_is_current():
    """Rendered in a fresh process: what a test run has registered since (an operator implemented through
    torch.library in an earlier test module) is not the table the page describes."""
    pytest.importorskip("torch")
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    done = subprocess.run([sys.executable, "-c", "import runpy, sys; sys.stdout.write(runpy.run_path(sys.argv[1])"
                           "['render']())", str(ROOT / "tools" / "aten_coverage.py")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert PAGE.read_text() == done.stdout, "docs/aten-coverage.md is stale: run python tools/aten_coverage.py"


def test_page_lists_every_table_operator_and_gives_reasons():
    text = PAGE.read_text()
    covered = set(re.findall(r"^\| `([^`]+)` \| ", text, re.M))
    assert covered == set(_aten.table())
    reasons = re.findall(r"^\| ([^|`]+) \| (\d+) \| ", text, re.M)
    assert len(reasons) >= 5 and all(why.strip() for why, _ in reasons)


def test_schema_parse():
    s = _aten.schema("aten.split.Tensor")
    assert s.names() == ["self", "split_size", "dim"] and s.args[2] == ("int", "dim", True, 0, False)
    s = _aten.schema("aten.celu.default")
    assert s.args[1] == ("Scalar", "alpha", True, 1.0, False)
    s = _aten.schema("aten.empty.memory_format")
    assert [a[1] for a in s.args if a[4]] == ["dtype", "layout", "device", "pin_memory", "memory_format"]
