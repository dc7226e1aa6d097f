"""torch's quantized embedding kernels (torch.ops.quantized): the row-wise quantized embedding bags over fused
rows (embedding_bag_{byte,4bit,2bit}_prepack / _unpack / _rowwise_offsets: 8-bit rows with float32 scale and
bias, 4-bit and 2-bit rows with float16 ones) and over EmbeddingPackedParamsBase (embedding_bag_prepack, the
nn.quantized Embedding / EmbeddingBag modules' packed weight: embedding_byte / _4bit, embedding_bag_byte / _4bit).

The arithmetic is fbgemm's, so results are bit-identical: rows quantized from their min/max (fbgemm's
FloatOrHalfToFused*Rowwise) or, with optimized_qparams, from the range ATen's greedy search
(choose_qparams_optimized) settles on; bags accumulated in index order as acc = fma(w scale, q, acc + w bias).
As torch's kernels, the bags are summed whatever `mode` says. Pruned weights (pruned_weights=True): the table
holds only the kept rows and compressed_indices_mapping (int32, one entry per original row) maps each index to
its packed row, -1 for a pruned one, which adds nothing to its bag.
"""
from __future__ import annotations

import numpy as np

from ._quantized import QTensor
from ._quantized_packed import EmbeddingPackedParamsBase, _bind, _host, _packed, fma32
from ._tensor import Tensor, _make

__all__ = ["embedding_bag_prepack", "embedding_bag_unpack", "rowwise_prepack",
           "rowwise_unpack", "choose_qparams_optimized_np", "q_embedding_bag_rowwise", "q_embedding_bag",
           "q_embedding", "OPS"]

_F32 = np.float32


# --- row-wise quantized embeddings ------------------------------------------------------------------------------
def _float16_bytes(v: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(v.astype(np.float16)).view(np.uint8).reshape(v.shape + (2,))


def _pack_bits(q: np.ndarray, bits: int) -> np.ndarray:
    """(rows, cols) integers < 2**bits -> (rows, ceil(cols * bits / 8)) bytes, element k in bits k*bits.. of its
    byte (the low bits first), as fbgemm packs them."""
    per = 8 // bits
    rows, cols = q.shape
    padded = np.zeros((rows, -(-cols // per) * per), np.uint8)
    padded[:, :cols] = q
    parts = padded.reshape(rows, -1, per).astype(np.uint8) << (np.arange(per, dtype=np.uint8) * bits)
    return np.bitwise_or.reduce(parts, axis=2).astype(np.uint8)


def _unpack_bits(b: np.ndarray, bits: int, cols: int) -> np.ndarray:
    per = 8 // bits
    q = (b[..., None] >> (np.arange(per, dtype=np.uint8) * bits)) & np.uint8((1 << bits) - 1)
    return q.reshape(b.shape[:-1] + (-1,))[..., :cols]


def _quant_loss(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, bits: int) -> np.ndarray:
    """ATen's calculate_quant_loss per row: the L2 norm of x - fake_quant(x) with the range [lo, hi] (lo rounded
    to float16, scale = float16(range / qmax)), summed in float32 in column order."""
    lo = lo.astype(np.float16).astype(_F32)
    qmax = _F32((1 << bits) - 1)
    rng = (hi - lo).astype(_F32)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        scale = np.where(rng == 0, _F32(1), (rng / qmax).astype(_F32).astype(np.float16).astype(_F32)).astype(_F32)
        inv = np.where(scale == 0, _F32(1), _F32(1) / scale).astype(_F32)
        norm = np.zeros(x.shape[0], _F32)
        for i in range(x.shape[1]):
            q = np.clip(np.rint(((x[:, i] - lo).astype(_F32) * inv).astype(_F32)), _F32(0), qmax).astype(_F32)
            d = (x[:, i] - (q * scale + lo).astype(_F32)).astype(_F32)
            norm = (norm + (d * d).astype(_F32)).astype(_F32)
    return np.sqrt(norm).astype(_F32)


def choose_qparams_optimized_np(x: np.ndarray, n_bins: int = 200, ratio: float = 0.16,
                                bit_width: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(xmax, xmin) per row of x as torch.choose_qparams_optimized picks them: starting from the row's range, move
    min up or max down by (max - min) / n_bins, whichever loses less, while the range spans more than
    int(n_bins * (1 - ratio)) steps; keep the local optimum of the quantization loss with the least loss (the full
    range if none)."""
    x = np.asarray(x, _F32)
    xmin, xmax = x.min(axis=1), x.max(axis=1)
    step = ((xmax - xmin) / _F32(n_bins)).astype(_F32)
    thr = (_F32(int(n_bins * (1.0 - ratio))) * step).astype(_F32)
    cur_min, cur_max = xmin.copy(), xmax.copy()
    cur_loss = _quant_loss(x, xmin, xmax, bit_width)
    best = cur_loss.copy()
    while True:
        live = (cur_min + thr).astype(_F32) < cur_max
        if not live.any():
            break
        up = (cur_min + step).astype(_F32)
        down = (cur_max - step).astype(_F32)
        loss1 = _quant_loss(x, up, cur_max, bit_width)
        loss2 = _quant_loss(x, cur_min, down, bit_width)
        found = live & (cur_loss < loss1) & (cur_loss < loss2) & (cur_loss < best)
        best = np.where(found, cur_loss, best)
        xmin, xmax = np.where(found, cur_min, xmin), np.where(found, cur_max, xmax)
        left = loss1 < loss2
        cur_min = np.where(live & left, up, cur_min)
        cur_max = np.where(live & ~left, down, cur_max)
        cur_loss = np.where(live, np.where(left, loss1, loss2), cur_loss)
    return xmax.astype(_F32), xmin.astype(_F32)


def rowwise_prepack(weight, bits: int, optimized_qparams: bool = False, nbins: int = 200,
                    ratio: float = 0.16) -> Tensor:
    """quantized::embedding_bag_{byte,4bit,2bit}_prepack: each row (last dim) quantized from its min and max (4 and
    2 bits with optimized_qparams: from the range choose_qparams_optimized_np picks) and fused with its scale and
    bias (float32 for 8 bits; float16 for 4 and 2 bits) into one uint8 row."""
    name = {8: "byte", 4: "4bit", 2: "2bit"}[bits]
    if not isinstance(weight, Tensor) or weight.dtype.name not in ("float32", "float16"):
        raise RuntimeError(f"'embedding_bag_{name}_prepack' only support float32 or float16.")
    w = _host(weight, _F32)
    if w.ndim < 1 or bits != 8 and w.ndim != 2:
        raise RuntimeError(f"quantized::embedding_bag_{name}_prepack: expected a "
                           f"{'weight of at least 1 dimension' if bits == 8 else '2-D weight'}, got shape "
                           f"{list(w.shape)}")
    if w.shape[-1] % (8 // bits):
        raise RuntimeError(f"qembeddingbag_{name}_prepack only works for the number of columns a multiple of "
                           f"{8 // bits}")
    lead, cols = w.shape[:-1], w.shape[-1]
    w = w.reshape(-1, cols)
    lo = w.min(axis=1) if cols else np.zeros(w.shape[0], _F32)
    hi = w.max(axis=1) if cols else np.zeros(w.shape[0], _F32)
    if optimized_qparams and bits != 8 and cols:
        hi, lo = choose_qparams_optimized_np(w, int(nbins), float(ratio), bits)
    if bits == 8:
        rng = (hi - lo).astype(_F32)
        inv = (_F32(255) / (rng + _F32(1e-8))).astype(_F32)
        q = np.clip(np.rint((w - lo[:, None]) * inv[:, None]), 0, 255).astype(np.uint8)
        tail = np.stack([(rng / _F32(255)).astype(_F32), lo], 1).view(np.uint8)
        out = np.concatenate([q, tail], 1)
    else:
        lo = lo.astype(np.float16).astype(_F32)
        rng = (hi - lo).astype(_F32)
        with np.errstate(divide="ignore", over="ignore"):
            scale = np.where(rng == 0, _F32(1), rng / _F32((1 << bits) - 1)).astype(np.float16).astype(_F32)
            scale = np.where(scale == 0, _F32(1), scale)
            inv = (_F32(1) / scale).astype(_F32)
        bad = np.isinf(inv)
        scale, inv = np.where(bad, _F32(1), scale), np.where(bad, _F32(1), inv)
        q = np.clip(np.rint((w - lo[:, None]) * inv[:, None]), 0, (1 << bits) - 1).astype(np.uint8)
        out = np.concatenate([_pack_bits(q, bits), _float16_bytes(scale), _float16_bytes(lo)], 1)
    return _make(out.reshape(lead + (out.shape[1],)))


def _rows(packed: np.ndarray, bits: int):
    """(integers (rows, cols), float32 scale, float32 bias) of a fused row-wise packed weight."""
    if bits == 8:
        ints = packed[:, :-8]
        sb = np.ascontiguousarray(packed[:, -8:]).view(_F32)
    else:
        ints = _unpack_bits(packed[:, :-4], bits, (packed.shape[1] - 4) * (8 // bits))
        sb = np.ascontiguousarray(packed[:, -4:]).view(np.float16).astype(_F32)
    return ints, sb[:, 0], sb[:, 1]


def rowwise_unpack(packed, bits: int) -> Tensor:
    """quantized::embedding_bag_{byte,4bit,2bit}_unpack: the float32 rows scale * q + bias."""
    name = {8: "byte", 4: "4bit", 2: "2bit"}[bits]
    p = _host(packed)
    if p.dtype != np.uint8 or p.ndim < 1 or bits != 8 and p.ndim != 2 or p.shape[-1] < (8 if bits == 8 else 4):
        raise RuntimeError(f"quantized::embedding_bag_{name}_unpack: expected the uint8 rows "
                           f"embedding_bag_{name}_prepack returns, got {p.dtype} of shape {list(p.shape)}")
    lead = p.shape[:-1]
    ints, scale, bias = _rows(p.reshape(-1, p.shape[-1]), bits)
    out = fma32(ints.astype(_F32), scale[:, None], bias[:, None])
    return _make(out.reshape(lead + (out.shape[-1],)))


def _index_array(t, what: str) -> np.ndarray:
    idx = _host(t)
    if idx.dtype not in (np.int32, np.int64):
        names = {"f": {4: "Float", 8: "Double", 2: "Half"}, "i": {1: "Char", 2: "Short"}, "u": {1: "Byte"}}
        name = names.get(idx.dtype.kind, {}).get(idx.dtype.itemsize, "Bool" if idx.dtype.kind == "b" else str(idx.dtype))
        raise RuntimeError(f"Expect 32 or 64 bit {what}, but found {name} instead.")
    return idx.astype(np.int64)


def _mapping(pruned_weights: bool, compressed_indices_mapping, rows: int, op: str):
    """The int32 compressed_indices_mapping of pruned weights as int64 (None when not pruned)."""
    if not pruned_weights:
        return None
    if compressed_indices_mapping is None:
        raise RuntimeError(f"quantized::{op}: pruned_weights=True needs compressed_indices_mapping (an int32 tensor: "
                           "for each original row its row in the pruned table, -1 if pruned)")
    m = _host(compressed_indices_mapping)
    if m.dtype != np.int32:
        raise RuntimeError(f"quantized::{op}: compressed_indices_mapping: expected scalar type Int but found "
                           f"{ {np.dtype(np.int64): 'Long'}.get(m.dtype, str(m.dtype)) }")
    m = m.reshape(-1).astype(np.int64)
    bad = (m < -1) | (m >= rows)
    if bad.any():
        raise RuntimeError(f"quantized::{op}: compressed_indices_mapping[{int(np.argmax(bad))}] = "
                           f"{int(m[np.argmax(bad)])} is not a row of the pruned table (0 to {rows - 1}) or -1")
    return m


def _bags(ints, scale, bias, indices, offsets, mode, per_sample_weights, include_last_offset, op: str,
          bag: bool = True, mapping=None) -> np.ndarray:
    """fbgemm's EmbeddingSpMDM over row-wise quantized rows: per bag, acc = fma(w s, q, acc + w b) in index order
    (`mode` is not read: torch's quantized kernels sum). Without `bag`, one row per index (embedding_byte /
    _4bit). With `mapping` (pruned weights) index i reads row mapping[i], none when it is -1."""
    rows = ints.shape[0] if mapping is None else mapping.size
    idx = _index_array(indices, "indices")
    bad = (idx < 0) | (idx >= rows)
    if bad.any():
        raise RuntimeError(f"Index {int(np.argmax(bad.ravel()))} is out of bounds: {int(idx.ravel()[bad.ravel()][0])}, "
                           f"range 0 to {rows}")
    if mapping is not None:
        idx = mapping[idx]
    D = ints.shape[1]
    if not bag:
        flat = idx.reshape(-1)
        out = fma32(ints[flat].astype(_F32), scale[flat, None], bias[flat, None])
        return out.reshape(idx.shape + (D,))
    n = idx.size
    if idx.ndim == 2:
        starts = np.arange(idx.shape[0]) * idx.shape[1]
        ends = starts + idx.shape[1]
        idx = idx.reshape(-1)
    elif offsets is None:
        raise RuntimeError(f"{op} expects offsets to be set for 1D indices.")
    else:
        offs = _index_array(offsets, "offsets").reshape(-1)
        if include_last_offset:
            starts, ends = offs[:-1], offs[1:]
        else:
            starts, ends = offs, np.append(offs[1:], n)
    wts = None if per_sample_weights is None else _host(per_sample_weights, _F32).reshape(-1)
    out = np.zeros((starts.size, D), _F32)
    lengths = ends - starts
    for k in range(int(lengths.max()) if lengths.size else 0):
        live = np.nonzero(lengths > k)[0]
        pos = starts[live] + k
        r = idx[pos]
        if mapping is not None:
            kept = r >= 0
            live, pos, r = live[kept], pos[kept], r[kept]
        sc, bi = scale[r], bias[r]
        if wts is not None:
            sc, bi = (wts[pos] * sc).astype(_F32), (wts[pos] * bi).astype(_F32)
        out[live] = fma32(sc[:, None], ints[r].astype(_F32), out[live] + bi[:, None])
    return out


def q_embedding_bag_rowwise(bits: int, weight, indices, offsets=None, scale_grad_by_freq: bool = False,
                            mode: int = 0, pruned_weights: bool = False, per_sample_weights=None,
                            compressed_indices_mapping=None, include_last_offset: bool = False) -> Tensor:
    """quantized::embedding_bag_{byte,4bit,2bit}_rowwise_offsets: bags over the fused row-wise packed `weight`
    (what embedding_bag_*_prepack returns)."""
    name = {8: "byte", 4: "4bit", 2: "2bit"}[bits]
    op = f"embedding_bag_{name}_rowwise_offsets"
    w = _host(weight)
    if w.dtype != np.uint8 or w.ndim != 2:
        raise RuntimeError(f"quantized::{op}: expected the 2-D uint8 rows embedding_bag_{name}_prepack returns, "
                           f"got {w.dtype} of shape {list(w.shape)}")
    ints, scale, bias = _rows(w, bits)
    mapping = _mapping(pruned_weights, compressed_indices_mapping, ints.shape[0], op)
    return _make(_bags(ints, scale, bias, indices, offsets, int(mode), per_sample_weights, include_last_offset, op,
                       mapping=mapping))


# --- the same over EmbeddingPackedParamsBase (the nn.quantized Embedding / EmbeddingBag modules) -------------------
def embedding_bag_prepack(weight) -> EmbeddingPackedParamsBase:
    """torch.ops.quantized.embedding_bag_prepack: a quint8 / quint4x2 weight quantized per row with float qparams,
    packed for the embedding kernels."""
    return EmbeddingPackedParamsBase(weight)


def embedding_bag_unpack(packed) -> QTensor:
    """torch.ops.quantized.embedding_bag_unpack: the quantized weight back."""
    return _packed(packed, EmbeddingPackedParamsBase, "embedding_bag_unpack").unpack()


def _bits(packed, bits, op) -> EmbeddingPackedParamsBase:
    p = _packed(packed, EmbeddingPackedParamsBase, op)
    if p.bit_rate != bits:
        raise RuntimeError(f"quantized::{op}: expected a {bits}-bit packed weight "
                           f"({'torch.quint8' if bits == 8 else 'torch.quint4x2'}), got {p.bit_rate} bits")
    return p


def q_embedding_bag(bits: int, weight, indices, offsets=None, scale_grad_by_freq: bool = False, mode: int = 0,
                    pruned_weights: bool = False, per_sample_weights=None, compressed_indices_mapping=None,
                    include_last_offset: bool = False) -> Tensor:
    """quantized::embedding_bag_byte / embedding_bag_4bit over an EmbeddingPackedParamsBase (pruned weights as the
    rowwise kernels')."""
    op = "embedding_bag_byte" if bits == 8 else "embedding_bag_4bit"
    p = _bits(weight, bits, op)
    mapping = _mapping(pruned_weights, compressed_indices_mapping, p.ints.shape[0], op)
    return _make(_bags(p.ints, p.scale, p.bias, indices, offsets, int(mode), per_sample_weights, include_last_offset,
                       op, mapping=mapping))


def q_embedding(bits: int, weight, indices, pruned_weights: bool = False) -> Tensor:
    """quantized::embedding_byte / embedding_4bit: the float32 rows scale * q + bias of `indices` (any shape; a
    trailing embedding dimension is added)."""
    op = "embedding_byte" if bits == 8 else "embedding_4bit"
    p = _bits(weight, bits, op)
    if pruned_weights:
        raise RuntimeError(f"quantized::{op}: pruned_weights=True needs a compressed_indices_mapping, which "
                           f"{op} does not take; use quantized.embedding_bag_{op.split('_')[1]} with one index per bag")
    return _make(_bags(p.ints, p.scale, p.bias, indices, None, 0, None, False, op, bag=False))


OPS: dict = {
    "embedding_bag_prepack": (embedding_bag_prepack, ["default"]),
    "embedding_bag_unpack": (embedding_bag_unpack, ["default"]),
    "embedding_byte": (_bind(q_embedding, 8), ["default"]), "embedding_4bit": (_bind(q_embedding, 4), ["default"]),
    "embedding_bag_byte": (_bind(q_embedding_bag, 8), ["default"]),
    "embedding_bag_4bit": (_bind(q_embedding_bag, 4), ["default"]),
}
for _bits_, _name in ((8, "byte"), (4, "4bit"), (2, "2bit")):
    OPS[f"embedding_bag_{_name}_prepack"] = (
        _bind(lambda bits, weight, optimized_qparams=False, nbins=200, ratio=0.16:
              rowwise_prepack(weight, bits, optimized_qparams, nbins, ratio), _bits_) if _bits_ != 8 else
        _bind(lambda bits, weight: rowwise_prepack(weight, bits), 8), ["default"])
    OPS[f"embedding_bag_{_name}_unpack"] = (_bind(lambda bits, packed: rowwise_unpack(packed, bits), _bits_),
                                            ["default"])
    OPS[f"embedding_bag_{_name}_rowwise_offsets"] = (_bind(q_embedding_bag_rowwise, _bits_), ["default"])
