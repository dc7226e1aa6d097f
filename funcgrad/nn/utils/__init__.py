"""torch.nn.utils: gradient clipping, parameter/vector conversion, sequence packing, and the stateless
bridge to the functional transforms (functional_call)."""
from . import rnn, stateless  # noqa: F401
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from . import fusion  # noqa: F401,E402
from .clip_grad import clip_grad_norm  # noqa: F401,E402
from .init import skip_init  # noqa: F401,E402
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format  # noqa: F401,E402,E501
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: F401,E402,E501
from .weight_spectral_norm import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm  # noqa: F401,E402,E501
from . import parametrizations, parametrize, prune  # noqa: F401,E402
