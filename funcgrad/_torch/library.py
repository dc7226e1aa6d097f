"""torch.library's `custom_op`: a Python function registered as an operator, with an abstract ("fake") rule
and an autograd rule, as torch.library.custom_op (funcgrad's answer to a C++ extension's op registration).

    @funcgrad.library.custom_op("mylib::mysin", mutates_args=())
    def mysin(x: Tensor) -> Tensor:
        return funcgrad.sin(x)

    mysin.register_fake(lambda x: funcgrad.empty_like(x))
    mysin.register_autograd(lambda ctx, g: g * ctx.saved_tensors[0].cos(),
                            setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))

Calls run the function without recording it; with an autograd rule registered, the call is an
autograd.Function whose backward is that rule, so gradients flow through the op (and through it again
with create_graph when the rule is written with tensor operations)."""
from __future__ import annotations

import inspect
from typing import Callable, Iterable, Optional, Union

from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ._tensor import Tensor

__all__ = ["custom_op", "CustomOpDef", "infer_schema"]

_OPS: dict = {}  # "ns::name" -> CustomOpDef


def infer_schema(fn: Callable, *, mutates_args=(), op_name: Optional[str] = None) -> str:
    """The operator schema torch infers from fn's annotations, e.g. "(Tensor x, float y) -> Tensor"; every
    parameter must be annotated (torch's ValueError otherwise)."""
    try:   # (string annotations, as under `from __future__ import annotations`, resolved as torch does)
        sig = inspect.signature(fn, eval_str=True)
    except (NameError, SyntaxError, TypeError):
        sig = inspect.signature(fn)
    names = {Tensor: "Tensor", float: "float", int: "int", bool: "bool", str: "str"}
    parts = []
    for p in sig.parameters.values():
        if p.annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {p.name} must have a type annotation. Got func with "
                             f"signature {sig})")
        ann = p.annotation
        tname = names.get(ann, ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann)))
        parts.append(f"{tname} {p.name}")
    ret = sig.return_annotation
    rname = "()" if ret in (None, inspect.Signature.empty) else names.get(ret, getattr(ret, "__name__", str(ret)))
    return f"({', '.join(parts)}) -> {rname}"


class CustomOpDef:
    """What custom_op returns: call it as the function; register_fake / register_autograd / register_kernel
    attach its other rules."""

    def __init__(self, namespace: str, name: str, fn: Callable, mutates_args, schema: str) -> None:
        self._namespace, self._name, self._schema, self._mutates_args = namespace, name, schema, mutates_args
        self._init_fn = self._kernel = fn      # the kernel until register_kernel replaces it
        # the rules register_fake and register_autograd attach (none yet), and the Function built from them
        self._abstract_fn = self._backward_fn = self._setup_context_fn = self._fn_cls = None

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def register_fake(self, fn: Callable) -> Callable:
        """fn(*args) -> outputs of the right shapes and dtypes without computing them (the op's abstract rule,
        kept for tracing tools: funcgrad's eager calls run the kernel)."""
        self._abstract_fn = fn
        return fn

    def register_kernel(self, device_types, fn: Optional[Callable] = None):
        """Replaces the implementation for the given device types (funcgrad has the CPU only)."""
        def inner(f):
            types = (device_types,) if isinstance(device_types, str) or device_types is None else device_types
            if any(t in (None, "cpu") for t in types):
                self._kernel = f
            return f
        return inner(fn) if fn is not None else inner

    def register_autograd(self, backward: Callable, *, setup_context: Optional[Callable] = None) -> None:
        """backward(ctx, *grad_outputs) -> one gradient per input (None for non-tensors);
        setup_context(ctx, inputs, output) saves what backward needs (ctx.save_for_backward, attributes)."""
        self._backward_fn, self._setup_context_fn = backward, setup_context
        op = self

        class _Op(Function):
            @staticmethod
            def forward(ctx, kwargs, *args):
                out = op._kernel(*args, **kwargs)
                if op._setup_context_fn is not None:
                    op._setup_context_fn(ctx, args, out)
                return out

            @staticmethod
            def backward(ctx, *grads):
                g = op._backward_fn(ctx, *grads)
                g = tuple(g) if isinstance(g, (tuple, list)) else (g,)
                return (None, *g)

        _Op.__name__ = _Op.__qualname__ = f"{self._namespace}_{self._name}"
        self._fn_cls = _Op

    def __call__(self, *args, **kwargs):
        if self._fn_cls is not None:
            return self._fn_cls.apply(kwargs, *args)
        needs_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = self._kernel(*args, **kwargs)
        if not needs_grad:
            return out
        return _no_formula(self).apply(out, *[a for a in args if isinstance(a, Tensor)])


def _no_formula(op: CustomOpDef):
    """A Function of the op's tensor inputs returning its output, whose backward raises torch's error for an
    op with no autograd rule."""
    class _NoAutograd(Function):
        @staticmethod
        def forward(ctx, out, *inputs):
            return out.clone() if isinstance(out, Tensor) else out

        @staticmethod
        def backward(ctx, *grads):
            raise RuntimeError(f"Trying to backward through {op._namespace}.{op._name}.default but no autograd "
                               "formula was registered. Please use register_autograd to add one.")
    return _NoAutograd


def custom_op(name: str, fn: Optional[Callable] = None, /, *, mutates_args: Union[str, Iterable[str]],
              device_types=None, schema: Optional[str] = None):
    """Registers fn as the operator "namespace::name" (decorator, or called with fn): see the module docstring."""
    if "::" not in name:
        raise ValueError(f"Expected there to be a namespace in {name}, i.e. The operator name should look "
                         "something like ns::foo")
    namespace, opname = name.split("::", 1)

    def inner(f):
        op = CustomOpDef(namespace, opname, f, mutates_args,
                         schema if schema is not None else infer_schema(f, mutates_args=mutates_args))
        _OPS[name] = op
        return op
    return inner(fn) if fn is not None else inner
