"""jax._src.util's small helpers: zip and map that insist on equal lengths, and unzip2/3."""
from __future__ import annotations


def safe_zip(*args):
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(zip(*args))


def safe_map(f, *args):
    args = list(map(list, args))
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(map(f, *args))


def unzip2(pairs):
    xs, ys = [], []
    for x, y in pairs:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def unzip3(triples):
    xs, ys, zs = [], [], []
    for x, y, z in triples:
        xs.append(x)
        ys.append(y)
        zs.append(z)
    return tuple(xs), tuple(ys), tuple(zs)


def split_list(args, ns):
    args = list(args)
    out = []
    for n in ns:
        out.append(args[:n])
        args = args[n:]
    out.append(args)
    return out
