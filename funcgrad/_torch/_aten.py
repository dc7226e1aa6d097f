"""The one table of ATen operators funcgrad serves: `torch.ops.aten.<op>.<overload>` (ops_namespace.py) and the
operators of torch.export's .pt2 files (funcgrad/export/_aten.py) both read it.

Each line of `_SCHEMAS` is one overload's schema exactly as torch 2.13 prints it (`str(torch.ops.aten.<op>.<ov>.
_schema)`: argument names, order, kinds, defaults); the funcgrad function that runs it is the adapter in `_IMPLS`
for "op.overload", else for "op", else `torch.<op>` / `torch.nn.functional.<op>` / `Tensor.<op>`, which take
ATen's arguments in ATen's order. `overload_fn` wraps it so the overload is called as torch's is: positional
arguments in schema order, any of them by name, keyword-only ones by name. tools/aten_coverage.py checks every line
against torch and writes docs/aten-coverage.md. One overload per line (keeps merges clean).
"""
from __future__ import annotations

import ast
import functools
from typing import Callable

from .. import _torch as _T  # (the package: torch's functions; .top imports export, which reads this table)
from . import linalg as _linalg
from ..nn import functional as F

__all__ = ["Schema", "table", "schema", "overload_fn", "qualnames"]

_SCHEMAS = """
aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
aten::_local_scalar_dense(Tensor self) -> Scalar
aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
aten::_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)
aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor
aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor
aten::abs(Tensor self) -> Tensor
aten::absolute(Tensor self) -> Tensor
aten::acos(Tensor self) -> Tensor
aten::acosh(Tensor self) -> Tensor
aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor
aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor
aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)
aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)
aten::adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)
aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)
aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::alias(Tensor(a) self) -> Tensor(a)
aten::all(Tensor self) -> Tensor
aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
aten::all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor
aten::allclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool equal_nan=False) -> bool
aten::alpha_dropout(Tensor input, float p, bool train) -> Tensor
aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
aten::aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)
aten::angle(Tensor self) -> Tensor
aten::any(Tensor self) -> Tensor
aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
aten::any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor
aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::arccos(Tensor self) -> Tensor
aten::arccosh(Tensor self) -> Tensor
aten::arcsin(Tensor self) -> Tensor
aten::arcsinh(Tensor self) -> Tensor
aten::arctan(Tensor self) -> Tensor
aten::arctan2(Tensor self, Tensor other) -> Tensor
aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor
aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
aten::asin(Tensor self) -> Tensor
aten::asinh(Tensor self) -> Tensor
aten::atan(Tensor self) -> Tensor
aten::atan2(Tensor self, Tensor other) -> Tensor
aten::atanh(Tensor self) -> Tensor
aten::atleast_1d(Tensor self) -> Tensor
aten::atleast_2d(Tensor self) -> Tensor
aten::atleast_3d(Tensor self) -> Tensor
aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, bool count_include_pad=True) -> Tensor
aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor
aten::bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor
aten::bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor
aten::binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor
aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor
aten::bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor
aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor
aten::bitwise_and.Scalar(Tensor self, Scalar other) -> Tensor
aten::bitwise_and.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
aten::bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor
aten::bitwise_not(Tensor self) -> Tensor
aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor
aten::bitwise_or.Scalar(Tensor self, Scalar other) -> Tensor
aten::bitwise_or.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
aten::bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor
aten::bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor
aten::bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor
aten::bitwise_xor.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
aten::block_diag(Tensor[] tensors) -> Tensor
aten::bmm(Tensor self, Tensor mat2) -> Tensor
aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]
aten::broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)
aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor
aten::cartesian_prod(Tensor[] tensors) -> Tensor
aten::cat(Tensor[] tensors, int dim=0) -> Tensor
aten::cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor
aten::ceil(Tensor self) -> Tensor
aten::celu(Tensor self, Scalar alpha=1.) -> Tensor
aten::channel_shuffle(Tensor self, SymInt groups) -> Tensor
aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]
aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor
aten::clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)
aten::clamp_max(Tensor self, Scalar max) -> Tensor
aten::clamp_min(Tensor self, Scalar min) -> Tensor
aten::clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
aten::column_stack(Tensor[] tensors) -> Tensor
aten::concat(Tensor[] tensors, int dim=0) -> Tensor
aten::concatenate(Tensor[] tensors, int dim=0) -> Tensor
aten::conj(Tensor(a) self) -> Tensor(a)
aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor
aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)
aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor
aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], str padding="valid", SymInt[1] dilation=[1], SymInt groups=1) -> Tensor
aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor
aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], str padding="valid", SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor
aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor
aten::conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], str padding="valid", SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor
aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] output_padding=[0], SymInt groups=1, SymInt[1] dilation=[1]) -> Tensor
aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor
aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, SymInt[3] dilation=[1, 1, 1]) -> Tensor
aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor
aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor
aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
aten::copysign.Tensor(Tensor self, Tensor other) -> Tensor
aten::corrcoef(Tensor self) -> Tensor
aten::cos(Tensor self) -> Tensor
aten::cosh(Tensor self) -> Tensor
aten::cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor
aten::cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor
aten::count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor
aten::cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor
aten::cross(Tensor self, Tensor other, int? dim=None) -> Tensor
aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor
aten::cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)
aten::cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)
aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
aten::cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
aten::deg2rad(Tensor self) -> Tensor
aten::detach(Tensor(a) self) -> Tensor(a)
aten::diag(Tensor self, int diagonal=0) -> Tensor
aten::diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor
aten::diagflat(Tensor self, int offset=0) -> Tensor
aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)
aten::diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor
aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor
aten::digamma(Tensor self) -> Tensor
aten::dist(Tensor self, Tensor other, Scalar p=2) -> Tensor
aten::div.Tensor(Tensor self, Tensor other) -> Tensor
aten::div.Scalar(Tensor self, Scalar other) -> Tensor
aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor
aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor
aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
aten::div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)
aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
aten::div_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)
aten::divide.Tensor(Tensor self, Tensor other) -> Tensor
aten::dot(Tensor self, Tensor tensor) -> Tensor
aten::dropout(Tensor input, float p, bool train) -> Tensor
aten::dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
aten::dstack(Tensor[] tensors) -> Tensor
aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
aten::element_size(Tensor self) -> int
aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor
aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor
aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::eq.Tensor(Tensor self, Tensor other) -> Tensor
aten::eq.Scalar(Tensor self, Scalar other) -> Tensor
aten::equal(Tensor self, Tensor other) -> bool
aten::erf(Tensor self) -> Tensor
aten::erfc(Tensor self) -> Tensor
aten::erfinv(Tensor self) -> Tensor
aten::exp(Tensor self) -> Tensor
aten::exp2(Tensor self) -> Tensor
aten::exp_(Tensor(a!) self) -> Tensor(a!)
aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)
aten::expm1(Tensor self) -> Tensor
aten::eye(SymInt n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::eye.m(SymInt n, SymInt m, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::fill.Scalar(Tensor self, Scalar value) -> Tensor
aten::fill.Tensor(Tensor self, Tensor value) -> Tensor
aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)
aten::fix(Tensor self) -> Tensor
aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)
aten::flip(Tensor self, int[] dims) -> Tensor
aten::fliplr(Tensor self) -> Tensor
aten::flipud(Tensor self) -> Tensor
aten::float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
aten::float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
aten::floor(Tensor self) -> Tensor
aten::floor_divide(Tensor self, Tensor other) -> Tensor
aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor
aten::fmax(Tensor self, Tensor other) -> Tensor
aten::fmin(Tensor self, Tensor other) -> Tensor
aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor
aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor
aten::frac(Tensor self) -> Tensor
aten::frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)
aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
aten::gcd(Tensor self, Tensor other) -> Tensor
aten::ge.Tensor(Tensor self, Tensor other) -> Tensor
aten::ge.Scalar(Tensor self, Scalar other) -> Tensor
aten::gelu(Tensor self, *, str approximate="none") -> Tensor
aten::ger(Tensor self, Tensor vec2) -> Tensor
aten::glu(Tensor self, int dim=-1) -> Tensor
aten::greater.Tensor(Tensor self, Tensor other) -> Tensor
aten::greater_equal.Tensor(Tensor self, Tensor other) -> Tensor
aten::grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor
aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor
aten::gt.Tensor(Tensor self, Tensor other) -> Tensor
aten::gt.Scalar(Tensor self, Scalar other) -> Tensor
aten::hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor
aten::hardsigmoid(Tensor self) -> Tensor
aten::hardswish(Tensor self) -> Tensor
aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)
aten::heaviside(Tensor self, Tensor values) -> Tensor
aten::hinge_embedding_loss(Tensor self, Tensor target, float margin=1., int reduction=1) -> Tensor
aten::histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor
aten::hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
aten::hstack(Tensor[] tensors) -> Tensor
aten::huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor
aten::hypot(Tensor self, Tensor other) -> Tensor
aten::i0(Tensor self) -> Tensor
aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor
aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor
aten::index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor
aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)
aten::index_select(Tensor self, int dim, Tensor index) -> Tensor
aten::inner(Tensor self, Tensor other) -> Tensor
aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor
aten::isclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool equal_nan=False) -> Tensor
aten::isfinite(Tensor self) -> Tensor
aten::isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor
aten::isinf(Tensor self) -> Tensor
aten::isnan(Tensor self) -> Tensor
aten::isneginf(Tensor self) -> Tensor
aten::isposinf(Tensor self) -> Tensor
aten::kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor
aten::kron(Tensor self, Tensor other) -> Tensor
aten::kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor
aten::lcm(Tensor self, Tensor other) -> Tensor
aten::ldexp.Tensor(Tensor self, Tensor other) -> Tensor
aten::le.Tensor(Tensor self, Tensor other) -> Tensor
aten::le.Scalar(Tensor self, Scalar other) -> Tensor
aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor
aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor
aten::less.Tensor(Tensor self, Tensor other) -> Tensor
aten::less_equal.Tensor(Tensor self, Tensor other) -> Tensor
aten::lgamma(Tensor self) -> Tensor
aten::lift_fresh_copy(Tensor self) -> Tensor
aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
aten::linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::log(Tensor self) -> Tensor
aten::log10(Tensor self) -> Tensor
aten::log1p(Tensor self) -> Tensor
aten::log2(Tensor self) -> Tensor
aten::log_sigmoid(Tensor self) -> Tensor
aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
aten::logaddexp(Tensor self, Tensor other) -> Tensor
aten::logaddexp2(Tensor self, Tensor other) -> Tensor
aten::logcumsumexp(Tensor self, int dim) -> Tensor
aten::logical_and(Tensor self, Tensor other) -> Tensor
aten::logical_not(Tensor self) -> Tensor
aten::logical_or(Tensor self, Tensor other) -> Tensor
aten::logical_xor(Tensor self, Tensor other) -> Tensor
aten::logit(Tensor self, float? eps=None) -> Tensor
aten::logspace(Scalar start, Scalar end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
aten::lt.Tensor(Tensor self, Tensor other) -> Tensor
aten::lt.Scalar(Tensor self, Scalar other) -> Tensor
aten::margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor
aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor
aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)
aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor
aten::masked_select(Tensor self, Tensor mask) -> Tensor
aten::matmul(Tensor self, Tensor other) -> Tensor
aten::max.other(Tensor self, Tensor other) -> Tensor
aten::max(Tensor self) -> Tensor
aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> Tensor
aten::max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)
aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor
aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor
aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
aten::maximum(Tensor self, Tensor other) -> Tensor
aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
aten::median(Tensor self) -> Tensor
aten::median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]
aten::min.other(Tensor self, Tensor other) -> Tensor
aten::min(Tensor self) -> Tensor
aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::minimum(Tensor self, Tensor other) -> Tensor
aten::mish(Tensor self) -> Tensor
aten::mm(Tensor self, Tensor mat2) -> Tensor
aten::mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)
aten::movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)
aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
aten::msort(Tensor self) -> Tensor
aten::mul.Tensor(Tensor self, Tensor other) -> Tensor
aten::mul.Scalar(Tensor self, Scalar other) -> Tensor
aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
aten::multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int reduction=1) -> Tensor
aten::multiply.Tensor(Tensor self, Tensor other) -> Tensor
aten::mv(Tensor self, Tensor vec) -> Tensor
aten::mvlgamma(Tensor self, int p) -> Tensor
aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor
aten::nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
aten::nanmedian(Tensor self) -> Tensor
aten::nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)
aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)
aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)
aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)
aten::ne.Tensor(Tensor self, Tensor other) -> Tensor
aten::ne.Scalar(Tensor self, Scalar other) -> Tensor
aten::neg(Tensor self) -> Tensor
aten::negative(Tensor self) -> Tensor
aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::nextafter(Tensor self, Tensor other) -> Tensor
aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor
aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)
aten::nonzero(Tensor self) -> Tensor
aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor
aten::not_equal.Tensor(Tensor self, Tensor other) -> Tensor
aten::numel(Tensor self) -> int
aten::one_hot(Tensor self, int num_classes=-1) -> Tensor
aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::outer(Tensor self, Tensor vec2) -> Tensor
aten::pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor
aten::pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, bool keepdim=False) -> Tensor
aten::pdist(Tensor self, float p=2.) -> Tensor
aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)
aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor
aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor
aten::poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> Tensor
aten::polygamma(int n, Tensor self) -> Tensor
aten::positive(Tensor(a) self) -> Tensor(a)
aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor
aten::prelu(Tensor self, Tensor weight) -> Tensor
aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor
aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
aten::quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation="linear") -> Tensor
aten::rad2deg(Tensor self) -> Tensor
aten::rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::ravel(Tensor(a) self) -> Tensor(a)
aten::reciprocal(Tensor self) -> Tensor
aten::reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor
aten::reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor
aten::relu(Tensor self) -> Tensor
aten::relu6(Tensor self) -> Tensor
aten::relu_(Tensor(a!) self) -> Tensor(a!)
aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor
aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor
aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
aten::repeat(Tensor self, SymInt[] repeats) -> Tensor
aten::repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor
aten::repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor
aten::replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor
aten::replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor
aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)
aten::resolve_conj(Tensor(a) self) -> Tensor(a)
aten::resolve_neg(Tensor(a) self) -> Tensor(a)
aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor
aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor
aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor
aten::round(Tensor self) -> Tensor
aten::round.decimals(Tensor self, *, int decimals) -> Tensor
aten::row_stack(Tensor[] tensors) -> Tensor
aten::rsqrt(Tensor self) -> Tensor
aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor
aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
aten::scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor
aten::scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor
aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor
aten::searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor
aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)
aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor
aten::selu(Tensor self) -> Tensor
aten::sgn(Tensor self) -> Tensor
aten::sigmoid(Tensor self) -> Tensor
aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)
aten::sign(Tensor self) -> Tensor
aten::signbit(Tensor self) -> Tensor
aten::silu(Tensor self) -> Tensor
aten::silu_(Tensor(a!) self) -> Tensor(a!)
aten::sin(Tensor self) -> Tensor
aten::sinc(Tensor self) -> Tensor
aten::sinh(Tensor self) -> Tensor
aten::size.int(Tensor self, int dim) -> int
aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor
aten::smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor
aten::soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
aten::softshrink(Tensor self, Scalar lambd=0.5) -> Tensor
aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
aten::split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]
aten::split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]
aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
aten::sqrt(Tensor self) -> Tensor
aten::square(Tensor self) -> Tensor
aten::squeeze(Tensor(a) self) -> Tensor(a)
aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)
aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)
aten::stack(Tensor[] tensors, int dim=0) -> Tensor
aten::std(Tensor self, bool unbiased=True) -> Tensor
aten::std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor
aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
aten::std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)
aten::stride.int(Tensor self, int dim) -> int
aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
aten::sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)
aten::subtract.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
aten::swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)
aten::swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
aten::sym_numel(Tensor self) -> SymInt
aten::sym_size.int(Tensor self, int dim) -> SymInt
aten::sym_size(Tensor self) -> SymInt[]
aten::sym_stride.int(Tensor self, int dim) -> SymInt
aten::sym_stride(Tensor self) -> SymInt[]
aten::t(Tensor(a) self) -> Tensor(a)
aten::take(Tensor self, Tensor index) -> Tensor
aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor
aten::tan(Tensor self) -> Tensor
aten::tanh(Tensor self) -> Tensor
aten::tanh_(Tensor(a!) self) -> Tensor(a!)
aten::tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]
aten::tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor
aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor
aten::tile(Tensor self, SymInt[] dims) -> Tensor
aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)
aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)
aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)
aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
aten::trace(Tensor self) -> Tensor
aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
aten::trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
aten::trapz.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
aten::tril(Tensor self, SymInt diagonal=0) -> Tensor
aten::tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1., float p=2., float eps=9.9999999999999995e-07, bool swap=False, int reduction=1) -> Tensor
aten::triu(Tensor self, SymInt diagonal=0) -> Tensor
aten::triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::true_divide.Tensor(Tensor self, Tensor other) -> Tensor
aten::trunc(Tensor self) -> Tensor
aten::type_as(Tensor self, Tensor other) -> Tensor
aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]
aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)
aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)
aten::unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]
aten::unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]
aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor
aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor
aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor
aten::var(Tensor self, bool unbiased=True) -> Tensor
aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor
aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)
aten::vdot(Tensor self, Tensor other) -> Tensor
aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)
aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)
aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)
aten::vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]
aten::vstack(Tensor[] tensors) -> Tensor
aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor
aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor
aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor
aten::where(Tensor condition) -> Tensor[]
aten::xlogy.Tensor(Tensor self, Tensor other) -> Tensor
aten::zero_(Tensor(a!) self) -> Tensor(a!)
aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
"""


class Schema:
    """One overload's schema: `qualname` ('aten.linear.default'), `line` (torch's text), arguments as (type, name,
    has_default, default, kwarg_only)."""

    def __init__(self, line: str) -> None:
        self.line = line
        head, _, rest = line.partition("(")
        self.name, _, ov = head[len("aten::"):].partition(".")
        self.overload = ov or "default"
        self.qualname = f"aten.{self.name}.{self.overload}"
        body = rest[:rest.rindex(") ->")]
        self.args: list = []
        kwarg_only = False
        for part in _split_args(body):
            if part == "*":
                kwarg_only = True
                continue
            decl, eq, default = part.partition("=")
            typ, name = decl.rsplit(" ", 1)
            self.args.append((typ.split("(")[0], name, bool(eq), _default(default) if eq else None, kwarg_only))

    def names(self) -> list:
        return [a[1] for a in self.args]


def _split_args(body: str) -> list:
    out, depth, cur = [], 0, ""
    for ch in body:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def _default(text: str):
    text = text.strip()
    if text in ("None", "True", "False") or text[:1] in "-0123456789[\"'":
        return ast.literal_eval(text.replace("0.,", "0.0,") if text != "0." else "0.0") if not text.endswith(".") \
            else float(text)
    return text


@functools.lru_cache(maxsize=None)
def table() -> dict:
    """op -> {overload: schema line}, in the table's order (torch's order of an op's overloads)."""
    out: dict = {}
    for line in _SCHEMAS.strip().splitlines():
        head = line[len("aten::"):line.index("(")]
        op, _, ov = head.partition(".")
        out.setdefault(op, {})[ov or "default"] = line
    return out


def qualnames() -> list:
    """Every overload as "aten.op.overload"."""
    return [f"aten.{op}.{ov}" for op, ovs in table().items() for ov in ovs]


@functools.lru_cache(maxsize=None)
def schema(qualname: str) -> Schema:
    """The parsed schema of "aten.op.overload" (KeyError when the table has no such overload)."""
    _, op, ov = qualname.split(".")
    return Schema(table()[op][ov])


# --- the funcgrad function of each operator ----------------------------------------------------------------
_FACTORY_DROP = ("layout", "pin_memory", "memory_format", "non_blocking")
_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _factory(fn):
    """A creation function given ATen's keywords: layout / pin_memory / memory_format have no funcgrad
    counterpart and are dropped."""
    def call(*args, **kwargs):
        return fn(*args, **{k: v for k, v in kwargs.items() if k not in _FACTORY_DROP})
    return call


def _stride_or_none(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else stride


def _pool(f, indices=False):
    def call(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return f(x, kernel_size, _stride_or_none(stride), padding, dilation, ceil_mode, return_indices=indices) \
            if indices else f(x, kernel_size, _stride_or_none(stride), padding, dilation, ceil_mode)
    return call


def _avg_pool(f):
    def call(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, *rest):
        return f(x, kernel_size, _stride_or_none(stride), padding, ceil_mode, count_include_pad, *rest)
    return call


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    n = weight.ndim - 2
    if transposed:
        return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding, output_padding, groups,
                                                 dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    dims = tuple(range(-len(normalized_shape), 0))
    mean = input.mean(dims, keepdim=True)
    rstd = (input.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return F.layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, input.new_empty(0), input.new_empty(0)
    dims = (0,) + tuple(range(2, input.ndim))
    mean = input.detach().mean(dims)
    return out, mean, (input.detach().var(dims, unbiased=False) + eps).rsqrt()


def _native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    out = F.group_norm(input, group, weight, bias, eps)
    flat = input.reshape(N, group, -1)
    return out, flat.mean(-1), (flat.var(-1, unbiased=False) + eps).rsqrt()


def _native_dropout(input, p, train):
    if not train or p == 0:
        return input.clone(), _T.ones_like(input, dtype=_T.bool)
    mask = _T.empty_like(input).bernoulli_(1 - p).to(_T.bool)
    return input * mask * (1.0 / (1 - p)), mask


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    if scale == 1 and input_scale == 1:
        return F.elu(x, alpha)
    return _T.where(x > 0, x * scale, (x * input_scale).expm1() * (alpha * scale))


def _index(x, indices):
    return x[tuple(slice(None) if i is None else i for i in indices)]


def _slice(x, dim=0, start=None, end=None, step=1):
    return x[(slice(None),) * (dim % x.ndim) + (slice(start, end, step),)]


def _upsample(mode, output_size, scales, **kw):
    def call(input):
        if output_size is None:
            return F.interpolate(input, scale_factor=list(scales) if isinstance(scales, (list, tuple)) else scales,
                                 mode=mode, **kw)
        return F.interpolate(input, size=list(output_size), mode=mode, **kw)
    return call


def _loss(f):
    """nn.functional's loss `f` given ATen's integer reduction (0 none, 1 mean, 2 sum)."""
    def call(input, target, reduction=1, **kw):
        return f(input, target, reduction=_REDUCTION[reduction], **kw)
    return call


def _nll_loss(input, target, weight=None, reduction=1, ignore_index=-100):
    return F.nll_loss(input, target, weight, ignore_index=ignore_index, reduction=_REDUCTION[reduction])


def _nll_loss_forward(input, target, weight, reduction, ignore_index):
    """(loss, total weight of the targets not ignored): torch's total weight is 0 under reduction "none"."""
    keep = target != ignore_index
    w = (weight[target.clamp(min=0)] if weight is not None else _T.ones_like(target, dtype=input.dtype)) * keep
    total = input.new_zeros(()) if reduction == 0 else w.sum().detach().to(input.dtype)
    return _nll_loss(input, target, weight, reduction, ignore_index), total


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDING = ("zeros", "border", "reflection")

_IMPLS: dict = {
    "alias": lambda x: x.view_as(x), "lift_fresh_copy": lambda x: x.clone(),
    "clamp_min": lambda x, min: _T.clamp(x, min=min), "clamp_max": lambda x, max: _T.clamp(x, max=max),
    "expand": lambda x, size, *, implicit=False: x.expand(list(size)), "expand_as": lambda x, o: x.expand_as(o),
    "view": lambda x, size: x.view(list(size)), "view.dtype": lambda x, dtype: x.view(dtype),
    "add.Scalar": lambda x, other, alpha=1: _T.add(x, other, alpha=alpha),
    "sub.Scalar": lambda x, other, alpha=1: _T.sub(x, other, alpha=alpha),
    "fill": lambda x, value: _T.where(_T.ones_like(x, dtype=_T.bool), value if not isinstance(value, _T.Tensor)
                                      else value.to(x.dtype), x), "_unsafe_view": lambda x, size: x.reshape(list(size)),
    "reshape": lambda x, shape: x.reshape(list(shape)), "permute": lambda x, dims: x.permute(list(dims)),
    "repeat": lambda x, repeats: x.repeat(repeats), "roll": lambda x, shifts, dims=(): _T.roll(x, shifts, dims or None),
    "contiguous": lambda x, memory_format=None: x.contiguous(),
    "clone": lambda x, *, memory_format=None: x.clone(),
    "copy": lambda x, src, non_blocking=False: src.to(x.dtype).expand_as(x).clone(),
    "copy_": lambda x, src, non_blocking=False: x.copy_(src), "zero_": lambda x: x.zero_(),
    "fill_": lambda x, v: x.fill_(v), "add_": lambda x, o, alpha=1: x.add_(o, alpha=alpha),
    "sub_": lambda x, o, alpha=1: x.sub_(o, alpha=alpha), "mul_": lambda x, o: x.mul_(o),
    "div_": lambda x, o, rounding_mode=None: x.div_(o, rounding_mode=rounding_mode), "relu_": lambda x: x.relu_(),
    "silu_": lambda x: F.silu(x, inplace=True), "sigmoid_": lambda x: x.sigmoid_(), "tanh_": lambda x: x.tanh_(),
    "exp_": lambda x: x.exp_(), "clamp_": lambda x, min=None, max=None: x.clamp_(min, max),
    "masked_fill_": lambda x, mask, value: x.masked_fill_(mask, value),
    "index_put_": lambda x, indices, values, accumulate=False: x.index_put_(tuple(indices), values, accumulate),
    "amax": lambda x, dim=(), keepdim=False: _T.amax(x, list(dim) or list(range(x.ndim)), keepdim),
    "embedding": lambda weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False:
        F.embedding(indices, weight, None if padding_idx == -1 else padding_idx, None, 2.0, scale_grad_by_freq,
                    sparse),
    "dropout": lambda x, p, train: F.dropout(x, p, train), "native_dropout": _native_dropout,
    "elu": _elu, "constant_pad_nd": lambda x, pad, value=0: F.pad(x, list(pad), value=value),
    "pad": lambda x, pad, mode="constant", value=None: F.pad(x, list(pad), mode, value),
    "reflection_pad1d": lambda x, pad: F.pad(x, list(pad), "reflect"),
    "reflection_pad2d": lambda x, pad: F.pad(x, list(pad), "reflect"),
    "replication_pad1d": lambda x, pad: F.pad(x, list(pad), "replicate"),
    "replication_pad2d": lambda x, pad: F.pad(x, list(pad), "replicate"),
    "layer_norm": lambda x, shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True:
        F.layer_norm(x, list(shape), weight, bias, eps),
    "group_norm": lambda x, groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True:
        F.group_norm(x, groups, weight, bias, eps),
    "batch_norm": lambda x, weight, bias, mean, var, training, momentum, eps, cudnn_enabled=True:
        F.batch_norm(x, mean, var, weight, bias, training, momentum, eps),
    "instance_norm": lambda x, weight, bias, mean, var, use_input_stats, momentum, eps, cudnn_enabled=True:
        F.instance_norm(x, mean, var, weight, bias, use_input_stats, momentum, eps),
    "native_layer_norm": _native_layer_norm, "native_batch_norm": _native_batch_norm,
    "native_group_norm": _native_group_norm,
    "_native_batch_norm_legit_no_training": lambda x, weight, bias, mean, var, momentum, eps:
        _native_batch_norm(x, weight, bias, mean, var, False, momentum, eps),
    "_native_batch_norm_legit": _native_batch_norm,
    "_native_batch_norm_legit.no_stats": lambda x, weight, bias, training, momentum, eps:
        _native_batch_norm(x, weight, bias, None, None, training, momentum, eps),
    "convolution": _convolution,
    "linear": F.linear, "conv1d": F.conv1d, "conv2d": F.conv2d, "conv3d": F.conv3d,
    "conv_transpose1d": F.conv_transpose1d, "conv_transpose2d": F.conv_transpose2d,
    "conv_transpose3d": F.conv_transpose3d,
    "max_pool1d": _pool(F.max_pool1d), "max_pool2d": _pool(F.max_pool2d), "max_pool3d": _pool(F.max_pool3d),
    "max_pool2d_with_indices": _pool(F.max_pool2d, True),
    "avg_pool1d": _avg_pool(F.avg_pool1d), "avg_pool2d": _avg_pool(F.avg_pool2d), "avg_pool3d": _avg_pool(F.avg_pool3d),
    "_adaptive_avg_pool2d": F.adaptive_avg_pool2d, "adaptive_avg_pool2d": F.adaptive_avg_pool2d,
    "adaptive_max_pool1d": lambda x, size: F.adaptive_max_pool1d(x, size, return_indices=True),
    "adaptive_max_pool2d": lambda x, size: F.adaptive_max_pool2d(x, size, return_indices=True),
    "_softmax": lambda x, dim, half_to_float: _T.softmax(x, dim),
    "_log_softmax": lambda x, dim, half_to_float: _T.log_softmax(x, dim),
    "linalg_vector_norm": lambda x, ord=2, dim=None, keepdim=False, *, dtype=None:
        _linalg.vector_norm(x, ord, dim, keepdim, dtype=dtype),
    "index": _index, "slice": _slice,
    "index_put": lambda x, indices, values, accumulate=False: x.index_put(tuple(indices), values, accumulate),
    "einsum": lambda equation, tensors, *, path=None: _T.einsum(equation, *tensors),
    "sym_size": lambda x, dim=None: x.size() if dim is None else x.size(dim),
    "sym_stride": lambda x, dim=None: x.stride() if dim is None else x.stride(dim),
    "sym_numel": lambda x: x.numel(), "_local_scalar_dense": lambda x: x.item(),
    "_to_copy": lambda x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
        memory_format=None: x.to(dtype=dtype if dtype is not None else x.dtype, copy=True),
    "to.dtype": lambda x, dtype, non_blocking=False, copy=False, memory_format=None: x.to(dtype, copy=copy),
    "to.device": lambda x, device, dtype, non_blocking=False, copy=False, memory_format=None:
        x.to(device, dtype, copy=copy),
    "to.other": lambda x, other, non_blocking=False, copy=False, memory_format=None: x.to(other, copy=copy),
    "upsample_nearest2d": lambda x, output_size, scales_h=None, scales_w=None:
        _upsample("nearest", output_size, scales_h)(x),
    "upsample_nearest2d.vec": lambda x, output_size, scale_factors: _upsample("nearest", output_size,
                                                                               scale_factors)(x),
    "upsample_bilinear2d.vec": lambda x, output_size, align_corners, scale_factors: _upsample(
        "bilinear", output_size, scale_factors, align_corners=align_corners)(x),
    "grid_sampler_2d": lambda x, grid, interpolation_mode, padding_mode, align_corners: F.grid_sample(
        x, grid, _GRID_MODES[interpolation_mode], _GRID_PADDING[padding_mode], align_corners),
    "rsub.Scalar": lambda x, other, alpha=1: other - alpha * x if alpha != 1 else other - x,
    "log_sigmoid": F.logsigmoid, "relu6": F.relu6, "softshrink": F.softshrink, "glu": F.glu,
    "unfold": lambda x, dimension, size, step: x.unfold(dimension, size, step),
    "tensordot": lambda a, b, dims_self, dims_other: _T.tensordot(a, b, (list(dims_self), list(dims_other))),
    "mse_loss": _loss(F.mse_loss), "l1_loss": _loss(F.l1_loss), "kl_div": _loss(F.kl_div),
    "smooth_l1_loss": lambda x, target, reduction=1, beta=1.0: F.smooth_l1_loss(
        x, target, reduction=_REDUCTION[reduction], beta=beta),
    "huber_loss": lambda x, target, reduction=1, delta=1.0: F.huber_loss(
        x, target, reduction=_REDUCTION[reduction], delta=delta),
    "binary_cross_entropy": lambda x, target, weight=None, reduction=1: F.binary_cross_entropy(
        x, target, weight, reduction=_REDUCTION[reduction]),
    "binary_cross_entropy_with_logits": lambda x, target, weight=None, pos_weight=None, reduction=1:
        F.binary_cross_entropy_with_logits(x, target, weight, reduction=_REDUCTION[reduction], pos_weight=pos_weight),
    "nll_loss": _nll_loss, "nll_loss_forward": _nll_loss_forward,
    "cross_entropy_loss": lambda x, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0:
        F.cross_entropy(x, target, weight, ignore_index=ignore_index, reduction=_REDUCTION[reduction],
                        label_smoothing=label_smoothing),
    "cdist": lambda x1, x2, p=2.0, compute_mode=None: _T.cdist(x1, x2, p),
    "im2col": lambda x, kernel_size, dilation, padding, stride: F.unfold(x, kernel_size, dilation, padding, stride),
    "col2im": lambda x, output_size, kernel_size, dilation, padding, stride: F.fold(
        x, list(output_size), kernel_size, dilation, padding, stride),
    "one_hot": F.one_hot, "scaled_dot_product_attention": F.scaled_dot_product_attention,
    "hinge_embedding_loss": lambda x, target, margin=1.0, reduction=1: F.hinge_embedding_loss(
        x, target, margin, reduction=_REDUCTION[reduction]),
    "margin_ranking_loss": lambda x1, x2, target, margin=0.0, reduction=1: F.margin_ranking_loss(
        x1, x2, target, margin, reduction=_REDUCTION[reduction]),
    "soft_margin_loss": _loss(F.soft_margin_loss),
    "multi_margin_loss": lambda x, target, p=1, margin=1, weight=None, reduction=1: F.multi_margin_loss(
        x, target, p, margin, weight, reduction=_REDUCTION[reduction]),
    "cosine_embedding_loss": lambda x1, x2, target, margin=0.0, reduction=1: F.cosine_embedding_loss(
        x1, x2, target, margin, reduction=_REDUCTION[reduction]),
    "poisson_nll_loss": lambda x, target, log_input, full, eps, reduction: F.poisson_nll_loss(
        x, target, log_input, full, eps=eps, reduction=_REDUCTION[reduction]),
    "triplet_margin_loss": lambda a, p, n, margin=1.0, norm=2.0, eps=1e-6, swap=False, reduction=1:
        F.triplet_margin_loss(a, p, n, margin, norm, eps, swap, reduction=_REDUCTION[reduction]),
    "max_pool1d_with_indices": _pool(F.max_pool1d, True), "max_pool3d_with_indices": _pool(F.max_pool3d, True),
    "adaptive_max_pool3d": lambda x, size: F.adaptive_max_pool3d(x, size, return_indices=True),
    "alpha_dropout": lambda x, p, train: F.alpha_dropout(x, p, train),
    "rms_norm": lambda x, shape, weight=None, eps=None: F.rms_norm(x, list(shape), weight, eps),
    "bilinear": F.bilinear,
    "frobenius_norm.dim": lambda x, dim, keepdim=False: _T.norm(x, "fro", list(dim), keepdim),
    "meshgrid.indexing": lambda tensors, *, indexing: _T.meshgrid(*tensors, indexing=indexing),
    "broadcast_tensors": lambda tensors: list(_T.broadcast_tensors(*tensors)),
    "block_diag": lambda tensors: _T.block_diag(*tensors),
    "cartesian_prod": lambda tensors: _T.cartesian_prod(*tensors),
    "hardtanh_": F.hardtanh_,
}
for _name in ("empty_like", "ones_like", "zeros_like", "full_like", "rand", "randn", "ones", "zeros", "full",
              "scalar_tensor", "arange", "empty", "rand_like", "randn_like", "randint", "randperm", "linspace",
              "logspace", "eye", "tril_indices", "triu_indices"):
    _IMPLS[_name] = _factory(getattr(_T, _name))
for _name in ("new_empty", "new_full", "new_ones", "new_zeros"):
    _IMPLS[_name] = _factory(getattr(_T.Tensor, _name))


def impl(op: str, overload: str = "default") -> Callable:
    """The funcgrad function serving `op.overload`, called with the schema's arguments positionally (keyword-only
    ones by name)."""
    fn = _IMPLS.get(f"{op}.{overload}") or _IMPLS.get(op)
    if fn is None:
        fn = getattr(_T, op, None) or getattr(F, op, None) or getattr(_T.Tensor, op)
    return fn


@functools.lru_cache(maxsize=None)
def overload_fn(qualname: str) -> Callable:
    """"aten.op.overload" as a function called as torch calls it: positional arguments in schema order, any of them
    by name (earlier ones left out take the schema's default), keyword-only ones by name. Its `__aten__` is the
    qualname, so a graph that calls it (a loaded .pt2 program) saves back to the same operator."""
    s = schema(qualname)
    fn = impl(s.name, s.overload)
    positional = [a for a in s.args if not a[4]]
    pos_names = {a[1] for a in positional}

    def run(*args, **kwargs):
        if kwargs and not pos_names.isdisjoint(kwargs):
            args = list(args)
            last = max(i for i, a in enumerate(positional) if a[1] in kwargs)
            for typ, name, has_default, default, _ in positional[len(args):last + 1]:
                if name in kwargs:
                    args.append(kwargs.pop(name))
                elif has_default:
                    args.append(default)
                else:
                    raise TypeError(f"{s.line[len('aten::'):s.line.index('(')]}() is missing value for argument "
                                    f"'{name}'. Declaration: {s.line}")
        return fn(*args, **kwargs)
    run.__name__ = run.__qualname__ = qualname.replace(".", "_")
    run.__module__ = __name__
    run.__doc__ = f"{s.line}\n\nRuns {getattr(fn, '__qualname__', fn)}."
    run.__aten__ = qualname
    return run
