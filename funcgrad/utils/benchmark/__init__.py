"""funcgrad.utils.benchmark: torch.utils.benchmark's Python-statement timer (Timer, Measurement, Compare).

    t = Timer("f(x)", globals={"f": f, "x": x})
    print(t.timeit(100))              # one measurement of 100 runs
    m = t.blocked_autorange()         # as many blocks as fit in min_run_time
    m.median, m.mean, m.iqr, m.times  # seconds per run

Only Python statements are timed (language="python"); the C++ and Callgrind back ends do not exist here."""
from __future__ import annotations

import dataclasses
import enum
import math
import textwrap
import timeit as _timeit
from typing import Any, Callable, Optional

import numpy as np

__all__ = ["Timer", "Measurement", "TaskSpec", "Compare", "Language", "select_unit", "timer"]

_IQR_WARN = 0.1
_IQR_GROSS_WARN = 0.5


def timer() -> float:
    return _timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a Timer measures (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: Optional[str] = None
    sub_label: Optional[str] = None
    description: Optional[str] = None
    env: Optional[str] = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASK_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def select_unit(t: float) -> tuple:
    """(unit, scale) that shows t seconds as a number of order 1..1000."""
    exp = math.floor(math.log10(t) // 3) if t > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exp, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


@dataclasses.dataclass(repr=False)
class Measurement:
    """One or more timings of one statement: raw_times[i] is the total time of number_per_run runs."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: Optional[dict] = None

    def __getattr__(self, name: str) -> Any:
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list:
        """Seconds per run, one entry per block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _q(self, q: float) -> float:
        return float(np.quantile(np.asarray(self.times, dtype=np.float64), q))

    @property
    def median(self) -> float:
        return self._q(0.5)

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def iqr(self) -> float:
        return self._q(0.75) - self._q(0.25)

    def meets_confidence(self, threshold: float = _IQR_WARN) -> bool:
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings())

    def _warnings(self) -> list:
        if len(self.times) < 2 or self.meets_confidence(_IQR_WARN):
            return []
        why = ("This suggests significant environmental influence." if not self.meets_confidence(_IQR_GROSS_WARN)
               else "This could indicate system fluctuation.")
        return [f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the median measurement."
                f"\n           {why}"]

    @property
    def significant_figures(self) -> int:
        ts = sorted(self.times)
        n = len(ts)
        mid = np.asarray(ts[n // 4:math.ceil(3 * n / 4)], dtype=np.float64)
        ci = max(1.645 * float(mid.std()) / math.sqrt(len(mid)), 1e-12)
        return min(max(int(math.floor(math.log10(self.median / ci))), 1), 4)

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def as_row_name(self) -> str:
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    def __repr__(self) -> str:
        n = len(self.raw_times)
        unit, scale = select_unit(self.median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._q(0.25) / scale:.2f} to "
                         f"{self._q(0.75) / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines += self._warnings()
        return "\n".join(lines)

    @staticmethod
    def merge(measurements) -> list:
        """Replicates of the same task pooled into one Measurement each (times per run, number_per_run=1)."""
        groups: dict = {}
        for m in measurements:
            groups.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


class Timer:
    """Times a Python statement (run after `setup`, with `globals`), as torch.utils.benchmark.Timer."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: Optional[dict] = None, label: Optional[str] = None,
                 sub_label: Optional[str] = None, description: Optional[str] = None, env: Optional[str] = None,
                 num_threads: int = 1, language=Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Timer: only Python statements can be timed here, got language={language!r}")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                             "simply be moved to `setup`.")
        import funcgrad
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", funcgrad)

        def clean(s):
            s = textwrap.dedent(s)
            return (s[1:] if s.startswith("\n") else s).rstrip()
        stmt, setup = clean(stmt), clean(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label, description, env, num_threads)

    def _time(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One measurement: `number` runs of the statement (after a short warm-up)."""
        self._time(max(number // 100, 2))
        return Measurement(number, [self._time(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        overhead = float(np.median([self._time(0) for _ in range(5)]))
        number = 1
        while True:
            took = self._time(number)
            if (overhead / took <= 1e-4 and took >= min_run_time / 1000) or took > min_run_time \
                    or number * 10 > 2147483647:
                return number
            number *= 10

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None) -> list:
        times: list = []
        total, can_stop = 0.0, False
        while total < min_run_time or not can_stop:
            t = self._time(number)
            times.append(t)
            total += t
            if callback:
                callback(number, t)
            can_stop = stop(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs (each long enough that the timer's own cost is negligible) until min_run_time."""
        number = self._block_size(min_run_time)
        return Measurement(number, self._loop(number, lambda t: True, min_run_time, callback=callback),
                           self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None) -> Measurement:
        """Blocks until the interquartile range is below threshold * median (or max_run_time is spent)."""
        number = self._block_size(0.05)

        def stop(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        return Measurement(number, self._loop(number, stop, min_run_time, max_run_time, callback),
                           self._task_spec)


_ENGLISH = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}


class Compare:
    """A table of Measurements: one row per sub_label (or stmt), one column per description, grouped by label."""

    def __init__(self, results) -> None:
        self._results = list(results)
        self._colorize = False
        self._trim = False
        self._highlight_warnings = False

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = True

    def trim_significant_figures(self) -> None:
        self._trim = True

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def extend_results(self, results) -> None:
        self._results.extend(results)

    def __str__(self) -> str:
        out = []
        by_label: dict = {}
        for m in Measurement.merge(self._results):
            by_label.setdefault(m.task_spec.label or "", []).append(m)
        for label, ms in by_label.items():
            cols = list(dict.fromkeys(m.task_spec.description or "" for m in ms))
            rows = list(dict.fromkeys(m.as_row_name for m in ms))
            unit, scale = select_unit(min(m.median for m in ms))
            cell = {(m.as_row_name, m.task_spec.description or ""): m for m in ms}
            table = [[""] + cols] + [[r] + [f"{cell[(r, c)].median / scale:.1f}" if (r, c) in cell else ""
                                             for c in cols] for r in rows]
            widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
            title = f"[{'-' * 10} {label} {'-' * 10}]"
            out.append(title)
            out += ["  " + " | ".join(v.rjust(w) for v, w in zip(row, widths)) for row in table]
            out.append(f"\nTimes are in {_ENGLISH[unit]}s ({unit}).\n")
        return "\n".join(out)

    def print(self) -> None:
        print(str(self))
