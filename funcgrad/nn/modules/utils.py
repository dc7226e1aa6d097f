"""torch.nn.modules.utils: the argument helpers custom layers import from torch (`_pair(3)` -> (3, 3), ...) and
consume_prefix_in_state_dict_if_present (load a DataParallel/DDP checkpoint, whose keys start "module.", into a
plain model)."""
from __future__ import annotations

import collections.abc
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    """A parser turning a scalar into an n-tuple of it and any iterable into a tuple of its items."""
    def parse(x):
        return tuple(x) if isinstance(x, collections.abc.Iterable) else (x,) * n
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """t reversed with each item repeated n times: a conv's per-dimension padding as F.pad's (last dim first)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with each None replaced by the input's size at that position."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip `prefix` from the keys of state_dict (and of its _metadata) in place, where present.

    Examples:
        >>> import collections
        >>> from funcgrad.nn.modules.utils import consume_prefix_in_state_dict_if_present
        >>> sd = collections.OrderedDict([("module.weight", 1), ("bias", 2)])
        >>> consume_prefix_in_state_dict_if_present(sd, "module.")
        >>> list(sd)
        ['bias', 'weight']
    """
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                metadata[key[len(prefix):]] = metadata.pop(key)
