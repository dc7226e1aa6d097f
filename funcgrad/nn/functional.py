"""torch.nn.functional: the functional forms of the layers and losses, on funcgrad's Tensor ops.

The public face of the family modules in funcgrad/nn/_functional/ (linear, activation, dropout, normalization,
distance, sparse, loss, ctc, conv, pooling, sampling, attention). Everything is composed of differentiable operations,
so autograd comes from the primitives' own derivative rules; in-place variants (`relu_`, `inplace=True`) write
the result into the input's buffer through the Tensor engine's in-place mechanism, which records them like any
other in-place op. The activations are the JAX face's formulas (funcgrad._jax.nn) with torch's conventions."""
from __future__ import annotations

import math  # noqa: F401
import warnings  # noqa: F401

from .._torch._argcheck import DtypeName  # noqa: F401
from ._functional.common import _legacy_get_string  # noqa: F401 (nn.modules.loss)
from ._functional.linear import (  # noqa: F401
    linear, bilinear, identity)
from ._functional.activation import (  # noqa: F401
    threshold, threshold_, relu, relu_, hardtanh, hardtanh_, relu6, leaky_relu, leaky_relu_, elu, elu_, selu,
    selu_, celu, celu_, rrelu, rrelu_, prelu, glu, sigmoid, tanh, logsigmoid, hardsigmoid, hardswish, gelu,
    silu, mish, softplus, softsign, softshrink, hardshrink, tanhshrink, softmax, softmin, log_softmax,
    gumbel_softmax)
from ._functional.dropout import (  # noqa: F401
    dropout, dropout1d, dropout2d, dropout3d, alpha_dropout, feature_alpha_dropout)
from ._functional.normalization import (  # noqa: F401
    batch_norm, instance_norm, layer_norm, rms_norm, group_norm, local_response_norm, normalize)
from ._functional.distance import (  # noqa: F401
    cosine_similarity, pairwise_distance, pdist)
from ._functional.sparse import (  # noqa: F401
    embedding, embedding_bag, one_hot)
from ._functional.loss import (  # noqa: F401
    mse_loss, l1_loss, smooth_l1_loss, huber_loss, poisson_nll_loss, gaussian_nll_loss, kl_div, nll_loss,
    cross_entropy, binary_cross_entropy, binary_cross_entropy_with_logits, soft_margin_loss,
    multilabel_soft_margin_loss, multi_margin_loss, multilabel_margin_loss, cosine_embedding_loss,
    margin_ranking_loss, hinge_embedding_loss, triplet_margin_loss, triplet_margin_with_distance_loss,
    linear_cross_entropy)
from ._functional.ctc import ctc_loss  # noqa: F401
from ._functional.conv import (  # noqa: F401
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, unfold, fold)
from ._functional.pooling import (  # noqa: F401
    max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices, max_pool2d_with_indices, avg_pool1d,
    avg_pool2d, avg_pool3d, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d,
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, max_unpool1d, max_unpool2d,
    adaptive_avg_pool3d, adaptive_max_pool3d, adaptive_max_pool3d_with_indices, max_pool3d_with_indices,
    max_unpool3d, lp_pool1d, lp_pool2d, lp_pool3d, fractional_max_pool2d, fractional_max_pool3d,
    fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices)
from ._functional.sampling import (  # noqa: F401
    pad, interpolate, upsample, upsample_nearest, upsample_bilinear, pixel_shuffle, pixel_unshuffle,
    GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES, channel_shuffle, native_channel_shuffle,
    affine_grid, grid_sample)
from ._functional.attention import (  # noqa: F401
    scaled_dot_product_attention, multi_head_attention_forward)

from .._torch import overrides as _overrides  # noqa: E402
# every function here dispatches on `__torch_function__` (one class test first in its code), as torch's do
_overrides.install(globals(), [n for n in list(globals()) if not n.startswith("_")], "nn.functional",
                   "funcgrad.nn.functional", distinct=True)
