"""The torch names funcgrad lacks: walks torch's public names (torch, Tensor methods, nn, nn.functional, optim,
utils.data, autograd, distributions) against funcgrad's and writes docs/torch-coverage.md, a table of what is
missing with the reason for each (needs torch installed).

    python tools/torch_coverage.py            # rewrite docs/torch-coverage.md
    python tools/torch_coverage.py --check    # list names missing and not in the table (exit 1 if any)

tests/test_torch_coverage.py fails when a torch name goes missing that the table does not list.
"""
from __future__ import annotations

import importlib
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # (this checkout's funcgrad, not an installed one)
PAGE = ROOT / "docs" / "torch-coverage.md"

# (torch's namespace, funcgrad's): the Tensor class is walked for its methods and properties
NAMESPACES = ["torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.optim", "torch.utils.data",
              "torch.autograd", "torch.distributions"]

# Why a name is missing, by pattern, first match wins. Keep the reasons short: the page is a table.
REASONS = [
    (r"^(cudnn_|miopen_|mkldnn_|fbgemm_|to_mkldnn$|is_vulkan_available$|mtia$|ipu$|xpu$|Stream$|Event$|"
     r"StreamObjType$|AcceleratorError$|OutOfMemoryError$|get_device_module$|.*_(ipu|xla)_.*|"
     r"profiler_allow_cudagraph.*|init_num_threads$|compiled_with_cxx11_abi$|has_(lapack|mkl|openmp|spectral)$|"
     r"USE_.*|prepare_multiprocessing_environment$)",
     "device backend or build detail (CUDA/ROCm/oneDNN/FBGEMM/XPU/MTIA kernels; funcgrad is a CPU library)"),
    (r"^(q[a-z_]*|Q.*Storage|quantiz.*|.*quantize.*|int_repr|dequantize|per_(channel|tensor)_.*|ao|"
     r"choose_qparams_optimized|fused_moving_avg_obs_fake_quant|qat|quantizable|intrinsic|quint.*|qint.*)$",
     "quantization (no quantized tensors)"),
    (r"^(.*crow_indices.*|.*col_indices.*|.*row_indices.*|sparse_(bsc|bsr|csc|csr|compressed)_tensor|"
     r"to_sparse_(bsc|bsr|csc|csr)|sspaddmm|hspmm|smm|dsmm|hsmm|saddmm|sparse_mask|sparse_resize_.*|"
     r"resize_as_sparse_|values_copy|indices_copy)$",
     "sparse compressed layouts (CSR/CSC/BSR/BSC; COO is implemented)"),
    (r"^(float8_.*|float4_.*|u?int[1-7]|bits.*|complex32|chalf|bit)$", "dtype without a NumPy storage type"),
    (r"^(Sym.*|sym_.*)$", "symbolic shapes (torch.compile's tracer internals)"),
    (r"^(.*Type|Script.*|Graph|GraphExecutorState|Node|Value|Block|Use|Code|CompilationUnit|ConcreteModuleType.*|"
     r"AliasDb|Argument|ArgumentSpec|CompleteArgumentSpec|FunctionSchema|ErrorReport|ExecutionPlan|Gradient|"
     r"FileCheck|LiteScriptModule|StaticModule|JITException|TracingState|CallStack|InferredType|IODescriptor|"
     r"parse_ir|parse_schema|parse_type_comment|merge_type_from_type_comment|unify_type_list|"
     r"import_ir_module.*|fork|wait|Future|Capsule|Tag|DeepCopyMemoTable|OperatorInfo|PRIVATE_OPS|"
     r"AggregationType|AVG|SUM|LoggerBase|LockingLogger|NoopLogger|ThroughputBenchmark|Benchmark.*|"
     r"(De)?[sS]erializationStorageContext|ScriptModuleSerializer|PyTorchFile(Reader|Writer)|DispatchKey.*|"
     r"ExcludeDispatchKeyGuard|DisableTorchFunction.*|classes|cpp|FatalError|classproperty|jit_.*|"
     r"get_file_path|from_file|thread_safe_generator|hash_tensor|slice_inverse)$",
     "TorchScript / C++ runtime internals (funcgrad traces with its own jit; torch.jit.script is not emulated)"),
    (r"^(native_.*|batch_norm_(backward_.*|elemt|gather_stats.*|stats|update_stats)|rnn_(relu|tanh)(_cell)?|"
     r"lstm(_cell)?|gru(_cell)?|conv_tbc|convolution|grid_sampler(_[23]d)?|affine_grid_generator|"
     r"embedding_renorm_|norm_except_dim|segment_reduce|unsafe_.*|empty_permuted|empty_quantized|"
     r"grouped_mm|scaled_grouped_mm|scaled_mm|ScalingType|SwizzleType)$",
     "ATen kernel entry point (the public op it backs exists: nn.LSTM, F.grid_sample, F.batch_norm, ...)"),
    (r"^(.*DataPipe|DataChunk|datapipes|functional_datapipe|graph|graph_settings|"
     r"guaranteed_datapipes_determinism|non_deterministic|argument_validation|runtime_validation.*)$",
     "DataPipes (deprecated in torch, removed from torchdata)"),
    (r"^([A-Z][A-Za-z0-9]*Storage|StorageBase)$", "C++ storage base class (torch.TypedStorage, UntypedStorage and "
     "the legacy FloatStorage, ... exist)"),
    (r"^(export|nested|masked|package|signal|monitor|library|functional|quasirandom|version|torch_version|"
     r"return_types|builtins|Container|common_types|anomaly_mode|profiler_legacy|profiler_util|"
     r"[a-z_]+)$",
     None),  # (module-valued names are classified by _reason below)
]

MODULE_REASONS = {
    "export": "torch.export: program capture to an ExportedProgram (funcgrad exports through jit and ONNX)",
    "monitor": "torch.monitor (event counters for the C++ runtime) is not implemented",
    "library": "torch.library (issue 26, in progress)",
    "quasirandom": "SobolEngine is not implemented",
    "version": "torch.version (build metadata)", "torch_version": "torch.torch_version (build metadata)",
    "anomaly_mode": "module path (the classes are at torch.autograd: detect_anomaly, set_detect_anomaly)",
    "profiler_legacy": "legacy profiler module (torch.autograd.profiler exists)",
    "profiler_util": "profiler helper module (torch.autograd.profiler exists)",
    "common_types": "typing aliases module", "types": "typing aliases module",
    "datapipes": "DataPipes (deprecated in torch, removed from torchdata)",
    "graph_settings": "DataPipes (deprecated in torch, removed from torchdata)",
    "quantizable": "quantizable LSTM / MultiheadAttention (torch.ao.nn.quantizable) are not implemented",
}

SPECIFIC = {
    "torch.Container": "deprecated since torch 0.4", "torch.nn.Container": "deprecated since torch 0.4",
    "torch.Tensor.reinforce": "removed in torch 0.4 (raises in torch)", "torch.Tensor.map2_": "legacy (CPU-only, undocumented)",
    "torch.Tensor.module_load": "hook of nn.Module.load_state_dict(assign=...) for tensor subclasses",
    "torch.Tensor.grad_dtype": "per-tensor gradient dtype override (new in torch 2.10)",
    "torch.Tensor.index": "internal (indexing goes through __getitem__)",
    "torch.optim.Muon": "new in torch 2.9; not implemented",
    "torch.optim.swap_in_optimizer_params_and_state": "internal helper",
    "torch.nn.LinearCrossEntropyLoss": "new in torch 2.13 (fused Linear + CrossEntropyLoss); not implemented",
    "torch.nn.LinearCrossEntropyOptions": "new in torch 2.13; not implemented",
    "torch.nn.functional.linear_cross_entropy": "new in torch 2.13; not implemented",
    "torch.nn.CrossMapLRN2d": "legacy Lua-torch module (nn.LocalResponseNorm exists)",
    "torch.BufferDict": "C++ (pybind) helper class, undocumented (nn.ParameterDict and module buffers exist)",
    "torch.ModuleDict": "re-export of nn.ModuleDict at torch's top level (use nn.ModuleDict)",
    "torch.ParameterDict": "re-export of nn.ParameterDict at torch's top level (use nn.ParameterDict)",
    "torch.GradScaler": "use torch.amp.GradScaler",
    "torch.eig": "removed in torch 1.13 (raises in torch; use torch.linalg.eig)",
    "torch.symeig": "removed in torch 1.13 (raises in torch; use torch.linalg.eigh)",
    "torch.lobpcg": "not implemented (torch.linalg.eigh covers dense problems)",
    "torch.embedding_bag": "not implemented (F.embedding_bag / nn.EmbeddingBag exist)",
    "torch.is_distributed": "undocumented alias of Tensor.is_distributed",
    "torch.while_loop": "higher-order op for torch.compile (funcgrad.lax.while_loop is the functional loop)",
    "torch.autograd.SavedTensor": "C++ saved-variable handle (autograd.graph.saved_tensors_hooks see the packed values instead)",
    "torch.autograd.is_multithreading_enabled": "the backward pass runs on the calling thread",
    "torch.autograd.set_multithreading_enabled": "the backward pass runs on the calling thread",
    "torch.autograd.is_view_replay_enabled": "view replay is a C++ autograd option",
    "torch.autograd.enforce_grad_layout_policy": "gradient memory layouts (strides) are not modelled",
    "torch.autograd.kineto_available": "the Kineto profiler backend",
    "torch.utils.data.graph": "DataPipes (deprecated in torch, removed from torchdata)",
    "torch.autograd.DeviceType": "profiler device enum", "torch.autograd.ProfilerActivity": "profiler enum",
    "torch.autograd.ProfilerConfig": "Kineto profiler config", "torch.autograd.ProfilerEvent": "Kineto event",
    "torch.autograd.ProfilerState": "profiler enum",
}


def _public_names(obj) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def _is_noise(torch_obj, name: str, value) -> bool:
    """Names that are not torch's API: imported stdlib modules, typing helpers, TYPE_CHECKING."""
    if name in ("TYPE_CHECKING", "torch") or name == "Tensor" and torch_obj.__name__ != "torch":
        return True
    if isinstance(value, types.ModuleType):
        return not value.__name__.startswith("torch")
    mod = getattr(value, "__module__", None) or ""
    if mod.split(".")[0] in ("typing", "collections", "abc", "builtins", "warnings", "dataclasses", "functools",
                             "typing_extensions", "numpy", "inspect"):
        return True
    return name in ("handle_torch_function", "has_torch_function", "has_torch_function_unary",
                    "has_torch_function_variadic", "boolean_dispatch", "assert_int_or_pair", "is_tensor_like",
                    "BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "DType", "np", "cast",
                    "overload", "reproducibility_notes", "sparse_support_notes", "tf32_notes")


def _resolve(path: str, root):
    obj = root
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def missing() -> dict[str, object]:
    """{qualified torch name: torch's object} for every public torch name funcgrad lacks."""
    import torch

    import funcgrad
    for m in ("nn", "nn.functional", "optim", "utils.data", "autograd", "distributions"):
        importlib.import_module("funcgrad." + m)
    out = {}
    for ns in NAMESPACES:
        t, f = _resolve(ns, torch), _resolve(ns, funcgrad)
        for name in _public_names(t):
            value = getattr(t, name, None)
            if _is_noise(t, name, value) or hasattr(f, name):
                continue
            out[f"{ns}.{name}"] = value
    return out


def reason(qualname: str, value) -> str:
    if qualname in SPECIFIC:
        return SPECIFIC[qualname]
    name = qualname.rsplit(".", 1)[1]
    if isinstance(value, types.ModuleType):
        if name in MODULE_REASONS:
            return MODULE_REASONS[name]
        if qualname.startswith(("torch.distributions.", "torch.nn.", "torch.optim.", "torch.utils.data.")):
            return "module path (its classes are importable from the package; the dotted paths: issue 26)"
    for pattern, why in REASONS:
        if why and re.match(pattern, name):
            return why
    return "not implemented"


def table(names: dict) -> str:
    rows = [f"| `{q}` | {reason(q, v)} |" for q, v in sorted(names.items())]
    return "\n".join(["| name | why it is missing |", "|---|---|", *rows])


HEADER = """# What torch has that funcgrad lacks

`import funcgrad as torch` covers the public API that models and training loops use. This page lists every public name of torch 2.13 in `torch`, `torch.Tensor`, `torch.nn`,
`torch.nn.functional`, `torch.optim`, `torch.utils.data`, `torch.autograd` and `torch.distributions` that funcgrad
does not have, and why. It is generated by `python tools/torch_coverage.py` (which needs torch installed);
`tests/test_torch_coverage.py` fails when a name goes missing that is not listed here. (Imported helper modules
and typing aliases in torch's namespaces, such as `torch.nn.functional.Callable`, are not counted.)

{tutorial_line}

"""


# Names torch's own tutorials use beyond the beginner ones, with what uses them: the header says which are missing.
TUTORIAL_NAMES = {
    "torch.export": "the torch.export tutorials", "torch.ao": "the quantization tutorials",
    "torch.nested": "nested tensors", "torch.masked": "MaskedTensor", "torch.package": "hermetic model archives",
    "torch.fork": "TorchScript's asynchronous execution", "torch.wait": "TorchScript's asynchronous execution",
    "torch.Stream": "streams", "torch.Event": "streams", "torch.library": "custom operators",
}


def tutorial_line(names) -> str:
    """The header's sentence on tutorial-used names: those in `names` (the missing ones), or that none is."""
    gone = [f"`{n}` ({why})" for n, why in TUTORIAL_NAMES.items() if n in names]
    if not gone:
        return ("Every name torch's tutorials use is present (the tutorial-used names tracked here: "
                + ", ".join(f"`{n}`" for n in TUTORIAL_NAMES) + ").")
    return "Missing names that torch's tutorials use: " + ", ".join(gone) + "."


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    names = missing()
    if "--check" in argv:
        listed = listed_names()
        new = sorted(set(names) - listed)
        print("\n".join(new) or "none missing beyond the table")
        return 1 if new else 0
    counts = {}
    for q in names:
        ns = max((n for n in NAMESPACES if q.startswith(n + ".")), key=len)
        counts[ns] = counts.get(ns, 0) + 1
    summary = "\n".join(f"- `{ns}`: {counts.get(ns, 0)} missing" for ns in NAMESPACES)
    PAGE.write_text(HEADER.replace("{tutorial_line}", tutorial_line(names)) + summary + "\n\n" + table(names) + "\n")
    print(f"wrote {PAGE} ({len(names)} names)")
    return 0


def listed_names() -> set[str]:
    """The names docs/torch-coverage.md's table lists."""
    return set(re.findall(r"^\| `([^`]+)` \|", PAGE.read_text(), re.M))


if __name__ == "__main__":
    sys.exit(main())
