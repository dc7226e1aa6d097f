"""The functional core: arrays, dtypes, backends, primitives, tracing and the jaxpr IR, pytrees."""
from .array import Array, ArrayBase, get_aval, to_array, wrap
from .aval import ShapedArray
from .errors import ConcretizationError, UnexpectedTracerError
from .jaxpr import Eqn, Jaxpr, Literal, Var, jaxpr_as_fun
from .jaxpr import eval_jaxpr_consts as eval_jaxpr  # JAX's signature: eval_jaxpr(jaxpr, consts, *args)
from .primitive import Primitive, registry
from .trace import Trace, Tracer, concrete_value, find_top, new_trace

# JAX's names for the IR classes: funcgrad's jaxprs are closed (they hold their consts), so one class is
# both Jaxpr and ClosedJaxpr.
ClosedJaxpr = Jaxpr
JaxprEqn = Eqn
