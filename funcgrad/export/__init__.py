"""funcgrad.export (torch.export): capture a Module's forward as a graph of torch functions, with its parameters
and buffers lifted to inputs, for inspection, transformation, saving and running without the Python class.

    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    print(ep)                       # the graph, its signature and the ranges of the dynamic sizes
    ep.module()(x2)                 # a GraphModule: checks x2's shape against the export, then runs the graph
    torch.export.save(ep, "m.pt2"); ep2 = torch.export.load("m.pt2")
    b = torch.export.Dim("b")       # derived Dims: sizes that are increasing affine functions of a Dim
    torch.export.export(m2, (x, y), dynamic_shapes={"x": {0: 2 * b + 1}, "y": {0: b}})

How it differs from torch's: the graph calls funcgrad's torch-level functions (`torch.nn.functional.linear`,
`operator.add`, `Tensor.view`) where torch's calls ATen operators (`torch.ops.aten.linear.default`); sizes are
symbolic only where dynamic_shapes asks (the tracer runs on the example values, see _trace.py), and a dynamic
size the program specialises is found by running the graph again at a second size. The .pt2 file is torch's
format (ATen operators, symbolic sizes, torch.cond; see _serialize.py and _aten.py): torch.export.load reads
funcgrad's and funcgrad reads torch's. Not implemented: strict mode's TorchDynamo checks (strict=True traces
as strict=False), preserve_module_call_signature, draft_export's report.
"""
from __future__ import annotations

import inspect
import sys

from .. import _torch as _T
from .._torch._tensor import Tensor
from .._torch._dispatch import _apply as _tensor_apply
from ..fx import tracer as _fx_tracer
from ..fx.graph_module import GraphModule
from ..fx.node import torch_namespace
from ..nn.modules.module import Module
from ._serialize import load, save
from ._sizes import annotate
from .._torch._cond import cond as _eager_cond
from ._trace import Derived, ExportProxy, ExportTracer, Symbol, _export_cond, flatten, unflatten_spec
from .dynamic_shapes import (ConstraintViolationError, Dim, GuardOnDataDependentSymNode, ShapesCollection,
                             UserError, _DerivedDim, _DimHint, _EXPORT_HINT, _affine_name, dims, int_oo)
from .exported_program import CustomDecompTable, ExportedProgram, default_decompositions, range_constraints_of
from .graph_signature import (ConstantArgument, ExportBackwardSignature, ExportGraphSignature, InputKind, InputSpec,
                              OutputKind, OutputSpec, TensorArgument)

__all__ = ["export", "draft_export", "ExportedProgram", "Dim", "dims", "ShapesCollection", "save", "load",
           "unflatten", "UnflattenedModule", "default_decompositions", "CustomDecompTable", "ExportGraphSignature",
           "ExportBackwardSignature", "InputKind", "OutputKind", "InputSpec", "OutputSpec", "TensorArgument",
           "ConstantArgument", "UserError", "ConstraintViolationError", "GuardOnDataDependentSymNode"]


def export(mod: Module, args: tuple, kwargs: dict | None = None, *, dynamic_shapes=None, strict: bool = False,
           preserve_module_call_signature: tuple = ()) -> ExportedProgram:
    """Trace mod(*args, **kwargs) into an ExportedProgram (torch.export.export).

    dynamic_shapes gives, per input (a dict keyed by forward's argument names, or a tuple in their order), the
    sizes that may vary: `{dim: Dim(...)}` or a per-dimension tuple of Dim / Dim.AUTO / Dim.DYNAMIC /
    Dim.STATIC / None. Every other size is fixed at the example's, and module() checks it on each call.

    >>> ep = torch.export.export(torch.nn.Linear(4, 2), (torch.randn(3, 4),))
    >>> ep.module()(torch.randn(3, 4)).shape
    torch.Size([3, 2])"""
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expected `args` to be a tuple, got {type(args)}")
    kwargs = dict(kwargs or {})
    sig = inspect.signature(mod.forward)
    try:
        sig.bind(*args, **kwargs)
    except TypeError as e:
        raise UserError(f"export: the inputs do not match {type(mod).__name__}.forward{sig}: {e}") from None
    names = _arg_names(sig, args, kwargs)
    specs = _per_argument(dynamic_shapes, names, list(args) + list(kwargs.values()))
    values = list(args) + list(kwargs.values())

    tracer = ExportTracer(mod)
    tracer.lift_state()
    symbols: dict = {}  # Dim name -> Symbol, (root name, a, b) -> Derived; "": roots only derived Dims use so far
    guards: list = []
    leaves_in, in_spec = flatten((tuple(args), kwargs))
    sub_leaves = [flatten(v) for v in values]
    traced_leaves = []
    direct: dict = {}  # Dim name -> (size, source) where a plain Dim first sizes an input: roots of derived Dims
    for name, (leaves, _), spec in zip(names, sub_leaves, specs):
        for i, (leaf, dspec) in enumerate(zip(leaves, _spec_leaves(spec, len(leaves), name))):
            if isinstance(leaf, Tensor):
                for d, (n, s) in enumerate(zip(leaf.shape, _per_dim(leaf, dspec, f"L['{name}']"))):
                    if isinstance(s, Dim) and not isinstance(s, _DerivedDim):
                        direct.setdefault(s.__name__, n)
    symbols["direct"] = direct
    for name, (leaves, _), spec in zip(names, sub_leaves, specs):
        per_leaf = _spec_leaves(spec, len(leaves), name)
        for i, (leaf, dspec) in enumerate(zip(leaves, per_leaf)):
            ph_name = name if len(leaves) == 1 and not isinstance(values[names.index(name)], (tuple, list, dict)) \
                else f"{name}_{i}"
            node = tracer.graph.placeholder(ph_name)
            if tracer._first_user is None:
                tracer._first_user = node
            if isinstance(leaf, Tensor):
                val = leaf.detach().clone()
                dyn = _dims_of(val, dspec, f"L['{name}']" + ("" if ph_name == name else f"[{i}]"), symbols)
                node.meta["val"], node.meta["dyn"] = val, dyn
                guards.append((node.name, "tensor", [s if s is not None else n for n, s in zip(val.shape, dyn)]))
                traced_leaves.append(ExportProxy(node, tracer, val))
            else:
                node.meta["val"] = leaf
                guards.append((node.name, "const", leaf))
                traced_leaves.append(leaf)
    del symbols["direct"]
    sizes = [v for k, v in symbols.items() if k != ""] + list(symbols.get("", {}).values())
    roots = [v for v in sizes if isinstance(v, Symbol)]
    tracer.symbols.extend(sizes)
    t_args, t_kwargs = unflatten_spec(traced_leaves, in_spec)

    forward = getattr(type(mod), "forward")
    facade = torch_namespace()
    with _fx_tracer._Patched(tracer, getattr(inspect.unwrap(forward), "__globals__", None)) as ctx:
        _fx_tracer._set(facade, "cond", _export_cond, ctx.saved)
        _patch_internals(mod, getattr(inspect.unwrap(forward), "__globals__", {}), ctx.saved)
        result = forward(mod, *t_args, **t_kwargs)
        out_leaves, out_spec = flatten(result)
        out_args = tuple(tracer.create_arg(x) if isinstance(x, (ExportProxy, Tensor)) else x for x in out_leaves)
        tracer.graph.output(out_args)

    input_specs = []
    for node in tracer.graph.nodes:
        if node.op != "placeholder":
            continue
        hit = next((v for v in tracer.state.values() if v[2].node is node), None)
        if hit is None:
            input_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.name) if isinstance(
                node.meta.get("val"), Tensor) else ConstantArgument(node.name, node.meta.get("val")), None))
        else:
            kind, target, _, persistent = hit
            input_specs.append(InputSpec(InputKind[kind], TensorArgument(node.name), target,
                                         persistent if kind == "BUFFER" else None))
    output_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(a.name) if hasattr(a, "op") else
                               ConstantArgument("", a), None) for a in out_args]
    state = dict(mod.state_dict(keep_vars=True))
    constants = dict(tracer.constants)
    for name, b in mod.named_buffers():
        if name not in state:
            constants[name] = b
    state_dict = {s.target: state[s.target] for s in input_specs
                  if s.kind in (InputKind.PARAMETER, InputKind.BUFFER) and s.target in state}
    ep = ExportedProgram(tracer.submodules, tracer.graph, ExportGraphSignature(input_specs, output_specs),
                         state_dict, range_constraints_of(sizes), constants=constants,
                         example_inputs=(tuple(args), kwargs), in_spec=in_spec, out_spec=out_spec, guards=guards)
    if roots:
        _check_specialization(ep, leaves_in, roots)
    return ep


def _patch_internals(mod: Module, fn_globals: dict, saved: list) -> None:
    """Beyond funcgrad.fx's wrappers: record torch.cond, the functions of funcgrad._torch that modules call
    (`_fg.relu`), and the functions modules keep as class attributes (`_fn = staticmethod(F.conv2d)`)."""
    for k, v in list(fn_globals.items()):
        if v is _eager_cond or getattr(v, "__fx_orig__", None) is _eager_cond:
            _fx_tracer._set(fn_globals, k, _export_cond, saved)
    for k, v in list(vars(_T).items()):
        r = _fx_tracer._originals.get(id(v))
        if r is not None and r.__fx_orig__ is v:
            _fx_tracer._set(_T, k, r, saved)
    seen = set()
    for m in mod.modules():
        for cls in type(m).__mro__:
            if cls in seen or cls is object:
                continue
            seen.add(cls)
            g = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
            if g.get("_apply") is _tensor_apply:  # fused Array-level kernels (nn.LSTM's scan): one node each
                _fx_tracer._set(g, "_apply", _fx_tracer._recording(_tensor_apply), saved)
            for k, v in list(vars(cls).items()):
                if isinstance(v, staticmethod):
                    r = _fx_tracer._originals.get(id(v.__func__))
                    if r is not None and r.__fx_orig__ is v.__func__:
                        _fx_tracer._set(cls, k, staticmethod(r), saved)


UnflattenedModule = GraphModule


def unflatten(module: ExportedProgram, flat_args_adapter=None) -> GraphModule:
    """torch.export.unflatten: a Module with the exported program's submodule hierarchy of parameters and
    buffers (`m.fc.weight`). funcgrad's is `module()`: one graph over the whole program, not one per
    submodule call."""
    return module.module()


def draft_export(mod: Module, args: tuple, kwargs: dict | None = None, *, dynamic_shapes=None,
                 strict: bool = False, preserve_module_call_signature: tuple = ()) -> ExportedProgram:
    """torch.export.draft_export: export, raising the same errors (no report of further problems here)."""
    return export(mod, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict)


# --- dynamic_shapes --------------------------------------------------------------------------------------

def _arg_names(sig: inspect.Signature, args: tuple, kwargs: dict) -> list:
    """The names of forward's parameters that args (positionally, *args expanded) and kwargs fill."""
    names = []
    params = list(sig.parameters.values())
    for i in range(len(args)):
        p = params[min(i, len(params) - 1)]
        if p.kind == p.VAR_POSITIONAL:
            names.append(f"{p.name}_{i - params.index(p)}")
        else:
            names.append(params[i].name)
    names.extend(kwargs)
    return names


def _per_argument(dynamic_shapes, names: list, values: list) -> list:
    """dynamic_shapes as one spec per argument (None when absent)."""
    if dynamic_shapes is None:
        return [None] * len(names)
    if isinstance(dynamic_shapes, dict):
        if set(dynamic_shapes) != set(names):
            raise UserError("When `dynamic_shapes` is specified as a dict, its top-level keys must be the arg names "
                            f"{names} of `inputs`, but here they are {list(dynamic_shapes)}. Alternatively, you "
                            "could also ignore arg names entirely and specify `dynamic_shapes` as a list/tuple "
                            "matching `inputs`.")
        return [dynamic_shapes[n] for n in names]
    if isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(names):
            raise UserError(f"When `dynamic_shapes` is specified as a list/tuple, it must have one entry per input "
                            f"({len(names)}: {names}), but it has {len(dynamic_shapes)}.")
        return list(dynamic_shapes)
    raise UserError(f"dynamic_shapes must be a dict or a tuple/list, got {type(dynamic_shapes).__name__}")


def _spec_leaves(spec, n_leaves: int, name: str) -> list:
    """One per-tensor spec per leaf of an argument (nested structures of specs follow the argument's)."""
    if spec is None:
        return [None] * n_leaves
    if isinstance(spec, dict) and all(isinstance(k, int) for k in spec) or _is_dim_tuple(spec):
        return [spec] + [None] * (n_leaves - 1)
    leaves, _ = flatten(spec) if isinstance(spec, (tuple, list, dict)) else ([spec], None)
    out = []
    for s in (spec if isinstance(spec, (tuple, list)) else list(spec.values())):
        out.extend(_spec_leaves(s, 1, name))
    if len(out) != n_leaves:
        raise UserError(f"dynamic_shapes of {name!r} does not match the structure of the input")
    return out


def _is_dim_tuple(spec) -> bool:
    return isinstance(spec, (tuple, list)) and all(s is None or isinstance(s, (Dim, _DimHint, int)) for s in spec)


def _per_dim(val: Tensor, spec, source: str) -> list:
    """An input's spec as one entry per dimension."""
    per_dim = [None] * val.ndim
    if isinstance(spec, dict):
        for d, s in spec.items():
            if not -val.ndim <= d < val.ndim:
                raise UserError(f"dynamic_shapes of {source}: dimension {d} is out of range for a tensor of "
                                f"{val.ndim} dimensions")
            per_dim[d % val.ndim] = s
    elif spec is not None:
        if len(spec) != val.ndim:
            raise UserError(f"dynamic_shapes of {source}: expected {val.ndim} entries, one per dimension, got "
                            f"{len(spec)}")
        per_dim = list(spec)
    return per_dim


def _dims_of(val: Tensor, spec, source: str, symbols: dict) -> list:
    """The Symbol, Derived (or None: static) of each dimension of an example input."""
    per_dim = _per_dim(val, spec, source)
    out = []
    for i, (n, s) in enumerate(zip(val.shape, per_dim)):
        where = f"{source}.size()[{i}]"
        if s is None or isinstance(s, int) or s is Dim.STATIC or (s is Dim.AUTO and n < 2):
            out.append(None)
            continue
        if isinstance(s, _DerivedDim):
            out.append(_derived_size(s, n, i, where, symbols))
            continue
        if isinstance(s, _DimHint):
            s = Dim(f"dim{_n_roots(symbols)}", min=2)
        if n < 2:
            raise UserError(f"Constraints violated ({s.__name__})! For more information, run with "
                            f'TORCH_LOGS="+dynamic".\n  - You marked {s.__name__} as dynamic but your code '
                            f"specialized it to be a constant ({n}). If you're using mark_dynamic, either remove it "
                            "or use maybe_mark_dynamic. If you're using Dim.DYNAMIC, replace it with either "
                            f"Dim.STATIC or Dim.AUTO.\nSuggested fixes:\n  {s.__name__} = {n}")
        if n < s.min or (s.max is not int_oo and n > s.max):
            raise ConstraintViolationError(f"{n} not in range [{max(s.min, 2)}, {s.max!r}]" + _EXPORT_HINT)
        sym = symbols.get(s.__name__)
        if sym is None and s.__name__ in symbols.get("", {}):  # first seen through a derived Dim (same size)
            sym = symbols[s.__name__] = symbols[""].pop(s.__name__)
            sym.lo, sym.source = s.min, where
        if sym is None:
            sym = symbols[s.__name__] = Symbol(f"s{_n_roots(symbols)}", s.__name__, s.min, s.max, n, where)
        elif sym.hint != n:
            raise UserError(f"Constraints violated ({s.__name__})! {where} is {n} but {sym.source}, of the same Dim, "
                            f"is {sym.hint}: inputs sharing a Dim must have equal sizes")
        out.append(sym)
    return out


def _n_roots(symbols: dict) -> int:
    return sum(isinstance(v, Symbol) for v in symbols.values()) + len(symbols.get("", {}))


def _derived_size(s: _DerivedDim, n: int, i: int, where: str, symbols: dict) -> Derived:
    """The Derived size a*root + b of an input dimension given the derived Dim s, with torch's errors for a size
    outside s's range or not of s's form, and for sizes of one root that disagree (the root's size being that of
    an input it sizes directly, else the one the first derived size gives, which must be of s's form)."""
    if n < s.min or (s.max is not int_oo and n > s.max):
        raise ConstraintViolationError(f"{n} not in range [{s.min}, {s.max!r}]" + _EXPORT_HINT)
    root = s.root
    hidden = symbols.setdefault("", {})
    sym = symbols.get(root.__name__) or hidden.get(root.__name__)
    r = symbols["direct"].get(root.__name__, sym.hint if sym is not None else None)
    if sym is None and (n - s.b) % s.a:  # (the first size of a root not yet seen gives its value)
        raise UserError(f"Expected shape[{i}] = {n} of input Tensor to be of the form {s.__name__}, where "
                        f"{root.__name__} is an integer" + _EXPORT_HINT)
    r = (n - s.b) // s.a if r is None else r
    if s.a * r + s.b != n:
        raise UserError(f"Expected input {where} to be equal to {s.__name__}, where {root.__name__} = {r}, "
                        f"but got {n}" + _EXPORT_HINT)
    if sym is None:
        sym = hidden[root.__name__] = Symbol(f"s{_n_roots(symbols)}", root.__name__, max(root.min, 2), root.max,
                                             r, where)
    key = (root.__name__, s.a, s.b)
    if key not in symbols:
        symbols[key] = Derived(sym, s.a, s.b, s.__name__, s.min, s.max, where)
    return symbols[key]


def _check_specialization(ep: ExportedProgram, leaves: list, symbols: list) -> None:
    """Run the graph at a second size of each dynamic dimension (annotating each value's symbolic sizes): a
    failure means the program fixed that size (torch's "specialized it to be a constant" error), or, where it
    runs at the sizes k apart only (`x.view(n // 2, 2)`), needs a derived Dim (torch's "b = 2*_b" fix)."""
    by_name = {s.name: s for s in symbols}

    def error(moves: dict, e: Exception, run) -> UserError:
        name, step = next(((k, v) for k, v in moves.items() if v), (None, 0))
        if name is None:
            return UserError(f"export: the exported graph does not run on the example inputs: {e}")
        sym = by_name[name]
        failed = (f"running the exported graph with {sym.source} = {sym.hint + step} failed: {type(e).__name__}: "
                  f"{str(e).splitlines()[0] if str(e) else ''}")
        k = _period(sym, run)
        if k:
            b, hi = sym.hint % k, sym.hi if sym.hi is int_oo else (sym.hi - sym.hint % k) // k
            lo = -(-(max(sym.lo, 2) - b) // k)
            span = f"{sym.lo} <= {sym.dim_name}" if sym.lo > 2 else sym.dim_name
            span = f" {span} <= {sym.hi}" if sym.hi is not int_oo else f" {span}" if sym.lo > 2 else ""
            root = f"_{sym.dim_name}"
            fix = repr(Dim(root, min=lo, max=hi))  # torch's suggestion writes an unbounded max as sympy's oo
            fix = fix if hi is not int_oo else f"{fix[:-1]}, max=oo)"
            return UserError(
                f"Constraints violated ({sym.dim_name})! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
                f"  - Not all values of {sym.dim_name} = {sym.source} in the specified range{span}"
                f" satisfy the program: it runs only where {sym.dim_name} is {_affine_name(root, k, b)} ({failed})."
                f"\nSuggested fixes:\n  {root} = {fix}\n  {sym.dim_name} = {_affine_name(root, k, b)}"
                + _EXPORT_HINT)
        return UserError(
            f"Constraints violated ({sym.dim_name})! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
            f"  - You marked {sym.dim_name} as dynamic but your code specialized it to be a constant "
            f"({sym.hint}) ({failed}). If you're using Dim.DYNAMIC, replace it with either Dim.STATIC or Dim.AUTO."
            f"\nSuggested fixes:\n  {sym.dim_name} = {sym.hint}")
    annotate(ep, leaves, error)


def _period(sym: Symbol, run) -> int:
    """The smallest k in 2..8 such that the program runs with sym's size moved by k and by 2k (0: none)."""
    for k in range(2, 9):
        steps = [d for d in (k, 2 * k, -k, -2 * k) if _in_range(sym, sym.hint + d)][:2]
        if len(steps) == 2 and all(run({sym.name: d}, quiet=True) is not None for d in steps):
            return k
    return 0


def _in_range(sym: Symbol, n: int) -> bool:
    return max(sym.lo, 2) <= n and (sym.hi is int_oo or n <= sym.hi)
