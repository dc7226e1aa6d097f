"""The torch face mixes dtypes exactly where torch 2.13 (CPU) does.

Each row runs one operation on operands of different dtypes (input vs parameters, operand vs operand, self vs
source, result vs out=). Its expectation is torch's behaviour: the exception class and a fragment of torch's
message where torch refuses, the result dtype where torch promotes or casts. Without torch the rows are checked
against those expectations (and, for promoting rows with a `ref`, against the same computation with the operands
converted first); with torch installed, torch itself is run on the same row and must meet the same expectation,
and funcgrad's values must match torch's."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad

_ROWS: dict = {}


def row(name, fn, *, raises=None, match=None, dtype=None, ref=None, bf16=False, tol=None):
    """fn(T) runs the case on the module T (funcgrad or torch). raises/match: torch's exception class and a
    fragment of its message; dtype: the result's dtype name; ref(T): the same value computed another way;
    tol: the tolerance where a wide result has narrow intermediates (float32 gates in a float64 result)."""
    assert name not in _ROWS
    _ROWS[name] = dict(fn=fn, raises=raises, match=match, dtype=dtype, ref=ref, bf16=bf16, tol=tol)


def t(T, shape, dt="float32", seed=0):
    return T.tensor(np.random.RandomState(seed).standard_normal(shape), dtype=getattr(T, dt))


def mod(T, make):
    """make(T.nn) with its parameters set from a fixed seed (the same values in funcgrad and torch)."""
    T.manual_seed(0)
    m = make(T.nn)
    with T.no_grad():
        for i, (_, p) in enumerate(m.named_parameters()):
            p.copy_(T.tensor(np.random.RandomState(100 + i).standard_normal(tuple(p.shape)) * 0.5, dtype=p.dtype))
    return m


def F(T):
    return T.nn.functional


def idx(T, v, dt="int64"):
    return T.tensor(v, dtype=getattr(T, dt))


MM = "expected m1 and m2 to have the same dtype, but got: double != float"
MAT1 = "mat1 and mat2 must have the same dtype, but got Double and Float"
SELF_MAT2 = "self and mat2 must have the same dtype, but got Double and Float"
SCALAR_DF = "expected scalar type Double but found Float"
SCALAR_FD = "expected scalar type Float but found Double"
MIXED_SHARE = "mixed dtype (CPU): all inputs must share same datatype."
MIXED_PARAM = "mixed dtype (CPU): expect parameter to have scalar type of Float"
RNN_MSG = "RNN input dtype (torch.float64) does not match weight dtype (torch.float32)"
E = RuntimeError

# --- linear layers --------------------------------------------------------------------------------------
row("linear_x64_nobias", lambda T: F(T).linear(t(T, (2, 3), "float64"), t(T, (4, 3))), raises=E, match=MM)
row("linear_w64_nobias", lambda T: F(T).linear(t(T, (2, 3)), t(T, (4, 3), "float64")), raises=E,
    match="expected m1 and m2 to have the same dtype, but got: float != double")
row("linear_x64", lambda T: F(T).linear(t(T, (2, 3), "float64"), t(T, (4, 3)), t(T, (4,))), raises=E, match=MAT1)
row("linear_b64", lambda T: F(T).linear(t(T, (2, 3)), t(T, (4, 3)), t(T, (4,), "float64")), raises=E,
    match=SELF_MAT2)
row("linear_x64_b64", lambda T: F(T).linear(t(T, (2, 3), "float64"), t(T, (4, 3)), t(T, (4,), "float64")),
    raises=E, match=SELF_MAT2)
row("linear_1d", lambda T: F(T).linear(t(T, (3,), "float64"), t(T, (4, 3)), t(T, (4,))), raises=E, match=MAT1)
row("linear_4d", lambda T: F(T).linear(t(T, (6, 5, 2, 3), "float64"), t(T, (4, 3)), t(T, (4,))), raises=E,
    match=MAT1)
row("linear_x16", lambda T: F(T).linear(t(T, (2, 3), "float16"), t(T, (4, 3)), t(T, (4,))), raises=E,
    match="mat1 and mat2 must have the same dtype, but got Half and Float")
row("linear_xlong", lambda T: F(T).linear(T.ones(2, 3, dtype=T.int64), t(T, (4, 3))), raises=E,
    match="expected m1 and m2 to have the same dtype, but got: long int != float")
row("Linear", lambda T: mod(T, lambda nn: nn.Linear(3, 4))(t(T, (2, 5, 3), "float64")), raises=E, match=MAT1)
row("Linear_nobias", lambda T: mod(T, lambda nn: nn.Linear(3, 4, bias=False))(t(T, (2, 3), "float64")),
    raises=E, match=MM)
row("Linear_half_module", lambda T: mod(T, lambda nn: nn.Linear(3, 4)).half()(t(T, (2, 3))), raises=E,
    match="mat1 and mat2 must have the same dtype, but got Float and Half")
row("Linear_bf16_module", lambda T: mod(T, lambda nn: nn.Linear(3, 4)).to(T.bfloat16)(t(T, (2, 3))), raises=E,
    match="mat1 and mat2 must have the same dtype, but got Float and BFloat16", bf16=True)
row("Linear_double_module", lambda T: mod(T, lambda nn: nn.Linear(3, 4)).double()(t(T, (2, 3), "float64")),
    dtype="float64")
row("bilinear", lambda T: F(T).bilinear(t(T, (2, 3)), t(T, (2, 3), "float64"), t(T, (4, 3, 3))), raises=E,
    match="All tensors must have the same dtype, got input1: float, input2: double, weight: float")
row("Bilinear", lambda T: mod(T, lambda nn: nn.Bilinear(3, 3, 4))(t(T, (2, 3), "float64"), t(T, (2, 3), "float64")),
    raises=E, match="All tensors must have the same dtype, got input1: double, input2: double, weight: float, "
                    "bias: float")

# --- matrix products ------------------------------------------------------------------------------------
row("mm", lambda T: T.mm(t(T, (2, 3), "float64"), t(T, (3, 4))), raises=E, match=MM)
row("mm_half", lambda T: T.mm(t(T, (2, 3), "float16"), t(T, (3, 4))), raises=E,
    match="expected m1 and m2 to have the same dtype, but got: c10::Half != float")
row("mm_complex", lambda T: T.mm(t(T, (2, 3)), T.ones(3, 4, dtype=T.complex64)), raises=E,
    match="expected m1 and m2 to have the same dtype, but got: float != c10::complex<float>")
row("bmm", lambda T: T.bmm(t(T, (2, 2, 3), "float64"), t(T, (2, 3, 4))), raises=E, match=SCALAR_DF)
row("matmul_2d", lambda T: t(T, (2, 3), "float64") @ t(T, (3, 4)), raises=E, match=MM)
row("matmul_1d_1d", lambda T: T.matmul(t(T, (3,), "float64"), t(T, (3,))), raises=E,
    match="dot : expected both vectors to have same dtype, but found Double and Float")
row("matmul_2d_1d", lambda T: T.matmul(t(T, (2, 3), "float64"), t(T, (3,))), raises=E,
    match="addmv input tensors must have the same dtype, but got Float, Double, and Float")
row("matmul_3d_2d", lambda T: T.matmul(t(T, (5, 2, 3), "float64"), t(T, (3, 4))), raises=E, match=MM)
row("matmul_3d_3d", lambda T: T.matmul(t(T, (5, 2, 3)), t(T, (5, 3, 4), "float64")), raises=E, match=SCALAR_FD)
row("matmul_1d_3d", lambda T: T.matmul(t(T, (3,), "float64"), t(T, (5, 3, 4))), raises=E, match=SCALAR_DF)
row("addmm_mat1", lambda T: T.addmm(t(T, (2, 4)), t(T, (2, 3), "float64"), t(T, (3, 4))), raises=E, match=MAT1)
row("addmm_self", lambda T: T.addmm(t(T, (2, 4), "float64"), t(T, (2, 3)), t(T, (3, 4))), raises=E,
    match=SELF_MAT2)
row("addmm_self_beta0", lambda T: T.addmm(t(T, (4,), "float64"), t(T, (2, 3)), t(T, (3, 4)), beta=0), raises=E,
    match=SELF_MAT2)
row("addmm_self_long", lambda T: T.addmm(T.ones(2, 4, dtype=T.int64), t(T, (2, 3)), t(T, (3, 4))), raises=E,
    match="self and mat2 must have the same dtype, but got Long and Float")
row("addbmm", lambda T: T.addbmm(t(T, (2, 4), "float64"), t(T, (2, 2, 3)), t(T, (2, 3, 4))), raises=E,
    match=SELF_MAT2)
row("baddbmm_batch1", lambda T: T.baddbmm(t(T, (2, 2, 4)), t(T, (2, 2, 3), "float64"), t(T, (2, 3, 4))),
    raises=E, match="Input dtypes must be the same, got: input float, batch1: double, batch2: float")
row("baddbmm_self", lambda T: T.baddbmm(t(T, (2, 2, 4), "float64"), t(T, (2, 2, 3)), t(T, (2, 3, 4))),
    raises=E, match="Input dtypes must be the same, got: input double, batch1: float, batch2: float")
row("baddbmm_batch2", lambda T: T.baddbmm(t(T, (2, 2, 4)), t(T, (2, 2, 3)), t(T, (2, 3, 4), "float64")),
    raises=E, match=SCALAR_FD)
row("addmv", lambda T: T.addmv(t(T, (2,), "float64"), t(T, (2, 3)), t(T, (3,))), raises=E,
    match="addmv input tensors must have the same dtype, but got Double, Float, and Float")
row("mv", lambda T: T.mv(t(T, (2, 3)), t(T, (3,), "float64")), raises=E,
    match="addmv input tensors must have the same dtype, but got Double, Float, and Double")
row("dot", lambda T: T.dot(t(T, (3,)), t(T, (3,), "float64")), raises=E,
    match="dot : expected both vectors to have same dtype, but found Float and Double")
row("vdot", lambda T: T.vdot(t(T, (3,), "float64"), t(T, (3,))), raises=E,
    match="dot : expected both vectors to have same dtype, but found Double and Float")
row("inner", lambda T: T.inner(t(T, (2, 3)), t(T, (4, 3), "float64")), raises=E,
    match="both inputs should have same dtype")
row("inner_0d_promotes_as_mul", lambda T: T.inner(t(T, (3,)), t(T, (), "float64")), dtype="float32",
    ref=lambda T: t(T, (3,)) * t(T, (), "float64"))
row("tensordot", lambda T: T.tensordot(t(T, (2, 3)), t(T, (3, 4), "float64"), dims=1), raises=E,
    match="both inputs should have same dtype")
row("einsum_contraction", lambda T: T.einsum("ij,jk->ik", t(T, (2, 3)), t(T, (3, 4), "float64")), raises=E,
    match="expected scalar type")
row("einsum_dot", lambda T: T.einsum("i,i->", t(T, (3,), "float64"), t(T, (3,))), raises=E, match=SCALAR_DF)
row("einsum_outer_promotes", lambda T: T.einsum("i,j->ij", t(T, (2,)), t(T, (3,), "float64")), dtype="float64",
    ref=lambda T: T.einsum("i,j->ij", t(T, (2,)).double(), t(T, (3,), "float64")))
row("einsum_hadamard_promotes", lambda T: T.einsum("ij,ij->ij", t(T, (2, 3)), t(T, (2, 3), "float64")),
    dtype="float64", ref=lambda T: t(T, (2, 3)).double() * t(T, (2, 3), "float64"))
row("cross", lambda T: T.linalg.cross(t(T, (2, 3)), t(T, (2, 3), "float64")), raises=E, match=SCALAR_FD)
row("cdist", lambda T: T.cdist(t(T, (2, 3), "float64"), t(T, (4, 3))), raises=E, match=SCALAR_DF)
row("multi_dot", lambda T: T.linalg.multi_dot([t(T, (2, 3)), t(T, (3, 4)), t(T, (4, 2), "float64")]), raises=E,
    match="multi_dot(): all tensors must have be the same dtype but tensor 0 is float and tensor 2 double")
row("vecdot", lambda T: T.linalg.vecdot(t(T, (2, 3)), t(T, (2, 3), "float64")), raises=E,
    match="linalg.vecdot: Expected x and y to have the same dtype, but found x of type Float and y of type Double")
row("outer_promotes", lambda T: T.outer(t(T, (2,)), t(T, (3,), "float64")), dtype="float64",
    ref=lambda T: T.outer(t(T, (2,)).double(), t(T, (3,), "float64")))
row("addr_promotes", lambda T: T.addr(t(T, (2, 3)), t(T, (2,), "float64"), t(T, (3,))), dtype="float64")
row("kron_promotes", lambda T: T.kron(t(T, (2, 2)), t(T, (2, 2), "float64")), dtype="float64")

# --- normalisation --------------------------------------------------------------------------------------
row("layer_norm", lambda T: F(T).layer_norm(t(T, (2, 3), "float64"), (3,), t(T, (3,)), t(T, (3,))), raises=E,
    match=MIXED_SHARE)
row("layer_norm_bias_only", lambda T: F(T).layer_norm(t(T, (2, 3)), (3,), t(T, (3,)), t(T, (3,), "float64")),
    raises=E, match=SCALAR_FD)
row("layer_norm_f64_params", lambda T: F(T).layer_norm(t(T, (2, 3)), (3,), t(T, (3,), "float64"), None),
    raises=E, match=MIXED_PARAM)
row("LayerNorm", lambda T: mod(T, lambda nn: nn.LayerNorm(3))(t(T, (2, 3), "float64")), raises=E,
    match=MIXED_SHARE)
row("LayerNorm_half_module", lambda T: mod(T, lambda nn: nn.LayerNorm(3)).half()(t(T, (2, 3))), raises=E,
    match=MIXED_PARAM)
row("LayerNorm_noaffine", lambda T: T.nn.LayerNorm(3, elementwise_affine=False)(t(T, (2, 3), "float64")),
    dtype="float64")
row("LayerNorm_half_input", lambda T: mod(T, lambda nn: nn.LayerNorm(3))(t(T, (2, 3), "float16")),
    dtype="float16", ref=lambda T: mod(T, lambda nn: nn.LayerNorm(3))(t(T, (2, 3), "float16").float()).half())
row("layer_norm_all_half", lambda T: F(T).layer_norm(t(T, (2, 3), "float16"), (3,), t(T, (3,), "float16")),
    dtype="float16")
row("batch_norm_all_half", lambda T: F(T).batch_norm(t(T, (4, 3), "float16"), T.zeros(3, dtype=T.float16),
                                                     T.ones(3, dtype=T.float16), t(T, (3,), "float16"),
                                                     t(T, (3,), "float16"), training=True), dtype="float16")
row("group_norm_all_half", lambda T: F(T).group_norm(t(T, (2, 4, 3), "float16"), 2, t(T, (4,), "float16"),
                                                     t(T, (4,), "float16")), dtype="float16")
row("instance_norm_all_half", lambda T: F(T).instance_norm(t(T, (2, 3, 4), "float16"), None, None,
                                                           t(T, (3,), "float16"), t(T, (3,), "float16")),
    dtype="float16")
row("LayerNorm_bf16_input", lambda T: mod(T, lambda nn: nn.LayerNorm(3))(t(T, (2, 3), "bfloat16")),
    dtype="bfloat16", bf16=True)
row("batch_norm_train", lambda T: F(T).batch_norm(t(T, (4, 3), "float64"), T.zeros(3), T.ones(3), t(T, (3,)),
                                                  t(T, (3,)), training=True), raises=E, match=MIXED_SHARE)
row("batch_norm_eval", lambda T: F(T).batch_norm(t(T, (4, 3), "float64"), T.zeros(3), T.ones(3), t(T, (3,)),
                                                 t(T, (3,)), training=False), raises=E, match=MIXED_SHARE)
row("batch_norm_stats_only", lambda T: F(T).batch_norm(t(T, (4, 3), "float64"), T.zeros(3), T.ones(3),
                                                       t(T, (3,), "float64"), t(T, (3,), "float64")),
    raises=E, match=SCALAR_DF)
row("batch_norm_f64_stats_f32_input", lambda T: F(T).batch_norm(t(T, (4, 3)), T.zeros(3, dtype=T.float64),
                                                                T.ones(3, dtype=T.float64), training=True),
    raises=E, match=MIXED_PARAM)
row("batch_norm_half_input", lambda T: F(T).batch_norm(t(T, (4, 3), "float16"), T.zeros(3), T.ones(3),
                                                       t(T, (3,)), t(T, (3,)), training=True), dtype="float16",
    ref=lambda T: F(T).batch_norm(t(T, (4, 3), "float16").float(), T.zeros(3), T.ones(3), t(T, (3,)),
                                  t(T, (3,)), training=True).half())
row("batch_norm_half_input_eval", lambda T: F(T).batch_norm(t(T, (4, 3), "float16"), T.zeros(3), T.ones(3) * 2,
                                                            t(T, (3,)), t(T, (3,))), dtype="float16")
row("batch_norm_half_stats", lambda T: F(T).batch_norm(t(T, (4, 3), "float16"), T.zeros(3, dtype=T.float16),
                                                       T.ones(3, dtype=T.float16), t(T, (3,)), t(T, (3,)),
                                                       training=True), raises=E, match=MIXED_PARAM)
row("batch_norm_long", lambda T: F(T).batch_norm(T.ones(4, 3, dtype=T.int64), T.zeros(3), T.ones(3),
                                                 training=True), raises=NotImplementedError,
    match="\"batch_norm\" not implemented for 'Long'")
row("BatchNorm1d_train", lambda T: mod(T, lambda nn: nn.BatchNorm1d(3))(t(T, (4, 3), "float64")), raises=E,
    match=MIXED_SHARE)
row("BatchNorm2d_eval", lambda T: mod(T, lambda nn: nn.BatchNorm2d(3)).eval()(t(T, (2, 3, 2, 2), "float64")),
    raises=E, match=MIXED_SHARE)
row("BatchNorm3d_train", lambda T: mod(T, lambda nn: nn.BatchNorm3d(3))(t(T, (2, 3, 2, 2, 2), "float64")),
    raises=E, match=MIXED_SHARE)
row("BatchNorm2d_noaffine", lambda T: T.nn.BatchNorm2d(3, affine=False)(t(T, (2, 3, 2, 2), "float64")), raises=E,
    match=MIXED_SHARE)
row("BatchNorm2d_stateless", lambda T: T.nn.BatchNorm2d(3, affine=False, track_running_stats=False)(
    t(T, (2, 3, 2, 2), "float64")), dtype="float64")
row("BatchNorm1d_half_module", lambda T: mod(T, lambda nn: nn.BatchNorm1d(3)).half()(t(T, (4, 3))), raises=E,
    match=MIXED_PARAM)
row("BatchNorm1d_half_input", lambda T: mod(T, lambda nn: nn.BatchNorm1d(3))(t(T, (4, 3), "float16")),
    dtype="float16")
row("group_norm", lambda T: F(T).group_norm(t(T, (2, 4, 3), "float64"), 2, t(T, (4,)), t(T, (4,))), raises=E,
    match=MIXED_SHARE)
row("group_norm_bias", lambda T: F(T).group_norm(t(T, (2, 4, 3)), 2, t(T, (4,)), t(T, (4,), "float64")),
    raises=E, match=SCALAR_FD)
row("GroupNorm_half_module", lambda T: mod(T, lambda nn: nn.GroupNorm(1, 3)).half()(t(T, (2, 3, 2))), raises=E,
    match=MIXED_PARAM)
row("GroupNorm_half_input", lambda T: mod(T, lambda nn: nn.GroupNorm(1, 3))(t(T, (2, 3, 2), "float16")),
    dtype="float16")
row("instance_norm_affine", lambda T: F(T).instance_norm(t(T, (2, 3, 4), "float64"), None, None, t(T, (3,)),
                                                         t(T, (3,))), raises=E, match=MIXED_SHARE)
row("instance_norm_f32_stats", lambda T: F(T).instance_norm(t(T, (2, 3, 4), "float64"), T.zeros(3), T.ones(3)),
    dtype="float64")
row("InstanceNorm1d_affine", lambda T: mod(T, lambda nn: nn.InstanceNorm1d(3, affine=True))(
    t(T, (2, 3, 4), "float64")), raises=E, match=MIXED_SHARE)
row("rms_norm_keeps_input_dtype", lambda T: F(T).rms_norm(t(T, (2, 3)), (3,), t(T, (3,), "float64")),
    dtype="float32")
row("rms_norm_f64_input", lambda T: F(T).rms_norm(t(T, (2, 3), "float64"), (3,), t(T, (3,))), dtype="float64",
    ref=lambda T: F(T).rms_norm(t(T, (2, 3), "float64"), (3,), t(T, (3,)).double()))
row("RMSNorm_half_input", lambda T: mod(T, lambda nn: nn.RMSNorm(3))(t(T, (2, 3), "float16")), dtype="float16")
row("RMSNorm_half_module", lambda T: mod(T, lambda nn: nn.RMSNorm(3)).half()(t(T, (2, 3))), dtype="float32")
row("local_response_norm", lambda T: F(T).local_response_norm(t(T, (2, 3, 4), "float64"), 2), dtype="float64")

# --- attention and transformers ------------------------------------------------------------------------
row("sdpa_query", lambda T: F(T).scaled_dot_product_attention(t(T, (2, 3, 4), "float64"), t(T, (2, 3, 4)),
                                                               t(T, (2, 3, 4))), raises=E,
    match="Expected query, key, and value to have the same dtype, but got query.dtype: double key.dtype: float "
          "and value.dtype: float instead.")
row("sdpa_mask_f64", lambda T: F(T).scaled_dot_product_attention(t(T, (2, 3, 4)), t(T, (2, 3, 4)), t(T, (2, 3, 4)),
                                                                  attn_mask=t(T, (3, 3), "float64")), raises=E,
    match="Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: double")
row("sdpa_mask_f32_half_query", lambda T: F(T).scaled_dot_product_attention(
    t(T, (2, 3, 4), "float16"), t(T, (2, 3, 4), "float16"), t(T, (2, 3, 4), "float16"), attn_mask=t(T, (3, 3))),
    dtype="float16")
row("sdpa_mask_f32_f64_query", lambda T: F(T).scaled_dot_product_attention(
    t(T, (2, 3, 4), "float64"), t(T, (2, 3, 4), "float64"), t(T, (2, 3, 4), "float64"), attn_mask=t(T, (3, 3))),
    dtype="float64")
row("MultiheadAttention", lambda T: mod(T, lambda nn: nn.MultiheadAttention(4, 2))(
    t(T, (3, 2, 4), "float64"), t(T, (3, 2, 4), "float64"), t(T, (3, 2, 4), "float64"))[0], raises=E, match=MAT1)
row("MultiheadAttention_batch_first", lambda T: mod(T, lambda nn: nn.MultiheadAttention(4, 2, batch_first=True))(
    t(T, (2, 3, 4), "float64"), t(T, (2, 3, 4), "float64"), t(T, (2, 3, 4), "float64"))[0], raises=E,
    match="have the same dtype")
row("MultiheadAttention_mask", lambda T: mod(T, lambda nn: nn.MultiheadAttention(4, 2))(
    t(T, (3, 2, 4)), t(T, (3, 2, 4)), t(T, (3, 2, 4)), attn_mask=t(T, (3, 3), "float64"))[0], raises=E)
row("MultiheadAttention_double_f32_mask", lambda T: mod(T, lambda nn: nn.MultiheadAttention(4, 2)).double()(
    t(T, (3, 2, 4), "float64"), t(T, (3, 2, 4), "float64"), t(T, (3, 2, 4), "float64"), attn_mask=t(T, (3, 3)))[0],
    raises=E, match="Input dtypes must be the same, got: input float, batch1: double, batch2: double")
row("MultiheadAttention_half_module", lambda T: mod(T, lambda nn: nn.MultiheadAttention(4, 2)).half()(
    t(T, (3, 2, 4)), t(T, (3, 2, 4)), t(T, (3, 2, 4)))[0], raises=E,
    match="mat1 and mat2 must have the same dtype, but got Float and Half")
row("TransformerEncoderLayer", lambda T: mod(T, lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0))(
    t(T, (3, 2, 4), "float64")), raises=E, match=MAT1)
row("TransformerEncoderLayer_norm_first", lambda T: mod(
    T, lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, norm_first=True))(t(T, (3, 2, 4), "float64")),
    raises=E, match=MIXED_SHARE)
row("TransformerDecoderLayer", lambda T: mod(T, lambda nn: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0))(
    t(T, (3, 2, 4), "float64"), t(T, (3, 2, 4), "float64")), raises=E, match=MAT1)

# --- embeddings -----------------------------------------------------------------------------------------
_IDX = "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
row("Embedding_long", lambda T: mod(T, lambda nn: nn.Embedding(5, 3))(idx(T, [1, 2])), dtype="float32")
row("Embedding_int", lambda T: mod(T, lambda nn: nn.Embedding(5, 3))(idx(T, [1, 2], "int32")), dtype="float32",
    ref=lambda T: mod(T, lambda nn: nn.Embedding(5, 3))(idx(T, [1, 2])))
row("Embedding_short", lambda T: mod(T, lambda nn: nn.Embedding(5, 3))(idx(T, [1, 2], "int16")), raises=E,
    match=_IDX + "torch.ShortTensor instead (while checking arguments for embedding)")
row("Embedding_byte", lambda T: mod(T, lambda nn: nn.Embedding(5, 3))(idx(T, [1, 2], "uint8")), raises=E,
    match=_IDX + "torch.ByteTensor instead")
row("Embedding_float", lambda T: mod(T, lambda nn: nn.Embedding(5, 3))(T.tensor([1.0, 2.0])), raises=E,
    match=_IDX + "torch.FloatTensor instead")
row("Embedding_bool", lambda T: mod(T, lambda nn: nn.Embedding(5, 3))(T.tensor([True, False])), raises=E,
    match=_IDX + "CPUBoolType instead")
row("Embedding_half_module", lambda T: mod(T, lambda nn: nn.Embedding(5, 3)).half()(idx(T, [1, 2])),
    dtype="float16")
row("embedding_bag_float", lambda T: F(T).embedding_bag(T.tensor([1.0, 2.0, 0.0, 3.0]), t(T, (5, 3)),
                                                        idx(T, [0, 2])), raises=E,
    match=_IDX + "torch.FloatTensor instead (while checking arguments for embedding_bag)")
row("embedding_bag_int32", lambda T: F(T).embedding_bag(idx(T, [1, 2, 0, 3], "int32"), t(T, (5, 3)),
                                                        idx(T, [0, 2])), dtype="float32")
row("embedding_bag_psw", lambda T: F(T).embedding_bag(idx(T, [1, 2, 0, 3]), t(T, (5, 3)), idx(T, [0, 2]),
                                                      mode="sum", per_sample_weights=t(T, (4,), "float64")),
    raises=E, match="Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                    "'per_sample_weights'; but type torch.FloatTensor does not equal torch.DoubleTensor")

# --- convolutions ---------------------------------------------------------------------------------------
row("conv1d", lambda T: F(T).conv1d(t(T, (1, 2, 5), "float64"), t(T, (3, 2, 2))), raises=E, match=SCALAR_DF)
row("conv2d_weight", lambda T: F(T).conv2d(t(T, (1, 2, 5, 5)), t(T, (3, 2, 2, 2), "float64"), t(T, (3,))),
    raises=E, match=SCALAR_FD)
row("conv2d_bias", lambda T: F(T).conv2d(t(T, (1, 2, 5, 5)), t(T, (3, 2, 2, 2)), t(T, (3,), "float64")),
    raises=E, match="Input type (float) and bias type (double) should be the same")
row("conv3d", lambda T: F(T).conv3d(t(T, (1, 2, 3, 3, 3), "float64"), t(T, (3, 2, 2, 2, 2))), raises=E,
    match=SCALAR_DF)
row("Conv2d", lambda T: mod(T, lambda nn: nn.Conv2d(2, 3, 2))(t(T, (1, 2, 5, 5), "float64")), raises=E,
    match="Input type (double) and bias type (float) should be the same")
row("Conv2d_half_module", lambda T: mod(T, lambda nn: nn.Conv2d(2, 3, 2)).half()(t(T, (1, 2, 4, 4))), raises=E,
    match="Input type (float) and bias type (c10::Half) should be the same")
row("conv_transpose2d", lambda T: F(T).conv_transpose2d(t(T, (1, 2, 5, 5), "float64"), t(T, (2, 3, 2, 2))),
    raises=E, match=SCALAR_DF)
row("ConvTranspose1d", lambda T: mod(T, lambda nn: nn.ConvTranspose1d(2, 3, 2))(t(T, (1, 2, 5), "float64")),
    raises=E, match=SCALAR_DF)
row("conv_transpose2d_bias_cast", lambda T: F(T).conv_transpose2d(t(T, (1, 2, 5, 5)), t(T, (2, 3, 2, 2)),
                                                                  t(T, (3,), "float64")), dtype="float32",
    ref=lambda T: F(T).conv_transpose2d(t(T, (1, 2, 5, 5)), t(T, (2, 3, 2, 2)), t(T, (3,), "float64").float()))

# --- recurrent layers -----------------------------------------------------------------------------------
row("LSTM", lambda T: mod(T, lambda nn: nn.LSTM(3, 4))(t(T, (2, 1, 3), "float64"))[0], raises=ValueError,
    match=RNN_MSG)
row("GRU", lambda T: mod(T, lambda nn: nn.GRU(3, 4))(t(T, (2, 1, 3), "float64"))[0], raises=ValueError,
    match=RNN_MSG)
row("RNN", lambda T: mod(T, lambda nn: nn.RNN(3, 4))(t(T, (2, 1, 3), "float64"))[0], raises=ValueError,
    match=RNN_MSG)
row("GRU_hidden", lambda T: mod(T, lambda nn: nn.GRU(3, 4))(t(T, (2, 1, 3)), t(T, (1, 1, 4), "float64"))[0],
    raises=E, match=MAT1)
row("RNN_hidden", lambda T: mod(T, lambda nn: nn.RNN(3, 4))(t(T, (2, 1, 3)), t(T, (1, 1, 4), "float64"))[0],
    raises=E, match=MAT1)
row("LSTM_hidden", lambda T: mod(T, lambda nn: nn.LSTM(3, 4))(t(T, (2, 1, 3)), (t(T, (1, 1, 4), "float64"),
                                                                                t(T, (1, 1, 4))))[0], raises=E)
row("LSTM_half_module", lambda T: mod(T, lambda nn: nn.LSTM(3, 4)).half()(t(T, (2, 1, 3)))[0], raises=ValueError,
    match="RNN input dtype (torch.float32) does not match weight dtype (torch.float16)")
row("LSTMCell", lambda T: mod(T, lambda nn: nn.LSTMCell(3, 4))(t(T, (2, 3), "float64"))[0], raises=E, match=MAT1)
row("GRUCell", lambda T: mod(T, lambda nn: nn.GRUCell(3, 4))(t(T, (2, 3), "float64")), raises=E, match=MAT1)
row("RNNCell", lambda T: mod(T, lambda nn: nn.RNNCell(3, 4))(t(T, (2, 3), "float64")), raises=E, match=MAT1)
row("RNNCell_nobias", lambda T: mod(T, lambda nn: nn.RNNCell(3, 4, bias=False))(t(T, (2, 3), "float64")),
    raises=E, match=MM)
row("RNNCell_hidden", lambda T: mod(T, lambda nn: nn.RNNCell(3, 4))(t(T, (2, 3)), t(T, (2, 4), "float64")),
    raises=E, match=MAT1)
row("LSTMCell_cell_state_promotes", lambda T: mod(T, lambda nn: nn.LSTMCell(3, 4))(
    t(T, (2, 3)), (t(T, (2, 4)), t(T, (2, 4), "float64")))[0], dtype="float64", tol=1e-6)

# --- prelu ----------------------------------------------------------------------------------------------
row("prelu", lambda T: F(T).prelu(t(T, (2, 3), "float64"), t(T, (1,))), raises=E,
    match="prelu: Type promoting not supported. Got Double and Float")
row("PReLU_half_module", lambda T: mod(T, lambda nn: nn.PReLU()).half()(t(T, (2, 3))), raises=E,
    match="prelu: Type promoting not supported. Got Float and Half")

# --- losses: some promote, some raise, some keep one operand's dtype ------------------------------------
row("cross_entropy_promotes", lambda T: F(T).cross_entropy(t(T, (2, 3), "float64"), idx(T, [0, 2])),
    dtype="float64")
row("cross_entropy_weight", lambda T: F(T).cross_entropy(t(T, (2, 3), "float64"), idx(T, [0, 2]),
                                                         weight=t(T, (3,))), raises=E, match=SCALAR_DF)
row("cross_entropy_weight_smoothing", lambda T: F(T).cross_entropy(t(T, (2, 3)), idx(T, [0, 2]),
                                                                   weight=t(T, (3,), "float64"), label_smoothing=0.1),
    raises=E, match=SCALAR_FD)
row("cross_entropy_probs_promote", lambda T: F(T).cross_entropy(t(T, (2, 3)), t(T, (2, 3), "float64").softmax(-1),
                                                                weight=t(T, (3,), "float64")), dtype="float64",
    tol=1e-6, ref=lambda T: -(F(T).log_softmax(t(T, (2, 3)), 1).double() * t(T, (2, 3), "float64").softmax(-1)
                    * t(T, (3,), "float64")).sum(1).mean())
row("CrossEntropyLoss_weight", lambda T: T.nn.CrossEntropyLoss(weight=t(T, (3,)))(t(T, (2, 3), "float64"),
                                                                                  idx(T, [0, 2])),
    raises=E, match=SCALAR_DF)
row("nll_loss_weight", lambda T: F(T).nll_loss(t(T, (2, 3)), idx(T, [0, 2]), weight=t(T, (3,), "float64")),
    raises=E, match=SCALAR_FD)
row("nll_loss_2d_weight", lambda T: F(T).nll_loss(t(T, (2, 3, 2, 2), "float64"),
                                                  idx(T, [[[0, 2], [1, 1]], [[0, 0], [2, 2]]]), weight=t(T, (3,))),
    raises=E, match=SCALAR_DF)
row("nll_loss_int_target", lambda T: F(T).nll_loss(t(T, (2, 3)), idx(T, [0, 2], "int32")), raises=E,
    match="expected target dtype to be Long or Byte, but got Int")
row("multi_margin_loss_weight", lambda T: F(T).multi_margin_loss(t(T, (2, 3), "float64"), idx(T, [0, 2]),
                                                                 weight=t(T, (3,))), raises=E, match=SCALAR_DF)
row("mse_loss_promotes", lambda T: F(T).mse_loss(t(T, (2, 3)), t(T, (2, 3), "float64", 1)), dtype="float64",
    ref=lambda T: F(T).mse_loss(t(T, (2, 3)).double(), t(T, (2, 3), "float64", 1)))
row("l1_loss_promotes", lambda T: F(T).l1_loss(t(T, (2, 3), "float64"), t(T, (2, 3), seed=1)), dtype="float64")
row("bce_target", lambda T: F(T).binary_cross_entropy(t(T, (2, 3)).sigmoid(), t(T, (2, 3), "float64").sigmoid()),
    raises=E, match="Found dtype Double but expected Float")
row("bce_half_input", lambda T: F(T).binary_cross_entropy(t(T, (2, 3), "float16").sigmoid(),
                                                          t(T, (2, 3)).sigmoid()), raises=E,
    match="Found dtype Float but expected Half")
row("bce_weight_keeps_input_dtype", lambda T: F(T).binary_cross_entropy(
    t(T, (2, 3)).sigmoid(), t(T, (2, 3), seed=1).sigmoid(), weight=t(T, (3,), "float64").abs()), dtype="float32")
row("bce_logits_keeps_target_dtype", lambda T: F(T).binary_cross_entropy_with_logits(
    t(T, (2, 3), "float64"), t(T, (2, 3), seed=1).sigmoid(), reduction="none"), dtype="float32",
    ref=lambda T: F(T).binary_cross_entropy_with_logits(t(T, (2, 3), "float64"),
                                                        t(T, (2, 3), seed=1).sigmoid().double(),
                                                        reduction="none").float())
row("bce_logits_f64_target", lambda T: F(T).binary_cross_entropy_with_logits(
    t(T, (2, 3)), t(T, (2, 3), "float64", 1).sigmoid()), dtype="float64", tol=1e-6)
row("bce_logits_half_target", lambda T: F(T).binary_cross_entropy_with_logits(
    t(T, (2, 3)), t(T, (2, 3), "float16", 1).sigmoid(), reduction="none"), dtype="float16")
row("bce_logits_pos_weight", lambda T: F(T).binary_cross_entropy_with_logits(
    t(T, (2, 3), "float64"), t(T, (2, 3), seed=1).sigmoid(), pos_weight=t(T, (3,), "float64").abs()),
    dtype="float32")
row("bce_logits_long_target", lambda T: F(T).binary_cross_entropy_with_logits(t(T, (2, 3)),
                                                                              T.ones(2, 3, dtype=T.int64)),
    raises=E, match="result type Float can't be cast to the desired output type Long")
row("BCEWithLogitsLoss_weight", lambda T: T.nn.BCEWithLogitsLoss(weight=t(T, (3,), "float64"))(
    t(T, (2, 3)), t(T, (2, 3), seed=1).sigmoid()), dtype="float32")
row("kl_div_promotes", lambda T: F(T).kl_div(t(T, (2, 3)), t(T, (2, 3), "float64").softmax(-1),
                                             reduction="batchmean"), dtype="float64")
row("soft_margin_keeps_input_dtype", lambda T: F(T).soft_margin_loss(t(T, (2, 3)), t(T, (2, 3), "float64", 1),
                                                                     reduction="none"), dtype="float32",
    ref=lambda T: F(T).soft_margin_loss(t(T, (2, 3)).double(), t(T, (2, 3), "float64", 1),
                                        reduction="none").float())
row("poisson_nll_promotes", lambda T: F(T).poisson_nll_loss(t(T, (2, 3)), t(T, (2, 3), "float64").abs()),
    dtype="float64")
row("margin_ranking_promotes", lambda T: F(T).margin_ranking_loss(t(T, (3,)), t(T, (3,), seed=1),
                                                                  t(T, (3,), "float64", 2).sign()), dtype="float64")
row("ctc_loss_f64", lambda T: F(T).ctc_loss(t(T, (5, 2, 4), "float64").log_softmax(-1), idx(T, [[1, 2], [1, 3]]),
                                            idx(T, [5, 5]), idx(T, [2, 2])), dtype="float64")
row("ctc_loss_int32_lengths", lambda T: F(T).ctc_loss(t(T, (5, 2, 4)).log_softmax(-1), idx(T, [[1, 2], [1, 3]]),
                                                      idx(T, [5, 5], "int32"), idx(T, [2, 2], "int32")),
    dtype="float32")
row("ctc_loss_float_lengths", lambda T: F(T).ctc_loss(t(T, (5, 2, 4)).log_softmax(-1), idx(T, [[1, 2], [1, 3]]),
                                                      T.tensor([5.0, 5.0]), idx(T, [2, 2])), raises=E,
    match="input_lengths must be integral")
row("ctc_loss_half", lambda T: F(T).ctc_loss(t(T, (5, 2, 4), "float16").log_softmax(-1), idx(T, [[1, 2], [1, 3]]),
                                             idx(T, [5, 5]), idx(T, [2, 2])), raises=NotImplementedError,
    match="\"ctc_loss_cpu\" not implemented for 'Half'")
row("grid_sample", lambda T: F(T).grid_sample(t(T, (1, 1, 3, 3), "float64"), t(T, (1, 2, 2, 2)) * 0.5,
                                              align_corners=False), raises=E, match=SCALAR_DF)

# --- elementwise ops promote; in-place ops cast the result to self's dtype where it can be cast ----------
row("add_promotes", lambda T: t(T, (2, 3), "float64") + t(T, (2, 3)), dtype="float64",
    ref=lambda T: t(T, (2, 3), "float64") + t(T, (2, 3)).double())
row("where_promotes", lambda T: T.where(t(T, (2, 3)) > 0, t(T, (2, 3), "float64", 1), t(T, (2, 3), seed=2)),
    dtype="float64")
row("cat_promotes", lambda T: T.cat([t(T, (2, 3), "float64"), t(T, (2, 3))]), dtype="float64")
row("stack_promotes", lambda T: T.stack([t(T, (2,), "float16"), t(T, (2,))]), dtype="float32")
row("copy_casts", lambda T: t(T, (3, 2)).copy_(t(T, (3, 2), "float64", 1)), dtype="float32",
    ref=lambda T: t(T, (3, 2), "float64", 1).float())
row("copy_float_into_long", lambda T: T.zeros(3, 2, dtype=T.int64).copy_(t(T, (3, 2), "float64") * 3),
    dtype="int64")
row("add_inplace_narrower_self", lambda T: t(T, (2, 3)).add_(t(T, (2, 3), "float64", 1)), dtype="float32",
    ref=lambda T: (t(T, (2, 3)).double() + t(T, (2, 3), "float64", 1)).float())
row("add_inplace_int_self", lambda T: T.zeros(2, 3, dtype=T.int64).add_(t(T, (2, 3))), raises=E,
    match="result type Float can't be cast to the desired output type Long")
row("mul_inplace_int_number", lambda T: T.zeros(2, 3, dtype=T.int64).mul_(1.5), raises=E,
    match="result type Float can't be cast to the desired output type Long")
row("iadd_int_self", lambda T: T.zeros(2, 3, dtype=T.int64).__iadd__(t(T, (2, 3))), raises=E,
    match="result type Float can't be cast to the desired output type Long")
row("add_inplace_bool_self", lambda T: T.zeros(2, 3, dtype=T.bool).add_(T.ones(2, 3, dtype=T.int64)), raises=E,
    match="result type Long can't be cast to the desired output type Bool")
row("add_inplace_complex_other", lambda T: t(T, (2, 3)).add_(T.ones(2, 3, dtype=T.complex64)), raises=E,
    match="result type ComplexFloat can't be cast to the desired output type Float")
row("lerp_end", lambda T: T.lerp(t(T, (3,)), t(T, (3,), "float64"), 0.5), raises=E,
    match="expected dtype float for `end` but got dtype double")
row("lerp_inplace_weight", lambda T: t(T, (3,)).lerp_(t(T, (3,), seed=1), t(T, (3,), "float64")), raises=E,
    match="expected dtype float for `weight` but got dtype double")
row("lerp_0d_weight", lambda T: T.lerp(t(T, (3,)), t(T, (3,), seed=1), T.tensor(0.25, dtype=T.float64)),
    dtype="float32", ref=lambda T: T.lerp(t(T, (3,)), t(T, (3,), seed=1), 0.25))

# --- index / scatter family: the source must have self's dtype --------------------------------------------
_SCATTER = "scatter(): Expected self.dtype to be equal to src.dtype"
row("index_add_", lambda T: t(T, (3, 2)).index_add_(0, idx(T, [0, 2]), t(T, (2, 2), "float64")), raises=E,
    match="index_add_(): self (Float) and source (Double) must have the same scalar type")
row("index_add", lambda T: T.index_add(T.zeros(3, 2, dtype=T.int64), 0, idx(T, [0, 2]), t(T, (2, 2))), raises=E,
    match="index_add_(): self (Long) and source (Float) must have the same scalar type")
row("index_copy_", lambda T: t(T, (3, 2)).index_copy_(0, idx(T, [0, 2]), t(T, (2, 2), "float16")), raises=E,
    match="index_copy_(): self and source expected to have the same dtype, but got (self) Float and (source) Half")
row("scatter_", lambda T: t(T, (3, 2)).scatter_(0, idx(T, [[0, 1], [2, 0]]), t(T, (2, 2), "float64")),
    raises=E, match=_SCATTER)
row("scatter_add", lambda T: T.scatter_add(t(T, (3, 2)), 0, idx(T, [[0, 1], [2, 0]]), t(T, (2, 2), "float64")),
    raises=E, match=_SCATTER)
row("scatter_reduce_", lambda T: t(T, (3, 2)).scatter_reduce_(0, idx(T, [[0, 1], [2, 0]]), t(T, (2, 2), "float64"),
                                                               "amax"), raises=E, match=_SCATTER)
row("scatter_number_casts", lambda T: t(T, (3, 2)).scatter_(0, idx(T, [[0, 1], [2, 0]]), 1.5), dtype="float32")
row("masked_scatter_", lambda T: t(T, (3, 2)).masked_scatter_(t(T, (3, 2)) > 0, t(T, (3, 2), "float64")),
    raises=E, match="masked_scatter: expected self and source to have same dtypes but got")
row("index_put_", lambda T: t(T, (3, 2)).index_put_((idx(T, [0, 2]),), t(T, (2, 2), "float64")), raises=E,
    match="Index put requires the source and destination dtypes match, got Float for the destination and Double "
          "for the source.")
row("setitem_advanced", lambda T: t(T, (3, 2)).__setitem__(idx(T, [0, 2]), t(T, (2, 2), "float64")), raises=E,
    match="Index put requires the source and destination dtypes match")
row("put_", lambda T: t(T, (3, 2)).put_(idx(T, [0, 2]), t(T, (2,), "float64")), raises=E,
    match="put_(): self and source expected to have the same dtype, but got self.dtype = Float and source.dtype "
          "= Double")
row("index_fill_0d_casts", lambda T: t(T, (3, 2)).index_fill_(0, idx(T, [0, 2]), T.tensor(1.5, dtype=T.float64)),
    dtype="float32")
row("masked_fill_0d_casts", lambda T: t(T, (3, 2)).masked_fill_(t(T, (3, 2)) > 0, T.tensor(1.5, dtype=T.float64)),
    dtype="float32")

# --- out= ----------------------------------------------------------------------------------------------
row("add_out_long", lambda T: T.add(t(T, (2, 3)), t(T, (2, 3)), out=T.empty(2, 3, dtype=T.int64)), raises=E,
    match="result type Float can't be cast to the desired output type Long")
row("exp_out_long", lambda T: T.exp(t(T, (2, 3)), out=T.empty(2, 3, dtype=T.int64)), raises=E,
    match="result type Float can't be cast to the desired output type Long")
row("mul_out_bool", lambda T: T.mul(t(T, (2, 3)), t(T, (2, 3)), out=T.empty(2, 3, dtype=T.bool)), raises=E,
    match="result type Float can't be cast to the desired output type Bool")
row("add_out_narrower_float", lambda T: T.add(t(T, (2, 3), "float64"), t(T, (2, 3), "float64"),
                                              out=T.empty(2, 3)), dtype="float32",
    ref=lambda T: (t(T, (2, 3), "float64") * 2).float())
row("add_out_wider_float", lambda T: T.add(t(T, (2, 3)), t(T, (2, 3)), out=T.empty(2, 3, dtype=T.float64)),
    dtype="float64")
row("sum_out_long_casts", lambda T: T.sum(t(T, (2, 3)) * 4, 0, out=T.empty(3, dtype=T.int64)), dtype="int64")
row("cat_out_long", lambda T: T.cat([t(T, (2,), "float16"), t(T, (2,))], out=T.empty(4, dtype=T.int64)),
    raises=TypeError, match="torch.cat(): input types can't be cast to the desired output type Long")
row("mm_out", lambda T: T.mm(t(T, (2, 3)), t(T, (3, 4)), out=T.empty(2, 4, dtype=T.float64)), raises=E,
    match="Expected out tensor to have dtype float, but got double instead")
row("bmm_out", lambda T: T.bmm(t(T, (2, 2, 3)), t(T, (2, 3, 4)), out=T.empty(2, 2, 4, dtype=T.float16)),
    raises=E, match="Expected out tensor to have dtype float, but got c10::Half instead")
row("matmul_out", lambda T: T.matmul(t(T, (5, 2, 3)), t(T, (5, 3, 4)), out=T.empty(5, 2, 4, dtype=T.float64)),
    raises=E, match="Expected out tensor to have dtype float, but got double instead")
row("addmm_out", lambda T: T.addmm(t(T, (2, 4)), t(T, (2, 3)), t(T, (3, 4)), out=T.empty(2, 4, dtype=T.float64)),
    raises=E, match="Expected out tensor to have dtype float, but got double instead")
row("dot_out", lambda T: T.dot(t(T, (3,)), t(T, (3,)), out=T.empty((), dtype=T.float64)), raises=E,
    match="result dtype Double does not match input dtype Float")
row("inner_out", lambda T: T.inner(t(T, (3,)), t(T, (3,)), out=T.empty((), dtype=T.float64)), raises=E,
    match="tensordot: Expected the output tensor to have dtype Float, but got an output tensor with dtype Double")


# --- the checks ----------------------------------------------------------------------------------------
def _run(T, r):
    if r["bf16"] and getattr(T, "bfloat16", None) is None:
        pytest.skip("no bfloat16 (ml_dtypes) here")
    try:
        return r["fn"](T), None
    except Exception as e:  # noqa: BLE001 - the row says which class it wants
        return None, e


def _dtype_name(x) -> str:
    return str(x.dtype).split(".")[-1]


def _meets(T, r, out, err):
    """The row's expectation (torch's behaviour) holds for T's result."""
    if r["raises"] is not None:
        assert err is not None, f"expected {r['raises'].__name__}, got a result of dtype {_dtype_name(out)}"
        assert type(err) is r["raises"], f"expected {r['raises'].__name__}, got {type(err).__name__}: {err}"
        if r["match"] is not None:
            assert r["match"] in str(err), f"{r['match']!r} not in {str(err)!r}"
    else:
        if err is not None:
            raise err
        assert _dtype_name(out) == r["dtype"]


_TOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-12}


def _close(a, b, dtype, tol=None):
    tol = _TOL.get(dtype, 0) if tol is None else tol
    np.testing.assert_allclose(np.asarray(a.detach().float().numpy() if dtype == "bfloat16" else a.detach().numpy(),
                                          np.float64),
                               np.asarray(b.detach().float().numpy() if dtype == "bfloat16" else b.detach().numpy(),
                                          np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(_ROWS))
def test_funcgrad_follows_torchs_dtype_rule(name):
    r = _ROWS[name]
    out, err = _run(funcgrad, r)
    _meets(funcgrad, r, out, err)
    if r["ref"] is not None:
        _close(out, r["ref"](funcgrad), r["dtype"], r["tol"])


@pytest.mark.parametrize("name", list(_ROWS))
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    r = _ROWS[name]
    t_out, t_err = _run(torch, r)
    _meets(torch, r, t_out, t_err)  # the row's expectation is torch's behaviour
    out, err = _run(funcgrad, r)
    if t_err is not None:
        assert type(err) is type(t_err), f"torch raised {type(t_err).__name__}: {t_err}; funcgrad: {err!r}"
        return
    assert err is None, f"torch returned {t_out.dtype}, funcgrad raised {err!r}"
    assert _dtype_name(out) == _dtype_name(t_out) and tuple(out.shape) == tuple(t_out.shape)
    _close(out, funcgrad.tensor(t_out.detach().numpy() if r["dtype"] != "bfloat16" else t_out.detach().float().numpy(),
                                dtype=out.dtype), r["dtype"], r["tol"])


def test_every_message_row_names_torchs_text():
    """Rows that raise carry torch's message (or a fragment of it), so funcgrad's text is checked too."""
    missing = [n for n, r in _ROWS.items() if r["raises"] is not None and r["match"] is None]
    assert set(missing) <= {"MultiheadAttention_mask", "LSTM_hidden"}, missing
