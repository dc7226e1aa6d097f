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
    pytest.importorskip("torch")
    assert PAGE.read_text() == TOOL["render"](), "docs/aten-coverage.md is stale: run python tools/aten_coverage.py"


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
