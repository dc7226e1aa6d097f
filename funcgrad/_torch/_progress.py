"""Progress bars for long library work (downloads into the hub cache and the data-set folders, archive
extraction): tqdm when it is installed, else a plain fallback that writes the percentage to stderr, as torch.hub
does. tqdm is optional (`pip install tqdm`, or the `examples` extra)."""
from __future__ import annotations

import sys
from typing import Optional

__all__ = ["tqdm", "progress_bar"]


class _Faketqdm:
    """A stand-in for tqdm.tqdm (used when tqdm is not installed, as torch.hub does): wraps an iterable or
    counts `update`s, writing the progress to stderr unless `disable`; set_description/set_postfix are accepted
    and ignored."""

    def __init__(self, iterable=None, desc=None, total=None, disable=False, unit=None, *args, initial=0, **kwargs):
        if iterable is not None and not hasattr(iterable, "__iter__"):  # tqdm(total=...) spelled positionally
            iterable, total = None, iterable
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.iterable, self.desc, self.total, self.disable, self.n = iterable, desc, total, bool(disable), initial

    def __iter__(self):
        if self.iterable is None:
            raise TypeError("'tqdm' object is not iterable: it was given no iterable")
        for item in self.iterable:
            yield item
            self.update(1)
        self.close()

    def __len__(self):
        return len(self.iterable) if self.iterable is not None else (self.total or 0)

    def update(self, n=1):
        if self.disable:
            return
        self.n += n
        head = f"{self.desc}: " if self.desc else ""
        if self.total is None:
            sys.stderr.write(f"\r{head}{self.n:.1f}")
        else:
            sys.stderr.write(f"\r{head}{100 * self.n / float(self.total or 1):.1f}%")
        sys.stderr.flush()

    def set_description(self, desc=None, refresh=True):
        self.desc = desc

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        if not self.disable and self.n:
            sys.stderr.write("\n")
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


try:
    from tqdm import tqdm  # the real one when installed, as torch.hub
except ImportError:
    tqdm = _Faketqdm


def progress_bar(total: Optional[int] = None, desc: Optional[str] = None, disable: bool = False, **kwargs):
    """A byte-counting bar for a download or an extraction (`update(n)` per chunk; a context manager): tqdm's
    when tqdm is installed, else the plain stderr percentage of `_Faketqdm`."""
    return tqdm(total=total, desc=desc, disable=disable, unit="B", unit_scale=True, unit_divisor=1024, **kwargs)
