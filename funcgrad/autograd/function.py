"""Custom differentiable operations: autograd.Function with a context object, as torch.autograd.Function."""
from __future__ import annotations

import numpy as np

from . import graph as _graph
from .grad_mode import _force_grad, state as _gs
from .._src.core.array import Array as _Array
from .._src.core.trace import Tracer as _Tracer


class FunctionCtx:
    """What forward() stores for backward(): saved tensors and flags."""

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)


class BackwardCFunction(_graph.Node):
    """The graph node of one Function.apply call; it is also the `ctx` handed to forward/backward."""
    __slots__ = ()  # (Node has an instance __dict__ for ctx attributes)

    def __init__(self):
        _graph.Node.__init__(self, True, None, (), [], [], [])
        self.materialize_grads = True
        self.to_save = ()
        self.non_differentiable = ()
        self.dirty_tensors = ()
        self.needs_input_grad = ()
        self._saved = None
        self._saved_versions = None
        self._n_inputs = 0
        self._edge_pos = []

    # ctx API
    save_for_backward = FunctionCtx.save_for_backward
    save_for_forward = FunctionCtx.save_for_forward
    mark_dirty = FunctionCtx.mark_dirty
    mark_non_differentiable = FunctionCtx.mark_non_differentiable
    set_materialize_grads = FunctionCtx.set_materialize_grads

    @property
    def saved_tensors(self):
        if self.tape is None:
            raise RuntimeError(_graph.FREED_MSG)
        if self._saved is None:
            return ()
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and t._st is not None and t._st.version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: {_graph._type_name(t)}, which is output 0 of {self.name()}, is at version "
                    f"{t._st.version}; expected version {v} instead." + _graph._HINT)
        return tuple(self._saved)

    saved_variables = saved_tensors

    def check_versions(self):
        pass

    def release(self):
        self.tape = None
        self._saved = None

    def apply(self, cts, create_graph):
        if self.tape is None:
            raise RuntimeError(_graph.FREED_MSG)
        T = _graph._TENSOR
        cls = self._cls
        meta = self.out_meta
        grads = []
        for c, (shape, dt) in zip(cts, meta):
            if c is None and self.materialize_grads:
                c = T._make(np.zeros(shape, dt))
            grads.append(c)
        with _force_grad(create_graph):
            res = cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n = self._n_inputs
        if len(res) < n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(res)})")
        if len(res) > n:
            if any(r is not None for r in res[n:]):
                raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                                   f"{n}, got {len(res)})")
            res = res[:n]
        out = []
        for pos, inp in self._edge_pos:
            g = res[pos]
            if g is not None:
                if not isinstance(g, T.Tensor):
                    raise TypeError(f"function {self.name()} returned a gradient different than None at position "
                                    f"{pos + 1}, but the corresponding forward input was not a Variable")
                if g.shape != inp[0]:
                    g = _sum_to(g, inp[0], self.name(), pos)
                if g._np_dtype() != inp[1]:
                    g = g.to(T.D.from_np(inp[1]))
            out.append(g)
        return out


def _sum_to(g, shape, name, pos):
    gs = tuple(g.shape)
    if len(gs) < len(shape) or any(a != b and b != 1 for a, b in zip(gs[len(gs) - len(shape):], shape)):
        raise RuntimeError(f"Function {name} returned an invalid gradient at index {pos} - got {list(gs)} but "
                           f"expected shape compatible with {list(shape)}")
    lead = len(gs) - len(shape)
    if lead:
        g = g.sum(tuple(range(lead)))
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape, shape)) if b == 1 and a != 1)
    if axes:
        g = g.sum(axes, keepdim=True)
    return g


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"__slots__": (), "_cls": cls})


class Function(metaclass=_FunctionMeta):
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call with Cls.apply(*args).
    forward may instead take only the inputs when the class defines setup_context(ctx, inputs, output)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("jvp is not implemented for this Function")

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself.", DeprecationWarning, stacklevel=2)

    @classmethod
    def apply(cls, *args, **kwargs):
        T = _graph._TENSOR
        if any(isinstance(a, T.Tensor) and a._v is None and isinstance(a._a, _Tracer) for a in args):
            return _apply_under_transform(cls, args, kwargs)  # inside torch.func.grad / vmap / jacrev ...
        D = _graph._DISPATCH
        if D._fw_on and D._fwd.has_tangent([a for a in args if isinstance(a, T.Tensor)]):
            return D._fwd.custom_function(cls, args, kwargs)  # forward AD: through the Function's jvp
        return cls._apply_impl(args, kwargs)

    @classmethod
    def _apply_impl(cls, args, kwargs, ctx_box=None):
        T = _graph._TENSOR
        Tensor = T.Tensor
        ctx = cls._backward_cls()
        if ctx_box is not None:
            ctx_box.append(ctx)
        ctx._n_inputs = len(args)
        needs = tuple(isinstance(a, Tensor) and _graph._DISPATCH._req(a) for a in args)
        ctx.needs_input_grad = needs
        record = _gs.enabled and any(needs)
        custom_setup = cls.setup_context is not Function.setup_context
        with _force_grad(False):
            if custom_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if not record:
            return outputs
        ctx.edges = []
        ctx._edge_pos = []
        for i, a in enumerate(args):
            if needs[i]:
                ctx.edges.append(_graph._DISPATCH._edge(a))
                ctx._edge_pos.append((i, (a.shape, a._np_dtype())))
        ctx.diff = list(range(len(ctx.edges)))
        tensors = [needs[i] for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not all(tensors):  # (torch's next_functions: (None, 0) for a tensor input that does not require grad)
            ctx.absent_slots = tuple(k for k, need in enumerate(tensors) if not need)
        nondiff = {id(t) for t in ctx.non_differentiable}
        dirty = {id(t) for t in ctx.dirty_tensors}
        input_ids = {id(a) for a in args if isinstance(a, Tensor)}
        new_outs = []
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor):
                new_outs.append(o)
                continue
            if id(o) in dirty:
                t = o
            elif id(o) in input_ids or o._gfn is not None or o._rg:
                t = o.detach()  # an alias of the input (or an already-tracked tensor) with its own grad_fn
            else:
                t = o
            if id(o) not in nondiff and t._np_dtype().kind in "fc":
                t._rg = True
                t._gfn = ctx
                if k:
                    t._onr = k
                elif "_onr" in t.__dict__:
                    del t.__dict__["_onr"]
                if id(o) in dirty:
                    t._rebases += 1
                    t._bump()
            else:
                t._rg = False
            new_outs.append(t)
        ctx.out_refs = [None] * len(new_outs)
        ctx.out_meta = [(o.shape, o._np_dtype()) if isinstance(o, Tensor) else ((), np.dtype(np.float32))
                        for o in new_outs]
        saved = getattr(ctx, "to_save", ()) or ()
        ctx._saved = list(saved)
        ctx._saved_versions = [t._st.version if (t is not None and t._st is not None) else 0 for t in saved]
        # saved outputs must be the returned tensors
        out_map = {id(o): n for o, n in zip(outs, new_outs) if isinstance(o, Tensor)}
        ctx._saved = [out_map.get(id(t), t) if t is not None else None for t in ctx._saved]
        ctx.out_refs = None
        return new_outs[0] if single else tuple(new_outs)


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        self.inplace = inplace


class NestedIOFunction(Function):
    """torch's legacy autograd.Function base for nested inputs and outputs; define forward/backward as for
    Function."""


def once_differentiable(fn):
    """Decorator for backward(): run it without building a graph of the gradient."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with _force_grad(False):
            return fn(ctx, *args)
    return wrapper


_FUNCTORCH_SETUP_MSG = ("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), "
                        "it must override the setup_context staticmethod. For more details, please see "
                        "https://pytorch.org/docs/main/notes/extending.func.html")


class _TransformCtx(FunctionCtx):
    """The ctx of a Function applied inside a torch.func transform (no graph node: the transform differentiates)."""

    def __init__(self, needs):
        self.to_save = ()
        self.non_differentiable = ()
        self.dirty_tensors = ()
        self.materialize_grads = True
        self.needs_input_grad = needs

    @property
    def saved_tensors(self):
        return tuple(self.to_save)


def _value_of(x):
    """The concrete Array under a (value-carrying) tracer, or None when the trace is abstract."""
    while isinstance(x, _Tracer):
        x = getattr(x, "val", None)
    return x if isinstance(x, _Array) else None


def _apply_under_transform(cls, args, kwargs):
    """Function.apply on tensors that hold tracers (inside torch.func.grad, vjp, jacrev, vmap, ...): as torch.func,
    the Function must define setup_context; its backward is the vjp rule (a custom_vjp), and under vmap the forward
    and backward are batched as they are written (torch's generate_vmap_rule)."""
    if cls.setup_context is Function.setup_context:
        raise RuntimeError(_FUNCTORCH_SETUP_MSG)
    T = _graph._TENSOR
    from .. import numpy as _fnp
    from .._jax.api import ShapeDtypeStruct as _ShapeDtype, pure_callback as _pure_callback
    from .._src.core.errors import ConcretizationError
    from .._src.interpreters.custom import custom_vjp
    pos = [i for i, a in enumerate(args) if isinstance(a, T.Tensor)]
    needs = tuple(i in pos for i in range(len(args)))

    def tensors_for(arrs):
        targs = list(args)
        for i, a in zip(pos, arrs):
            targs[i] = T._wrap(a) if type(a) is _Array else T._traced(a)
        return tuple(targs)

    def unwrap(out):
        if isinstance(out, tuple):
            return tuple(unwrap(o) for o in out)
        return out._arr() if isinstance(out, T.Tensor) else out

    def run(arrs):
        targs = tensors_for(arrs)
        with _force_grad(False):
            return targs, cls.forward(*targs, **kwargs)

    def fun(*arrs):
        return unwrap(run(arrs)[1])

    def fwd(*arrs):
        targs, out = run(arrs)
        ctx = _TransformCtx(needs)
        cls.setup_context(ctx, targs, out)
        return unwrap(out), ctx

    def bwd(ctx, cts):
        single = not isinstance(cts, tuple)
        cts = (cts,) if single else cts
        gs = cls.backward(ctx, *[T._wrap(c) if type(c) is _Array else T._traced(c) for c in cts])
        gs = gs if isinstance(gs, tuple) else (gs,)
        if len(gs) < len(args):
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {len(args)}, got {len(gs)})")
        outs = []
        for i in pos:
            g = gs[i]
            outs.append(_fnp.zeros_like(args[i]._arr()) if g is None else unwrap(g))
        return tuple(outs)

    arrs = [args[i]._arr() for i in pos]
    f = custom_vjp(fun)
    f.defvjp(fwd, bwd)
    f.__name__ = cls.__name__
    try:
        out = f(*arrs)
    except ConcretizationError:
        # forward leaves torch (x.numpy(), say), so it cannot be traced: as torch.func does, run it on the
        # inputs' values (a host callback), with backward as its vjp rule
        concrete = [_value_of(a) for a in arrs]
        if any(c is None for c in concrete):
            raise RuntimeError(f"{cls.__name__}.forward needs concrete tensors (it converts them to NumPy or Python "
                               "values), which this transform (vmap, or a function under jit) does not have; funcgrad "
                               "cannot batch such a Function. Write forward with torch operations.") from None
        probe = unwrap(run(concrete)[1])
        shapes = tuple(_ShapeDtype(o.shape, o.dtype) for o in probe) if isinstance(probe, tuple) \
            else _ShapeDtype(probe.shape, probe.dtype)

        def host(*nps):
            res = unwrap(run([_fnp.asarray(v) for v in nps])[1])
            return tuple(np.asarray(r) for r in res) if isinstance(res, tuple) else np.asarray(res)

        f = custom_vjp(lambda *xs: _pure_callback(host, shapes, *xs))
        f.defvjp(fwd, bwd)
        f.__name__ = cls.__name__
        out = f(*arrs)
    if isinstance(out, tuple):
        return tuple(T._wrap(o) if type(o) is _Array else T._traced(o) for o in out)
    return T._wrap(out) if type(out) is _Array else T._traced(out)
