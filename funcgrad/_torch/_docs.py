"""One-line docstrings of the torch face's functions and Tensor methods, attached at import (as torch's own
_torch_docs.py / _tensor_docs.py do with add_docstr).

Most torch functions are built by factories (the pointwise, reduction and in-place families) that share one body,
so their text lives here, one line per name, rather than beside each generated function. A name's text is
attached to `funcgrad.<name>` and to `Tensor.<name>` when that object has no docstring of its own; an in-place
`name_` gets "In-place version of name()". Where an argument differs from torch's, the line says so.
"""
from __future__ import annotations

import inspect
import sys

# name: one line of what (the function form; the method form is the same op with the tensor as `input`)
_TEXT = """
H: Conjugate transpose of a 2-D tensor (a view for real tensors).
T: The tensor with its dimensions reversed (a view).
mH: Conjugate transpose of the last two dimensions.
mT: Transpose of the last two dimensions (a view).
abs: Elementwise absolute value |input|.
acos: Elementwise inverse cosine, in radians.
acosh: Elementwise inverse hyperbolic cosine.
add: input + alpha * other, broadcast elementwise.
adjoint: Conjugate transpose of the last two dimensions (a view).
all: True where every element (along dim, if given) is nonzero.
allclose: True if |input - other| <= atol + rtol * |other| for every element.
alpha_dropout: Alpha dropout for SELU networks: keeps the mean and variance of its input in training.
amax: Maximum along dim (all dims if none); the gradient is spread evenly over ties.
amin: Minimum along dim (all dims if none); the gradient is spread evenly over ties.
aminmax: The (min, max) pair of input, overall or along dim.
any: True where some element (along dim, if given) is nonzero.
arange: Values from start to end (exclusive) in steps of step, as torch.arange.
argmax: Index of the maximum (first one on ties), overall or along dim.
argmin: Index of the minimum (first one on ties), overall or along dim.
argsort: Indices that sort input along dim (stable=True keeps ties in order).
argwhere: Indices of the nonzero elements, one row per element (as nonzero()).
as_strided_scatter: A copy of input with src written into the as_strided view of it.
asin: Elementwise inverse sine, in radians.
asinh: Elementwise inverse hyperbolic sine.
atan: Elementwise inverse tangent, in radians.
atan2: Elementwise angle of the point (other, input), in (-pi, pi].
atanh: Elementwise inverse hyperbolic tangent.
atleast_1d: Tensors with at least one dimension (scalars become shape (1,)).
atleast_2d: Tensors with at least two dimensions.
atleast_3d: Tensors with at least three dimensions.
bartlett_window: The Bartlett (triangular) window of length window_length.
batch_norm: Batch normalisation of input with running statistics (see nn.functional.batch_norm).
bernoulli: 0/1 samples with probability input (or p), from torch's random stream.
bfloat16: The tensor converted to bfloat16 (self.to(torch.bfloat16)).
binary_cross_entropy_with_logits: Binary cross entropy of sigmoid(input) against target, computed stably.
bincount: Counts of each non-negative integer value in a 1-D tensor (weighted if weights is given).
bitwise_and: Elementwise bitwise AND of integer or bool tensors.
bitwise_left_shift: Elementwise input << other.
bitwise_not: Elementwise bitwise NOT of an integer or bool tensor.
bitwise_or: Elementwise bitwise OR of integer or bool tensors.
bitwise_right_shift: Elementwise input >> other (arithmetic shift).
bitwise_xor: Elementwise bitwise XOR of integer or bool tensors.
blackman_window: The Blackman window of length window_length.
bmm: Batched matrix product of (b, n, m) and (b, m, p) tensors.
bool: The tensor converted to torch.bool.
broadcast_shapes: The shape the given shapes broadcast to.
broadcast_tensors: The tensors broadcast to their common shape (views).
broadcast_to: input broadcast to shape (a view).
bucketize: Index of the bucket of boundaries each element falls into.
byte: The tensor converted to torch.uint8.
can_cast: Whether from_ casts to to under torch's same-kind casting rules.
cartesian_prod: Cartesian product of 1-D tensors, one row per combination.
cat: Concatenation of tensors along an existing dim.
cdist: Pairwise p-norm distances between the rows of x1 and x2 (batched).
cdouble: The tensor converted to torch.complex128.
ceil: Elementwise ceiling.
cfloat: The tensor converted to torch.complex64.
chain_matmul: Matrix product of a chain of 2-D tensors (deprecated in torch: use linalg.multi_dot).
char: The tensor converted to torch.int8.
cholesky: Cholesky factor of a symmetric positive-definite matrix (lower unless upper=True).
chunk: Split into `chunks` pieces along dim (the last may be smaller).
clamp: Elementwise clamp to [min, max] (either bound may be None or a tensor).
clamp_max: Elementwise minimum with max.
clamp_min: Elementwise maximum with min.
clip: Alias for clamp().
clone: A copy of the tensor (differentiable; memory_format is accepted).
coalesce: A sparse COO tensor with duplicate indices summed and indices sorted.
column_stack: Stack tensors as columns of a 2-D tensor.
conj: Complex conjugate (a copy here; torch returns a lazy conjugate view).
conj_physical: Complex conjugate, materialised.
const_data_ptr: Address of the first element (read-only use).
constant_pad_nd: Pad with a constant value: pad lists (before, after) pairs from the last dim.
contiguous: The tensor with its elements laid out row-major (self if already).
copysign: Elementwise magnitude of input with the sign of other.
cos: Elementwise cosine.
cosh: Elementwise hyperbolic cosine.
cosine_embedding_loss: Cosine embedding loss of x1, x2 against labels 1/-1.
count_nonzero: Number of nonzero elements, overall or along dim.
cpu: The tensor on the CPU (self: funcgrad tensors live there).
cross: Cross product of 3-vectors along dim.
ctc_loss: Connectionist temporal classification loss.
cuda: Move to a CUDA device (raises: this build of funcgrad has no CUDA).
cummax: Running maximum along dim and its indices.
cummin: Running minimum along dim and its indices.
cumprod: Cumulative product along dim.
cumsum: Cumulative sum along dim.
data_ptr: Address of the first element.
deg2rad: Elementwise degrees to radians.
dense_dim: Number of dense dimensions (a sparse COO tensor's value dimensions).
det: Determinant of square matrices (batched).
detach: A tensor sharing the data, cut from the autograd graph (requires_grad=False).
device: The device the tensor lives on (always cpu).
diag: Diagonal of a 2-D tensor, or a diagonal matrix from a 1-D one.
diagflat: A diagonal matrix with the flattened input on its offset diagonal.
diagonal_scatter: A copy of input with src written into its diagonal.
digamma: Elementwise derivative of lgamma.
dim: Number of dimensions.
dim_order: The order of the dimensions in memory, outermost first.
dist: p-norm of input - other.
div: input / other elementwise (true division; rounding_mode="trunc" or "floor" rounds).
dot: Inner product of two 1-D tensors.
double: The tensor converted to torch.float64.
dropout: Zero elements with probability p and scale the rest by 1/(1-p) when train is true.
dsplit: Split along the third dimension.
dstack: Stack tensors along the third dimension.
dtype: The element type.
eig: Removed in torch 1.13: use torch.linalg.eig.
einsum: Einstein summation over the operands, as torch.einsum.
element_size: Bytes per element.
embedding: Rows of weight picked by the integer indices in input.
empty: An uninitialised tensor of the given shape (zeros here).
empty_like: An uninitialised tensor shaped like input (zeros here).
eq: Elementwise input == other.
equal: True if the two tensors have the same shape and elements.
erf: Elementwise error function.
erfc: Elementwise complementary error function 1 - erf(x).
erfinv: Elementwise inverse error function.
exp: Elementwise e ** x.
exp2: Elementwise 2 ** x.
expand: A view with singleton dimensions repeated to size (-1 keeps a size).
expand_as: expand(other.size()).
expm1: Elementwise e ** x - 1, accurate near 0.
eye: The n x m identity matrix.
feature_alpha_dropout: Alpha dropout of whole channels.
fix: Alias for trunc().
flatten: Flatten dims start_dim..end_dim into one.
flip: Reverse the order of elements along the given dims.
fliplr: Reverse the order of columns (dim 1).
flipud: Reverse the order of rows (dim 0).
float: The tensor converted to torch.float32.
floor: Elementwise floor.
floor_divide: Elementwise floor(input / other).
fmax: Elementwise maximum that ignores NaN.
fmin: Elementwise minimum that ignores NaN.
fmod: Elementwise C-style remainder (the sign of input).
frac: Elementwise fractional part x - trunc(x).
frobenius_norm: Frobenius norm over dim (deprecated in torch: use linalg.norm).
full: A tensor of the given shape filled with fill_value.
full_like: A tensor shaped like input filled with fill_value.
gather: Values of input picked along dim at the positions in index.
gcd: Elementwise greatest common divisor of integers.
ge: Elementwise input >= other.
ger: Alias for outer().
get_default_device: The default device for new tensors (cpu).
get_default_dtype: The default floating dtype for new tensors (float32 unless set).
get_device: The device index: -1 for a CPU tensor.
get_num_interop_threads: Number of inter-op threads (1: funcgrad runs ops on the calling thread).
get_rng_state: The default generator's state as a uint8 tensor (byte-compatible with torch's).
grad: The accumulated gradient (None until a backward pass reaches this leaf).
grad_fn: The autograd node that made this tensor (None for leaves).
greater: Alias for gt().
greater_equal: Alias for ge().
group_norm: Group normalisation over groups of channels.
gt: Elementwise input > other.
half: The tensor converted to torch.float16.
hamming_window: The Hamming window of length window_length.
hann_window: The Hann window of length window_length.
hardshrink: Elementwise x where |x| > lambd, else 0.
hinge_embedding_loss: Hinge embedding loss against labels 1/-1.
histc: Histogram with `bins` equal-width bins over [min, max].
hsplit: Split along the second dimension (the first for 1-D).
hstack: Stack tensors horizontally (along dim 1; dim 0 for 1-D).
hypot: Elementwise sqrt(input ** 2 + other ** 2).
igamma: Regularised lower incomplete gamma function P(input, other).
igammac: Regularised upper incomplete gamma function Q(input, other).
imag: The imaginary part of a complex tensor.
index_add: input with alpha * source added at the indices along dim.
index_copy: input with source copied to the indices along dim.
index_fill: input with value written at the indices along dim.
index_put: input with values written at the positions given by a tuple of index tensors.
index_select: Slices of input at the indices along dim.
indices: A sparse COO tensor's indices (2 x nnz).
initial_seed: The seed the default generator was last seeded with.
instance_norm: Instance normalisation: per sample and channel.
int: The tensor converted to torch.int32.
inverse: Inverse of square matrices (batched).
is_anomaly_check_nan_enabled: Whether anomaly mode checks backward outputs for NaN.
is_anomaly_enabled: Whether autograd anomaly detection is on.
is_coalesced: Whether a sparse COO tensor's indices are unique and sorted.
is_complex: Whether the dtype is complex.
is_conj: Whether the tensor is a lazy conjugate view (always False: conj() copies).
is_contiguous: Whether the elements are laid out row-major.
is_cpu: True: funcgrad tensors live on the CPU.
is_cuda: False: funcgrad tensors live on the CPU, dense and unquantized (is_cuda, is_meta, is_quantized).
is_ipu: False: funcgrad has no such device or layout (is_ipu, is_xpu, is_mps, is_nested, is_sparse_csr, ...).
is_distributed: False: distributed tensors are not modelled.
is_floating_point: Whether the dtype is a floating type.
is_inference: Whether the tensor was made under inference_mode.
is_leaf: Whether the tensor is a leaf of the autograd graph (made by the user, not by a recorded op).
is_neg: Whether the tensor is a lazy negation view (always False).
is_nonzero: Truth value of a one-element tensor.
is_pinned: False: there is no pinned memory without CUDA.
is_same_size: Whether the two tensors have the same shape.
is_set_to: Whether the two tensors view the same storage with the same shape and strides.
is_shared: Whether the storage is in shared memory (after share_memory_()).
is_signed: Whether the dtype is signed.
is_sparse: Whether the tensor is a sparse COO tensor.
is_storage: Whether obj is a storage.
is_tensor: Whether obj is a Tensor.
is_warn_always_enabled: Whether set_warn_always(True) is in effect.
isclose: Elementwise |input - other| <= atol + rtol * |other|.
isfinite: Elementwise: not inf and not NaN.
isinf: Elementwise: +inf or -inf.
isnan: Elementwise: NaN.
isneginf: Elementwise: -inf.
isposinf: Elementwise: +inf.
isreal: Elementwise: imaginary part is zero.
item: The value of a one-element tensor as a Python number.
itemsize: Bytes per element.
kaiser_window: The Kaiser window of length window_length.
kl_div: Kullback-Leibler divergence loss, input given as log-probabilities.
kron: Kronecker product.
kthvalue: The k-th smallest value along dim and its index.
layer_norm: Layer normalisation over the last len(normalized_shape) dims.
layout: The memory layout (torch.strided, or torch.sparse_coo).
lcm: Elementwise least common multiple of integers.
le: Elementwise input <= other.
less: Alias for lt().
less_equal: Alias for le().
lgamma: Elementwise log |Gamma(x)|.
linspace: `steps` evenly spaced values from start to end inclusive.
log: Elementwise natural logarithm.
log10: Elementwise base-10 logarithm.
log1p: Elementwise log(1 + x), accurate near 0.
log2: Elementwise base-2 logarithm.
log_softmax: log(softmax(input)) along dim, computed stably.
logaddexp: Elementwise log(exp(input) + exp(other)), computed stably.
logaddexp2: Elementwise log2(2 ** input + 2 ** other).
logical_and: Elementwise logical AND (nonzero is true).
logical_not: Elementwise logical NOT.
logical_or: Elementwise logical OR.
logical_xor: Elementwise logical XOR.
logspace: `steps` values base ** linspace(start, end).
logsumexp: log(sum(exp(input))) along dim, computed stably.
long: The tensor converted to torch.int64.
lstsq: Removed in torch 1.13: use torch.linalg.lstsq.
lt: Elementwise input < other.
lu: LU factorisation (the packed LU and pivots; get_infos adds the info tensor).
margin_ranking_loss: Margin ranking loss max(0, -y * (x1 - x2) + margin).
masked_fill: input with value where mask is true.
masked_select: The elements of input where mask is true, as a 1-D tensor.
matmul: Matrix product with NumPy's broadcasting rules for 1-D and batched operands.
matrix_power: A square matrix to an integer power (negative powers invert).
matrix_rank: Removed in torch 1.13: use torch.linalg.matrix_rank.
max: Maximum overall, or (values, indices) along dim, or the elementwise maximum of two tensors.
max_pool1d: 1-D max pooling.
max_pool1d_with_indices: 1-D max pooling that also returns the argmax indices.
max_pool2d: 2-D max pooling.
max_pool3d: 3-D max pooling.
maximum: Elementwise maximum (NaN propagates).
mean: Mean overall or along dim.
median: Median (the lower of the two middle values), overall or (values, indices) along dim.
meshgrid: Coordinate grids from 1-D tensors (indexing="ij" or "xy").
min: Minimum overall, or (values, indices) along dim, or the elementwise minimum of two tensors.
minimum: Elementwise minimum (NaN propagates).
mm: Matrix product of two 2-D tensors.
movedim: Move dimensions to new positions.
msort: Sort along dim 0.
mul: Elementwise input * other.
multinomial: Indices drawn from the categorical distributions in the rows of input (torch's random stream).
mv: Matrix-vector product.
nan_to_num: Replace NaN, +inf and -inf by finite numbers.
nanmean: Mean ignoring NaN.
nansum: Sum treating NaN as zero.
narrow: The slice start:start+length along dim (a view).
narrow_copy: The slice start:start+length along dim (a copy).
nbytes: Bytes held by the elements.
ndim: Number of dimensions.
ne: Elementwise input != other.
neg: Elementwise -input.
nelement: Number of elements.
new_empty: An uninitialised tensor of size with this tensor's dtype (zeros here).
new_empty_strided: An uninitialised tensor of size and stride with this tensor's dtype.
new_full: A tensor of size filled with fill_value, with this tensor's dtype.
new_ones: A tensor of ones of size, with this tensor's dtype.
new_tensor: A tensor from data with this tensor's dtype.
new_zeros: A tensor of zeros of size, with this tensor's dtype.
nextafter: Elementwise next floating value after input towards other.
nonzero: Indices of the nonzero elements (as_tuple=True: one tensor per dim).
norm: p-norm over dim (deprecated in torch: use linalg.norm / vector_norm / matrix_norm).
nuclear_norm: Nuclear norm (sum of singular values).
numel: Number of elements.
numpy: The tensor as a NumPy array sharing its memory (requires_grad tensors: detach first).
ones: A tensor of ones of the given shape.
ones_like: A tensor of ones shaped like input.
outer: Outer product of two 1-D tensors.
output_nr: Index of this tensor among the outputs of its grad_fn.
permute: A view with the dimensions reordered.
pinverse: Moore-Penrose pseudo-inverse.
poisson_nll_loss: Negative log-likelihood of a Poisson target.
polygamma: Elementwise n-th derivative of digamma.
positive: input itself (unary +).
pow: Elementwise input ** exponent.
prelu: Elementwise max(0, x) + weight * min(0, x).
prod: Product overall or along dim.
promote_types: The dtype two dtypes promote to.
qr: QR factorisation (deprecated in torch: use linalg.qr).
rad2deg: Elementwise radians to degrees.
rand_like: Uniform [0, 1) numbers shaped like input (torch's random stream).
randint_like: Random integers in [low, high) shaped like input.
randn_like: Standard normal numbers shaped like input (torch's random stream).
range: Values from start to end inclusive (deprecated in torch: use arange).
real: The real part of a complex tensor (the tensor itself if real).
reciprocal: Elementwise 1 / x.
record_stream: CUDA stream bookkeeping (a no-op on the CPU).
register_post_accumulate_grad_hook: Call hook(tensor) after a leaf's .grad is accumulated.
remainder: Elementwise Python-style remainder (the sign of other).
repeat: Tile the tensor `sizes` times along each dimension.
repeat_interleave: Repeat each element `repeats` times along dim.
requires_grad: Whether operations on this tensor are recorded for autograd.
reshape_as: reshape(other.shape).
resize_as: Resize to other's shape.
resolve_conj: The tensor with a lazy conjugation materialised (itself here).
resolve_neg: The tensor with a lazy negation materialised (itself here).
result_type: The dtype an operation on the two operands returns.
retain_grad: Keep .grad for this non-leaf tensor after backward().
retains_grad: Whether retain_grad() was called on this non-leaf.
rms_norm: Root-mean-square normalisation over the last dims.
roll: Roll elements along dims by shifts (flattened if dims is None).
rot90: Rotate by 90 degrees k times in the plane of dims.
round: Elementwise round half to even (decimals=n rounds to n places).
row_stack: Alias for vstack().
rsqrt: Elementwise 1 / sqrt(x).
rsub: other - alpha * input.
scalar_tensor: A 0-d tensor holding s.
scatter: input with src (or value) written along dim at the positions in index.
scatter_add: input with src added along dim at the positions in index.
searchsorted: Insertion positions of values into the sorted last dimension of sorted_sequence.
seed: Seed the default generator non-deterministically; returns the seed.
select: The slice at index along dim (the dim removed; a view).
select_scatter: A copy of input with src written at index along dim.
set_anomaly_enabled: Turn autograd anomaly detection on or off.
set_default_dtype: Set the default floating dtype (float32 or float64).
set_num_interop_threads: Set the number of inter-op threads (recorded; ops run on the calling thread).
set_printoptions: Set how tensors print (precision, threshold, edgeitems, linewidth, sci_mode).
set_rng_state: Restore the default generator from a get_rng_state() tensor.
set_warn_always: Make once-per-process warnings warn every time.
sgn: Elementwise sign; x / |x| for complex input.
shape: The shape, as a torch.Size.
short: The tensor converted to torch.int16.
sigmoid: Elementwise 1 / (1 + exp(-x)).
sign: Elementwise sign (-1, 0 or 1).
signbit: Elementwise: the sign bit is set (true for -0.0).
sin: Elementwise sine.
sinh: Elementwise hyperbolic sine.
size: The shape as a torch.Size, or the size of dim.
slice_scatter: A copy of input with src written into the slice start:end:step along dim.
slogdet: (sign, log |det|) of square matrices.
softmax: exp(x) / sum(exp(x)) along dim.
solve: Removed in torch 1.13: use torch.linalg.solve.
sort: (values, indices) sorted along dim (stable=True keeps ties in order).
sparse_dim: Number of sparse dimensions of a sparse COO tensor.
split: Split into pieces of split_size (an int or a list of sizes) along dim.
split_with_sizes: Split into pieces of the given sizes along dim.
sqrt: Elementwise square root.
squeeze: A view with size-1 dimensions removed (only dim if given).
stack: Stack tensors along a new dim.
std: Standard deviation (correction=1: Bessel's) overall or along dim.
std_mean: (std, mean) in one call.
storage: The tensor's storage (a TypedStorage).
storage_offset: Offset of the first element in the storage, in elements.
storage_type: The class of the tensor's typed storage.
stride: Strides in elements, or the stride of dim.
sub: input - alpha * other.
sum: Sum overall or along dim.
swapaxes: Alias for transpose().
symeig: Removed in torch 1.13: use torch.linalg.eigh.
t: Transpose of a tensor of at most 2 dims.
take: Elements of the flattened input at the given indices.
take_along_dim: Values along dim at the positions in indices (argsort/argmax results).
tan: Elementwise tangent.
tanh: Elementwise hyperbolic tangent.
tensor_split: Split into `sections` near-equal pieces or at the given indices.
tensordot: Sum of products over the given dims of a and b.
tile: Repeat the tensor along each dimension (dims padded with 1 on the left).
to_dense: The dense tensor of a sparse one (itself if dense).
to_sparse: A sparse COO tensor with the same values.
tolist: The elements as nested Python lists (a number for a 0-d tensor).
topk: The k largest (or smallest) values along dim and their indices.
trace: Sum of the diagonal of a 2-D tensor.
transpose: A view with dims dim0 and dim1 swapped.
trapz: Trapezoid-rule integral along dim (alias of trapezoid).
tril: Lower triangle (elements above the diagonal set to 0).
tril_indices: Indices of the lower triangle of a row x col matrix.
triplet_margin_loss: Triplet margin loss of anchor, positive and negative.
triu: Upper triangle (elements below the diagonal set to 0).
triu_indices: Indices of the upper triangle of a row x col matrix.
trunc: Elementwise rounding towards zero.
type_as: The tensor converted to other's dtype.
unbind: The slices along dim, as a tuple (the dim removed).
unflatten: Split dim into the given sizes.
unique: The sorted unique elements (with inverse indices and counts if asked).
unique_consecutive: Collapse runs of equal consecutive elements.
unsqueeze: A view with a size-1 dimension inserted at dim.
untyped_storage: The tensor's untyped (byte) storage.
values: A sparse COO tensor's values.
var: Variance (correction=1: Bessel's) overall or along dim.
var_mean: (var, mean) in one call.
vdot: Inner product of two 1-D tensors, conjugating the first.
view_as: view(other.size()).
volatile: Removed in torch 0.4: always False (use torch.no_grad()).
vsplit: Split along the first dimension.
vstack: Stack tensors vertically (along dim 0; 1-D tensors become rows).
where: Elements of input where condition holds, of other elsewhere; where(condition) is nonzero(as_tuple=True).
xlogy: Elementwise input * log(other), 0 where input is 0.
ravel: The elements as a 1-D tensor (a view when contiguous).
to_sparse_coo: A sparse COO tensor with the same values (as to_sparse()).
zeros_like: A tensor of zeros shaped like input.
apply_: Apply a Python function to each element in place (CPU only, as torch).
as_strided_: Restride the tensor in place to size, stride and storage_offset.
cauchy_: Fill in place with Cauchy(median, sigma) samples.
copy_: Copy src's elements into this tensor in place (broadcasting and casting).
exponential_: Fill in place with Exponential(lambd) samples.
fill_: Fill in place with value.
fill_diagonal_: Fill the main diagonal in place with fill_value (wrap=True continues below for tall matrices).
geometric_: Fill in place with Geometric(p) samples.
log_normal_: Fill in place with LogNormal(mean, std) samples.
normal_: Fill in place with Normal(mean, std) samples (torch's random stream).
put_: Write source at the flattened indices in place (accumulate=True adds).
random_: Fill in place with integers drawn uniformly from [from, to).
set_: Make this tensor view source's storage (or another storage, offset, size and stride).
uniform_: Fill in place with Uniform[from, to) samples (torch's random stream).
zero_: Fill in place with zeros.
feature_dropout_: Dropout of whole channels, in place.
"""

DOCS = dict(line.split(": ", 1) for line in _TEXT.strip().splitlines())
ALIASES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
           "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "concat": "cat", "concatenate": "cat",
           "divide": "div", "true_divide": "div", "multiply": "mul", "subtract": "sub", "negative": "neg",
           "not_equal": "ne", "moveaxis": "movedim", "swapdims": "transpose", "ndimension": "dim",
           "unsafe_chunk": "chunk", "unsafe_split": "split", "unsafe_split_with_sizes": "split_with_sizes"}

# torch.special's names whose functions are not the top-level ones (or have no top-level form)
SPECIAL = dict(line.split(": ", 1) for line in """
erf: The error function 2/sqrt(pi) * integral of exp(-t^2) from 0 to input.
erfc: The complementary error function 1 - erf(input).
erfinv: The inverse error function, defined on (-1, 1).
gammaln: The natural logarithm of |Gamma(input)|.
digamma: The logarithmic derivative of Gamma, psi(input) = Gamma'(input) / Gamma(input).
psi: Alias for digamma().
log1p: log(1 + input), accurate near 0.
expm1: exp(input) - 1, accurate near 0.
exp2: 2 ** input, elementwise.
expit: The logistic sigmoid 1 / (1 + exp(-input)).
logit: log(p / (1 - p)), with input clamped to [eps, 1 - eps] when eps is given.
logsumexp: log(sum(exp(input))) along dim, computed without overflow.
softmax: exp(input) / sum(exp(input)) along dim, optionally computed in dtype.
log_softmax: input - logsumexp(input) along dim, optionally computed in dtype.
round: Round to the given number of decimals, halves to even.
gammainc: The regularized lower incomplete gamma function P(input, other).
gammaincc: The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other).
multigammaln: The log of the multivariate gamma function of dimension p.
chebyshev_polynomial_t: The Chebyshev polynomial of the first kind T_n(input).
chebyshev_polynomial_u: The Chebyshev polynomial of the second kind U_n(input).
chebyshev_polynomial_v: The Chebyshev polynomial of the third kind V_n(input).
chebyshev_polynomial_w: The Chebyshev polynomial of the fourth kind W_n(input).
shifted_chebyshev_polynomial_t: T_n(2 * input - 1), the Chebyshev polynomial of the first kind on [0, 1].
shifted_chebyshev_polynomial_u: U_n(2 * input - 1), the Chebyshev polynomial of the second kind on [0, 1].
shifted_chebyshev_polynomial_v: V_n(2 * input - 1), the Chebyshev polynomial of the third kind on [0, 1].
shifted_chebyshev_polynomial_w: W_n(2 * input - 1), the Chebyshev polynomial of the fourth kind on [0, 1].
hermite_polynomial_h: The physicists' Hermite polynomial H_n(input).
hermite_polynomial_he: The probabilists' Hermite polynomial He_n(input).
laguerre_polynomial_l: The Laguerre polynomial L_n(input).
legendre_polynomial_p: The Legendre polynomial P_n(input).
""".strip().splitlines())


def _text(name: str) -> str | None:
    if name in DOCS:
        return DOCS[name]
    if name in ALIASES:
        return f"Alias for {ALIASES[name]}()."
    if name.endswith("_") and not name.endswith("__"):
        return f"In-place version of {name[:-1]}()."
    return None


def _set(obj, text: str) -> None:
    target = obj.__func__ if isinstance(obj, (staticmethod, classmethod)) else obj
    if getattr(target, "__doc__", None):
        return
    try:
        target.__doc__ = text
    except (AttributeError, TypeError):  # (a builtin or C-level callable: keeps its own)
        pass


def attach_table(module, table: dict) -> None:
    """Give each undocumented function of `module` named in `table` its line (a namespace's own table)."""
    for name, text in table.items():
        _set(getattr(module, name), text)


def attach(module, tensor_cls) -> None:
    """Give each undocumented torch function of `module` (a module or its name) and method/property of
    `tensor_cls` its line."""
    module = sys.modules[module] if isinstance(module, str) else module
    # the names with their own line first: an alias shares its object with the name it aliases
    for first in (True, False):
        for name in dir(module):
            if not name.startswith("_") and (name in DOCS) == first and (text := _text(name)):
                obj = getattr(module, name)
                if callable(obj) and not isinstance(obj, type):
                    _set(obj, text)
        for name in dir(tensor_cls):
            if not name.startswith("_") and (name in DOCS) == first and (text := _text(name)):
                _set(inspect.getattr_static(tensor_cls, name), text)
