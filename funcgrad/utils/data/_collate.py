"""default_collate and default_convert (torch.utils.data): turning fetched samples into batches."""
from __future__ import annotations

import collections.abc as cabc
import re

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

__all__ = ["default_collate", "default_convert"]

_np_str_obj = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def default_convert(data):
    """numpy arrays (and numpy scalars) become tensors, recursively through dicts, named tuples and
    sequences; everything else is returned unchanged (used when batch_size is None)."""
    if isinstance(data, _fg.Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if data.dtype.kind in "SaUO":
            return data
        return _fg.as_tensor(data)
    if isinstance(data, cabc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, cabc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Collate a list of samples into a batch, as torch's default_collate: tensors are stacked along a new
    first dimension, numpy arrays and numpy scalars become stacked tensors, Python floats a float64 tensor,
    ints an int64 tensor (bools a bool tensor), strings stay a list; dicts, named tuples, tuples and lists
    are collated field by field (tuples come back as lists, as in torch)."""
    elem = batch[0]
    if isinstance(elem, _fg.Tensor):
        return _fg.stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        if _np_str_obj.search(elem.dtype.str) is not None:
            raise TypeError(_ERR.format(elem.dtype))
        if isinstance(elem, np.ndarray) and elem.ndim > 0:
            return default_collate([_fg.as_tensor(b) for b in batch])
        return _fg.as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return _fg.tensor(list(batch))
    if isinstance(elem, float):
        return _fg.tensor(list(batch), dtype=_fg.float64)
    if isinstance(elem, int):
        return _fg.tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, cabc.Mapping):
        out = {k: default_collate([d[k] for d in batch]) for k in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, cabc.Sequence):
        it = iter(batch)
        n = len(next(it))
        if not all(len(e) == n for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(list(s)) for s in transposed]
        try:
            return type(elem)([default_collate(list(s)) for s in transposed])
        except TypeError:
            return [default_collate(list(s)) for s in transposed]
    raise TypeError(_ERR.format(type(elem)))
