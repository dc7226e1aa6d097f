"""The functional core: arrays, dtypes, backends, primitives, tracing and the jaxpr IR, pytrees."""
from .array import Array, ArrayBase, get_aval, to_array, wrap
from .aval import ShapedArray
from .errors import ConcretizationError, UnexpectedTracerError
from .jaxpr import Eqn, Jaxpr, Var, eval_jaxpr
from .primitive import Primitive, registry
from .trace import Trace, Tracer, concrete_value, find_top, new_trace
