"""torch.nn.utils: gradient clipping, parameter/vector conversion, sequence packing, and the stateless
bridge to the functional transforms (functional_call)."""
from . import rnn, stateless  # noqa: F401
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
