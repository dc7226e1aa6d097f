"""The bad-input sweep (issue 27 item 9): wrong calls across both faces, one row each.

Every row is a call a user gets wrong (a shape, a dtype, an axis, an argument, a value out of range, a
transform misused). Each row names the exception class JAX or torch raises for it (funcgrad may raise a
subclass), and words the message must contain: the operation and the shapes/dtypes involved. No NumPy
RuntimeWarning may escape on the way. Each row's lambda takes the top-level module (`jax` or `torch`, or
`funcgrad` standing for either), so that the same call runs on the reference libraries where they are
installed, which checks the recorded classes.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import funcgrad


def _dl(t, **kw):
    """A DataLoader over a 4-sample dataset with the keywords given."""
    ds = t.utils.data.TensorDataset(t.arange(4.0))
    return t.utils.data.DataLoader(ds, **kw)


def _sampler(t):
    return t.utils.data.SequentialSampler(range(4))


def _batch_sampler(t):
    return t.utils.data.BatchSampler(_sampler(t), 2, False)


def _fwd(module, x):
    return module(x)


# (id, face, call, exception class, words the message must contain (regular expressions, case-insensitive))
JAX_ROWS = [
    # shapes
    ("jnp.matmul inner", lambda j: j.numpy.matmul(j.numpy.ones((2, 3)), j.numpy.ones((2, 3))),
     TypeError, [r"dot_general|matmul", r"\(2, 3\)|2,3"]),
    ("jnp.dot 1d", lambda j: j.numpy.dot(j.numpy.ones(3), j.numpy.ones(4)),
     TypeError, [r"dot", r"\(3,\)|\[3\]", r"\(4,\)|\[4\]"]),
    ("jnp.matmul scalar", lambda j: j.numpy.matmul(1.0, j.numpy.ones(3)),
     ValueError, [r"matmul", r"scalar|0-d|ndim"]),
    ("jnp.concatenate shapes", lambda j: j.numpy.concatenate([j.numpy.ones((2, 3)), j.numpy.ones((3, 2))]),
     TypeError, [r"concatenate", r"\(2, 3\)|\[2,3\]", r"\(3, 2\)|\[3,2\]"]),
    ("jnp.concatenate axis", lambda j: j.numpy.concatenate([j.numpy.ones(3), j.numpy.ones(3)], axis=1),
     ValueError, [r"axis 1", r"dimension|ndim"]),
    ("jnp.concatenate ranks", lambda j: j.numpy.concatenate([j.numpy.ones(3), j.numpy.ones((1, 3))]),
     TypeError, [r"concatenate", r"rank|ndim|dimensions"]),
    ("jnp.stack shapes", lambda j: j.numpy.stack([j.numpy.ones(2), j.numpy.ones(3)]),
     ValueError, [r"stack", r"\(2,\)", r"\(3,\)"]),
    ("jnp.stack empty", lambda j: j.numpy.stack([]),
     ValueError, [r"stack|at least one|empty"]),
    ("jnp.reshape size", lambda j: j.numpy.reshape(j.numpy.ones(6), (4, 2)),
     TypeError, [r"reshape", r"\(6,\)|size 6|6", r"\(4, 2\)"]),
    ("jnp.reshape two -1", lambda j: j.numpy.reshape(j.numpy.ones(6), (-1, -1)),
     TypeError, [r"-1", r"one|once|at most"]),
    ("jnp.broadcast_to", lambda j: j.numpy.broadcast_to(j.numpy.ones(3), (4,)),
     ValueError, [r"broadcast", r"\(3,\)", r"\(4,\)"]),
    ("jnp.add broadcast", lambda j: j.numpy.ones(3) + j.numpy.ones(4),
     TypeError, [r"add", r"\(3,\)|\[3\]", r"\(4,\)|\[4\]"]),
    ("jnp.where broadcast", lambda j: j.numpy.where(j.numpy.ones(3) > 0, j.numpy.ones(3), j.numpy.ones(4)),
     ValueError, [r"broadcast|where", r"\(3,\)", r"\(4,\)"]),
    ("jnp.einsum shapes", lambda j: j.numpy.einsum("ij,jk->ik", j.numpy.ones((2, 3)), j.numpy.ones((4, 5))),
     ValueError, [r"einsum|dimension|j", r"3", r"4"]),
    ("jnp.split uneven", lambda j: j.numpy.split(j.numpy.ones(5), 2),
     ValueError, [r"split", r"5|equal"]),
    ("jnp.squeeze non-1", lambda j: j.numpy.squeeze(j.numpy.ones((2, 3)), axis=0),
     ValueError, [r"squeeze", r"2|size"]),
    ("jnp.transpose repeated", lambda j: j.numpy.transpose(j.numpy.ones((2, 3)), (0, 0)),
     TypeError, [r"transpose|permutation|repeated", r"\(0, 0\)|0"]),
    ("jnp.linalg.solve shapes", lambda j: j.numpy.linalg.solve(j.numpy.ones((3, 3)), j.numpy.ones(4)),
     ValueError, [r"solve", r"\(3, 3\)|3", r"\(4,\)|4"]),
    ("jnp.linalg.solve non-square", lambda j: j.numpy.linalg.solve(j.numpy.ones((2, 3)), j.numpy.ones(2)),
     ValueError, [r"solve", r"square|\(2, 3\)"]),
    ("jnp.linalg.cholesky non-square", lambda j: j.numpy.linalg.cholesky(j.numpy.ones((2, 3))),
     TypeError, [r"cholesky", r"square|\(2, 3\)"]),
    ("jnp.linalg.inv 1d", lambda j: j.numpy.linalg.inv(j.numpy.ones(3)),
     ValueError, [r"inv", r"2|ndim|dimension|\(3,\)"]),
    ("jnp.linalg.det non-square", lambda j: j.numpy.linalg.det(j.numpy.ones((2, 3))),
     ValueError, [r"det", r"square|\(2, 3\)"]),
    ("lax.conv channels",
     lambda j: j.lax.conv(j.numpy.ones((1, 2, 5, 5)), j.numpy.ones((3, 4, 3, 3)), (1, 1), "SAME"),
     ValueError, [r"conv", r"2", r"4|feature|channel"]),
    ("lax.conv rank", lambda j: j.lax.conv(j.numpy.ones((2, 5, 5)), j.numpy.ones((3, 2, 3, 3)), (1, 1), "SAME"),
     TypeError, [r"conv", r"rank|ndim|dimension"]),
    ("lax.dynamic_slice size", lambda j: j.lax.dynamic_slice(j.numpy.ones(5), (0,), (6,)),
     TypeError, [r"dynamic_slice|slice", r"6", r"5"]),
    ("lax.dynamic_slice rank", lambda j: j.lax.dynamic_slice(j.numpy.ones(5), (0, 0), (1, 1)),
     ValueError, [r"dynamic_slice|slice", r"1|2"]),
    ("jnp.take_along_axis rank",
     lambda j: j.numpy.take_along_axis(j.numpy.ones((2, 3)), j.numpy.zeros(3, dtype="int32"), axis=1),
     ValueError, [r"take_along_axis|indices|dimension", r"2|1"]),
    ("jnp index too many", lambda j: j.numpy.ones(3)[0, 0],
     IndexError, [r"too many|dimension", r"1|2"]),
    # dtypes
    ("jnp float index", lambda j: j.numpy.ones(3)[1.5],
     TypeError, [r"ind", r"float"]),
    ("jnp float array index", lambda j: j.numpy.ones(3)[j.numpy.array([1.0])],
     TypeError, [r"ind", r"float"]),
    ("at[] float index", lambda j: j.numpy.ones(3).at[1.5].set(1.0),
     TypeError, [r"ind", r"float"]),
    ("jnp.take float index", lambda j: j.numpy.take(j.numpy.ones(3), j.numpy.array([1.0])),
     ValueError, [r"ind|take", r"float"]),
    ("jnp.bitwise_and float", lambda j: j.numpy.bitwise_and(j.numpy.ones(3), j.numpy.ones(3)),
     TypeError, [r"bitwise_and|and", r"float"]),
    ("jnp.left_shift float", lambda j: j.numpy.left_shift(j.numpy.ones(3), 1),
     TypeError, [r"shift", r"float"]),
    ("lax.add mixed dtypes",
     lambda j: j.lax.add(j.numpy.ones(3, dtype="float32"), j.numpy.ones(3, dtype="int32")),
     TypeError, [r"add", r"float32|f32", r"int32|i32"]),
    ("lax.sin int", lambda j: j.lax.sin(j.numpy.ones(3, dtype="int32")),
     TypeError, [r"sin", r"int32|i32"]),
    ("jnp.floor complex", lambda j: j.numpy.floor(j.numpy.ones(3) * 1j),
     TypeError, [r"floor", r"complex"]),
    ("jnp.remainder complex", lambda j: j.numpy.remainder(j.numpy.ones(3) * 1j, 2.0),
     TypeError, [r"rem|mod", r"complex"]),
    ("jnp.ones bad dtype", lambda j: j.numpy.ones(3, dtype="notadtype"),
     TypeError, [r"notadtype", r"dtype"]),
    ("jnp.asarray str", lambda j: j.numpy.asarray("abc"),
     TypeError, [r"str|abc", r"array|type"]),
    ("jnp.array ragged", lambda j: j.numpy.array([[1.0, 2.0], [3.0]]),
     ValueError, [r"inhomogeneous|ragged|sequence|shape"]),
    # axes
    ("jnp.sum axis", lambda j: j.numpy.sum(j.numpy.ones(3), axis=1),
     ValueError, [r"axis 1", r"dimension|ndim|1"]),
    ("jnp.sum float axis", lambda j: j.numpy.sum(j.numpy.ones(3), axis=1.5),
     TypeError, [r"axis|int|float", r"1.5|float"]),
    ("jnp.swapaxes axis", lambda j: j.numpy.swapaxes(j.numpy.ones((2, 3)), 0, 2),
     IndexError, [r"axis 2", r"dimension|ndim|2"]),
    ("jnp.expand_dims axis", lambda j: j.numpy.expand_dims(j.numpy.ones(3), 3),
     ValueError, [r"axis 3", r"dimension|ndim"]),
    ("jnp.cumsum axis", lambda j: j.numpy.cumsum(j.numpy.ones(3), axis=2),
     ValueError, [r"axis 2|axis", r"dimension|ndim|2"]),
    ("jnp.sort axis", lambda j: j.numpy.sort(j.numpy.ones(3), axis=1),
     ValueError, [r"axis 1|axis", r"dimension|ndim|1"]),
    ("jnp.fft.fft axis", lambda j: j.numpy.fft.fft(j.numpy.ones(3), axis=2),
     ValueError, [r"axis", r"2"]),
    ("jax.nn.log_softmax axis", lambda j: j.nn.log_softmax(j.numpy.ones(3), axis=2),
     ValueError, [r"axis 2|axis", r"dimension|ndim|2"]),
    ("jnp.argmax axis", lambda j: j.numpy.argmax(j.numpy.ones(3), axis=1),
     IndexError, [r"axis 1|axis", r"dimension|ndim|1"]),
    # argument types and keywords
    ("jnp.sin unknown keyword", lambda j: j.numpy.sin(j.numpy.ones(3), foo=1),
     TypeError, [r"foo", r"keyword|argument"]),
    ("jnp.sum unknown keyword", lambda j: j.numpy.sum(j.numpy.ones(3), keepdim=True),
     TypeError, [r"keepdim", r"keyword|argument"]),
    ("jnp.zeros negative", lambda j: j.numpy.zeros(-1),
     TypeError, [r"negative|-1", r"shape|dimension"]),
    ("jnp.zeros negative tuple", lambda j: j.numpy.zeros((2, -3)),
     TypeError, [r"negative|-3", r"shape|dimension"]),
    ("jnp.linspace negative num", lambda j: j.numpy.linspace(0.0, 1.0, -1),
     ValueError, [r"num|-1", r"negative|non-negative|must be"]),
    ("jnp.max empty", lambda j: j.numpy.max(j.numpy.zeros((0,))),
     ValueError, [r"max", r"zero-size|empty|identity"]),
    ("jnp.argmax empty", lambda j: j.numpy.argmax(j.numpy.zeros((0,))),
     ValueError, [r"argmax", r"zero-size|empty"]),
    ("jnp.pad negative", lambda j: j.numpy.pad(j.numpy.ones(3), -1),
     ValueError, [r"pad", r"negative|-1"]),
    ("random.choice too many", lambda j: j.random.choice(j.random.PRNGKey(0), 3, (5,), replace=False),
     ValueError, [r"sample|population|replace", r"3|5"]),
    # transforms
    ("grad non-scalar", lambda j: j.grad(lambda x: x * 2.0)(j.numpy.ones(3)),
     TypeError, [r"scalar", r"\(3,\)"]),
    ("grad int input", lambda j: j.grad(lambda x: x * 2)(3),
     TypeError, [r"grad", r"int"]),
    ("value_and_grad non-scalar", lambda j: j.value_and_grad(lambda x: x * 2.0)(j.numpy.ones(3)),
     TypeError, [r"scalar", r"\(3,\)"]),
    ("jacrev int input", lambda j: j.jacrev(lambda x: x * 2)(j.numpy.ones(3, dtype="int32")),
     TypeError, [r"jacrev|int", r"int32"]),
    ("vmap in_axes length", lambda j: j.vmap(lambda x: x, in_axes=(0, 0))(j.numpy.ones(3)),
     ValueError, [r"in_axes", r"2|length"]),
    ("vmap sizes", lambda j: j.vmap(lambda x, y: x + y)(j.numpy.ones(3), j.numpy.ones(4)),
     ValueError, [r"vmap", r"3", r"4"]),
    ("vmap axis range", lambda j: j.vmap(lambda x: x, in_axes=1)(j.numpy.ones(3)),
     ValueError, [r"vmap|in_axes|axis", r"1"]),
    ("jit unknown keyword", lambda j: j.jit(lambda x: x, foo=1),
     TypeError, [r"foo", r"keyword|argument"]),
    ("jit static unhashable", lambda j: j.jit(lambda x: x, static_argnums=0)([1, 2]),
     ValueError, [r"hash", r"static|list"]),
    # control flow
    ("cond branch mismatch", lambda j: j.lax.cond(True, lambda: 1.0, lambda: j.numpy.ones(2)),
     TypeError, [r"cond|branch", r"\(2,\)|\[2\]"]),
    ("cond pred shape", lambda j: j.lax.cond(j.numpy.ones(2) > 0, lambda: 1.0, lambda: 2.0),
     TypeError, [r"pred|cond", r"scalar|\(2,\)|\[2\]"]),
    ("while_loop carry dtype",
     lambda j: j.lax.while_loop(lambda c: c < 3, lambda c: (c + 1).astype("float32"), j.numpy.int32(0)),
     TypeError, [r"while|body|carry", r"int32|i32", r"float32|f32"]),
    ("scan carry shape",
     lambda j: j.lax.scan(lambda c, x: (c + x, None), 0.0, j.numpy.ones((3, 2))),
     TypeError, [r"scan|carry", r"\(2,\)|\[2\]"]),
    ("fori_loop carry shape", lambda j: j.lax.fori_loop(0, 3, lambda i, c: j.numpy.ones(2), 0.0),
     TypeError, [r"fori_loop|while|body|carry", r"\(2,\)|\[2\]"]),
    ("switch float index", lambda j: j.lax.switch(1.5, [lambda: 1.0, lambda: 2.0]),
     TypeError, [r"switch|index", r"int|float"]),
    ("select shapes", lambda j: j.lax.select(j.numpy.ones(3) > 0, j.numpy.ones(3), j.numpy.ones(4)),
     TypeError, [r"select", r"3", r"4"]),
]

TORCH_ROWS = [
    # shapes
    ("torch.matmul inner", lambda t: t.matmul(t.ones(2, 3), t.ones(2, 3)),
     RuntimeError, [r"mat1 and mat2|matmul|mm", r"2x3|\(2, 3\)"]),
    ("torch.dot sizes", lambda t: t.dot(t.ones(3), t.ones(4)),
     RuntimeError, [r"dot|inconsistent", r"3", r"4"]),
    ("torch.dot 2d", lambda t: t.dot(t.ones(2, 2), t.ones(2, 2)),
     RuntimeError, [r"dot|1D", r"2D|1D"]),
    ("torch.mm 1d", lambda t: t.mm(t.ones(3), t.ones(3)),
     RuntimeError, [r"mm|matrix|self", r"1D|2D|matrix"]),
    ("torch.bmm 2d", lambda t: t.bmm(t.ones(2, 3), t.ones(2, 3)),
     RuntimeError, [r"bmm|batch", r"3D|3-D|dimension"]),
    ("torch.cat shapes", lambda t: t.cat([t.ones(2, 3), t.ones(3, 2)]),
     RuntimeError, [r"cat|sizes", r"3", r"2"]),
    ("torch.cat empty", lambda t: t.cat([]),
     ValueError, [r"cat", r"non-empty|empty"]),
    ("torch.stack shapes", lambda t: t.stack([t.ones(2), t.ones(3)]),
     RuntimeError, [r"stack", r"\[2\]|\(2\)|2", r"\[3\]|3"]),
    ("reshape size", lambda t: t.ones(6).reshape(4, 2),
     RuntimeError, [r"shape|reshape", r"\[4, 2\]|\(4, 2\)", r"6"]),
    ("view two -1", lambda t: t.ones(6).view(-1, -1),
     RuntimeError, [r"-1|dimension", r"one|only"]),
    ("view non-contiguous", lambda t: t.ones(2, 3).t().view(6),
     RuntimeError, [r"view", r"stride|contiguous|reshape"]),
    ("expand", lambda t: t.ones(3).expand(4),
     RuntimeError, [r"expand", r"3", r"4"]),
    ("add broadcast", lambda t: t.ones(3) + t.ones(4),
     RuntimeError, [r"size", r"3", r"4"]),
    ("torch.where broadcast", lambda t: t.where(t.ones(3) > 0, t.ones(3), t.ones(4)),
     RuntimeError, [r"size|broadcast|where", r"3", r"4"]),
    ("torch.einsum shapes", lambda t: t.einsum("ij,jk->ik", t.ones(2, 3), t.ones(4, 5)),
     RuntimeError, [r"einsum", r"3", r"4"]),
    ("repeat fewer dims", lambda t: t.ones(2, 3).repeat(2),
     RuntimeError, [r"repeat", r"dimension|dims"]),
    ("permute repeated", lambda t: t.ones(2, 3).permute(0, 0),
     RuntimeError, [r"permute|repeated|dim", r"0"]),
    ("linalg.solve shapes", lambda t: t.linalg.solve(t.ones(3, 3), t.ones(4)),
     RuntimeError, [r"solve|linalg", r"3", r"4"]),
    ("linalg.cholesky non-square", lambda t: t.linalg.cholesky(t.ones(2, 3)),
     RuntimeError, [r"cholesky", r"square|2|3"]),
    ("linalg.cholesky not PD", lambda t: t.linalg.cholesky(-t.eye(2)),
     RuntimeError, [r"cholesky", r"positive|order|minor"]),
    ("linalg.inv singular", lambda t: t.linalg.inv(t.zeros(2, 2)),
     RuntimeError, [r"inv", r"singular|invertible"]),
    ("linalg.det non-square", lambda t: t.linalg.det(t.ones(2, 3)),
     RuntimeError, [r"det|square", r"square|2|3"]),
    ("conv2d channels", lambda t: t.nn.functional.conv2d(t.ones(1, 3, 5, 5), t.ones(4, 2, 3, 3)),
     RuntimeError, [r"conv|channels|groups", r"3", r"2"]),
    ("conv2d rank", lambda t: t.nn.functional.conv2d(t.ones(3, 5), t.ones(4, 3, 3, 3)),
     RuntimeError, [r"conv|3D|4D", r"\[3, 5\]|\(3, 5\)|2D|3D"]),
    ("topk too large", lambda t: t.topk(t.ones(3), 5),
     RuntimeError, [r"topk|k|selected index", r"5|range"]),
    ("max_pool2d kernel too large", lambda t: t.nn.functional.max_pool2d(t.ones(1, 1, 2, 2), 3),
     RuntimeError, [r"pool|output size|kernel", r"2|3|small"]),
    # indexing, gather, scatter
    ("index out of range", lambda t: t.ones(3)[5],
     IndexError, [r"5", r"3|bounds|size"]),
    ("float index", lambda t: t.ones(3)[1.5],
     IndexError, [r"ind", r"integer|float|int"]),
    ("float tensor index", lambda t: t.ones(3)[t.tensor([1.0])],
     IndexError, [r"ind", r"long|int|bool|float"]),
    ("gather float index", lambda t: t.gather(t.ones(2, 3), 1, t.ones(2, 3)),
     RuntimeError, [r"gather", r"int64|long|index"]),
    ("gather index out of range", lambda t: t.gather(t.ones(2, 3), 1, t.tensor([[5], [0]])),
     RuntimeError, [r"gather|index", r"5|out of bounds|range"]),
    ("scatter index out of range", lambda t: t.zeros(3).scatter(0, t.tensor([5]), 1.0),
     RuntimeError, [r"scatter|index", r"5|out of bounds|range"]),
    ("index_select out of range", lambda t: t.index_select(t.ones(3), 0, t.tensor([5])),
     IndexError, [r"index", r"5|out of range|bounds"]),
    ("masked_fill float mask", lambda t: t.ones(3).masked_fill(t.tensor([1.0, 0.0, 1.0]), 0.0),
     RuntimeError, [r"masked_fill|mask", r"bool|float"]),
    # dtypes
    ("bitwise_and float", lambda t: t.bitwise_and(t.ones(3), t.ones(3)),
     RuntimeError, [r"bitwise_and|and", r"float"]),
    ("bitwise_not float", lambda t: t.ones(3).bitwise_not(),
     RuntimeError, [r"bitwise_not|not", r"float"]),
    ("bool subtract", lambda t: t.tensor([True]) - t.tensor([True]),
     RuntimeError, [r"subtract|-", r"bool"]),
    ("bool negate", lambda t: -t.tensor([True]),
     RuntimeError, [r"negat|-", r"bool"]),
    ("mean of int", lambda t: t.ones(3, dtype=t.int64).mean(),
     RuntimeError, [r"mean", r"long|int64|floating"]),
    ("complex clamp", lambda t: t.ones(3, dtype=t.complex64).clamp(0, 1),
     RuntimeError, [r"clamp", r"complex"]),
    ("complex floor", lambda t: t.floor(t.ones(3, dtype=t.complex64)),
     RuntimeError, [r"floor", r"complex"]),
    ("complex maximum", lambda t: t.maximum(t.ones(3, dtype=t.complex64), t.ones(3, dtype=t.complex64)),
     RuntimeError, [r"maximum|max", r"complex"]),
    ("dot dtypes", lambda t: t.dot(t.ones(2), t.ones(2, dtype=t.int64)),
     RuntimeError, [r"dot|dtype", r"float|Float", r"long|Long|int64"]),
    ("Linear dtype", lambda t: t.nn.Linear(3, 4)(t.ones(2, 3, dtype=t.float64)),
     RuntimeError, [r"mat1|mat2|dtype", r"double|float64", r"float|float32"]),
    ("in-place sqrt on int", lambda t: t.tensor([1, 4]).sqrt_(),
     RuntimeError, [r"result type|cast|sqrt", r"float|Float", r"long|Long|int64"]),
    ("requires_grad on int", lambda t: t.ones(3, dtype=t.int64).requires_grad_(),
     RuntimeError, [r"floating point|complex", r"grad"]),
    ("one_hot float", lambda t: t.nn.functional.one_hot(t.tensor([1.0])),
     RuntimeError, [r"one_hot", r"index|long|int64|float"]),
    ("ones bad dtype", lambda t: t.ones(3, dtype="notadtype"),
     TypeError, [r"dtype", r"notadtype"]),
    ("tensor ragged", lambda t: t.tensor([[1.0, 2.0], [3.0]]),
     ValueError, [r"sequence|length|shape|ragged"]),
    # dims
    ("sum dim", lambda t: t.ones(3).sum(dim=1),
     IndexError, [r"dim", r"range|1"]),
    ("sum float dim", lambda t: t.ones(3).sum(dim=1.5),
     TypeError, [r"sum|dim", r"float|int"]),
    ("transpose dim", lambda t: t.ones(2, 3).transpose(0, 2),
     IndexError, [r"dim", r"range|2"]),
    ("squeeze dim", lambda t: t.ones(2, 3).squeeze(2),
     IndexError, [r"dim", r"range|2"]),
    ("unsqueeze dim", lambda t: t.ones(3).unsqueeze(3),
     IndexError, [r"dim", r"range|3"]),
    ("log_softmax dim", lambda t: t.log_softmax(t.ones(3), dim=2),
     IndexError, [r"dim", r"range|2"]),
    ("softmax dim", lambda t: t.nn.functional.softmax(t.ones(3), dim=1),
     IndexError, [r"dim", r"range|1"]),
    ("cumsum dim", lambda t: t.cumsum(t.ones(3), dim=2),
     IndexError, [r"dim", r"range|2"]),
    ("sort dim", lambda t: t.sort(t.ones(3), dim=2),
     IndexError, [r"dim", r"range|2"]),
    ("fft.fft dim", lambda t: t.fft.fft(t.ones(3), dim=2),
     IndexError, [r"dim", r"range|2"]),
    # argument types, keywords, sizes, values
    ("sin unknown keyword", lambda t: t.sin(t.ones(3), foo=1),
     TypeError, [r"sin", r"foo|keyword|argument"]),
    ("zeros negative", lambda t: t.zeros(-1),
     RuntimeError, [r"negative|-1", r"dimension|size"]),
    ("empty negative", lambda t: t.empty(2, -3),
     RuntimeError, [r"negative|-3", r"dimension|size"]),
    ("eye negative", lambda t: t.eye(-1),
     RuntimeError, [r"n|eye", r"-1|negative|>= 0"]),
    ("arange zero step", lambda t: t.arange(0, 10, 0),
     RuntimeError, [r"step|arange", r"zero|0"]),
    ("linspace negative steps", lambda t: t.linspace(0, 1, -1),
     RuntimeError, [r"steps|linspace", r"non-negative|negative|-1"]),
    ("chunk zero", lambda t: t.ones(5).chunk(0),
     RuntimeError, [r"chunk", r"0|greater"]),
    ("max of empty", lambda t: t.zeros(0).max(),
     RuntimeError, [r"max", r"empty|numel|zero"]),
    ("argmax of empty", lambda t: t.zeros(0).argmax(),
     IndexError, [r"argmax", r"empty|numel|zero"]),
    ("clamp no bounds", lambda t: t.clamp(t.ones(3)),
     RuntimeError, [r"clamp", r"min|max"]),
    ("randint low>=high", lambda t: t.randint(5, 2, (3,)),
     RuntimeError, [r"from|low|randint|random", r"5|to|high|less"]),
    ("multinomial negative", lambda t: t.multinomial(t.tensor([-1.0, 2.0]), 1),
     RuntimeError, [r"multinomial|probab", r"negative|inf|nan|>= 0"]),
    ("multinomial too many", lambda t: t.multinomial(t.tensor([0.5, 0.5]), 3),
     RuntimeError, [r"multinomial|sample|categor", r"3|2|replacement"]),
    ("normal negative std", lambda t: t.normal(0.0, -1.0, (3,)),
     RuntimeError, [r"normal|std", r">= 0|negative|-1"]),
    ("bernoulli out of range", lambda t: t.bernoulli(t.tensor([1.5])),
     RuntimeError, [r"bernoulli|p", r"0|1|range"]),
    ("to unknown device", lambda t: t.ones(3).to("notadevice"),
     RuntimeError, [r"device", r"notadevice"]),
    # nn modules
    ("Linear in_features", lambda t: t.nn.Linear(3, 4)(t.ones(2, 5)),
     RuntimeError, [r"mat1|mat2|shape|Linear", r"2x5|\(2, 5\)|5", r"3"]),
    ("Conv2d channels", lambda t: t.nn.Conv2d(3, 4, 3)(t.ones(1, 2, 5, 5)),
     RuntimeError, [r"channels|conv", r"3", r"2"]),
    ("LSTM input size", lambda t: t.nn.LSTM(3, 4)(t.ones(5, 1, 6)),
     RuntimeError, [r"input.size|input_size|LSTM", r"3", r"6"]),
    ("BatchNorm features", lambda t: t.nn.BatchNorm1d(3)(t.ones(2, 4)),
     RuntimeError, [r"running_mean|BatchNorm|features|size", r"3", r"4"]),
    ("Embedding out of range", lambda t: t.nn.Embedding(5, 2)(t.tensor([7])),
     IndexError, [r"index|embedding", r"7|range"]),
    ("Embedding float index", lambda t: t.nn.Embedding(5, 2)(t.tensor([1.0])),
     RuntimeError, [r"index|embedding", r"long|int|float"]),
    # losses
    ("cross_entropy batch", lambda t: t.nn.functional.cross_entropy(t.ones(2, 3), t.tensor([0, 1, 2])),
     ValueError, [r"batch|input|target", r"2", r"3"]),
    ("cross_entropy target range", lambda t: t.nn.functional.cross_entropy(t.ones(2, 3), t.tensor([0, 5])),
     IndexError, [r"target|class", r"5|bounds|range"]),
    ("nll_loss float target", lambda t: t.nn.functional.nll_loss(t.ones(2, 3), t.tensor([0.0, 1.0])),
     RuntimeError, [r"nll|target|expected", r"long|int64|float"]),
    ("mse_loss shapes", lambda t: t.nn.functional.mse_loss(t.ones(3), t.ones(4)),
     RuntimeError, [r"size|mse", r"3", r"4"]),
    ("binary_cross_entropy shapes",
     lambda t: t.nn.functional.binary_cross_entropy(t.full((3,), 0.5), t.ones(4)),
     ValueError, [r"target|input|size", r"3", r"4"]),
    ("binary_cross_entropy range", lambda t: t.nn.functional.binary_cross_entropy(t.tensor([2.0]), t.tensor([1.0])),
     RuntimeError, [r"input|binary_cross_entropy", r"0|1|between"]),
    # optimizers and data
    ("SGD non-parameter", lambda t: t.optim.SGD([1.0], lr=0.1),
     TypeError, [r"optimi[sz]e|Tensor", r"float|Tensor"]),
    ("SGD tensor not iterable", lambda t: t.optim.SGD(t.ones(3, requires_grad=True), lr=0.1),
     TypeError, [r"iterable|params", r"Tensor"]),
    ("SGD negative lr", lambda t: t.optim.SGD([t.ones(3, requires_grad=True)], lr=-1.0),
     ValueError, [r"learning rate|lr", r"-1"]),
    ("Adam betas", lambda t: t.optim.Adam([t.ones(3, requires_grad=True)], betas=(1.5, 0.9)),
     ValueError, [r"beta", r"1.5"]),
    ("DataLoader batch_size 0", lambda t: _dl(t, batch_size=0),
     ValueError, [r"batch_size", r"0|positive"]),
    ("DataLoader batch_size -1", lambda t: _dl(t, batch_size=-1),
     ValueError, [r"batch_size", r"-1|positive"]),
    ("DataLoader shuffle and sampler", lambda t: _dl(t, shuffle=True, sampler=_sampler(t)),
     ValueError, [r"sampler", r"shuffle"]),
    ("DataLoader num_workers", lambda t: _dl(t, num_workers=-1),
     ValueError, [r"num_workers", r"-1|non-negative|negative"]),
    ("DataLoader batch_sampler and batch_size",
     lambda t: _dl(t, batch_sampler=_batch_sampler(t), batch_size=2),
     ValueError, [r"batch_sampler", r"batch_size"]),
    # autograd and func transforms
    ("backward non-scalar", lambda t: (t.ones(3, requires_grad=True) * 2).backward(),
     RuntimeError, [r"grad", r"scalar"]),
    ("backward no grad", lambda t: t.ones(3).sum().backward(),
     RuntimeError, [r"grad", r"require"]),
    ("autograd.grad unused", lambda t: t.autograd.grad(t.ones(3, requires_grad=True).sum(),
                                                       t.ones(2, requires_grad=True)),
     RuntimeError, [r"used|graph", r"Tensor|allow_unused"]),
    ("in-place on leaf", lambda t: t.ones(3, requires_grad=True).add_(1.0),
     RuntimeError, [r"leaf", r"in-place|requires grad"]),
    ("func.grad non-scalar", lambda t: t.func.grad(lambda x: x * 2)(t.ones(3)),
     RuntimeError, [r"grad", r"scalar|single element|\(3,\)|\[3\]"]),
    ("func.vmap in_dims", lambda t: t.func.vmap(lambda x: x, in_dims=(0, 0))(t.ones(3)),
     ValueError, [r"in_dims", r"2|1"]),
]

ROWS = [("jax",) + r for r in JAX_ROWS] + [("torch",) + r for r in TORCH_ROWS]
IDS = [f"{face}:{r[0]}" for face, *r in [(row[0], *row[1:]) for row in ROWS]]


def _run(call, module):
    """Runs one row; returns the exception it raised (None if none) and the RuntimeWarnings from NumPy."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call(module)
        except Exception as e:  # noqa: BLE001 - the row checks the class
            exc = e
        else:
            exc = None
    leaked = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    return exc, leaked


def test_sweep_is_big_enough():
    assert len(ROWS) >= 100
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("face, name, call, cls, words", ROWS, ids=IDS)
def test_funcgrad_raises_the_reference_class_with_a_clear_message(face, name, call, cls, words):
    exc, leaked = _run(call, funcgrad)
    assert not leaked, f"{name}: warnings escaped: {[str(w.message) for w in leaked]}"
    assert exc is not None, f"{name}: no exception"
    assert isinstance(exc, cls), f"{name}: {type(exc).__name__} ({exc}) is not a {cls.__name__}"
    msg = str(exc)
    for word in words:
        assert re.search(word, msg, re.IGNORECASE), f"{name}: message {msg!r} lacks {word!r}"


@pytest.mark.parametrize("face, name, call, cls, words", ROWS, ids=IDS)
def test_reference_raises_the_recorded_class(face, name, call, cls, words):
    if face == "jax":
        ref = pytest.importorskip("jax")
        import jax.numpy  # noqa: F401
    else:
        ref = pytest.importorskip("torch")
    exc, _ = _run(call, ref)
    assert isinstance(exc, cls), f"{name}: the reference raised {type(exc).__name__}: {exc}"
