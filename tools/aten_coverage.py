"""torch's ATen operators against funcgrad's one ATen table (funcgrad/_torch/_aten.py, which serves torch.ops.aten
and torch.export's .pt2 files): writes docs/aten-coverage.md, the operators covered (with their overloads) and the
ones missing, grouped by the reason (needs torch installed).

    python tools/aten_coverage.py            # rewrite docs/aten-coverage.md
    python tools/aten_coverage.py --check    # exit 1 when the page is stale or a table line differs from torch's schema

tests/test_aten_coverage.py regenerates the page and compares it, and checks every table line against torch.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # (this checkout's funcgrad, not an installed one)
PAGE = ROOT / "docs" / "aten-coverage.md"

# Why an operator is missing, by pattern on its name, first match wins. Short: the page is a table.
REASONS = [
    (r"(^|_)backward(_|$)|_backward_|^_?(cudnn|miopen)_.*_backward",
     "backward kernel: funcgrad differentiates the forward operator (its card's vjp), so torch.export's forward "
     "graphs never call these"),
    (r"^_foreach_|^_fused_(adam|adamw|sgd|adagrad)", "multi-tensor optimizer kernel (funcgrad's optimizers have "
     "their own update code)"),
    (r"cudnn|miopen|mkldnn|mps|_nnpack|xnnpack|fbgemm|cufft|cuda|_cslt|_cutlass|_flash|_efficient_attention|"
     r"_scaled_dot_product_(flash|efficient|cudnn|fused)|_mkl_|onednn|vulkan|_triton|_ck_|_weight_int|_int_mm|"
     r"^_convert_weight|_dyn_quant|_jagged|_scaled_mm|_grouped_mm|_use_cudnn|is_vulkan|_has_compatible",
     "device or backend kernel (CUDA/ROCm/oneDNN/MPS/FBGEMM/...; funcgrad is a CPU library)"),
    (r"quantiz|^q_|^_?fake_quant|^int_repr|^_make_per_|^_choose_qparams|^dequantize|_per_channel|_per_tensor|"
     r"^fused_moving_avg|^_saturate_weight|^choose_qparams|^_fused_moving",
     "quantization (torch.ops.quantized serves funcgrad's quantized kernels)"),
    (r"sparse|^_coalesce|^coalesce|^_indices|^indices|^_values|^values|crow_indices|col_indices|ccol_|row_indices|"
     r"^_nnz|^_dimI|^_dimV|^sparse_dim|^dense_dim|^to_dense|^_to_dense|^is_coalesced|^_coalesced|^hspmm|^smm|^sspaddmm|"
     r"^_spdiags|^spdiags|_csr|_bsr|_csc|_bsc|^_validate_compressed",
     "sparse layouts (funcgrad's sparse tensors are not ATen-dispatched)"),
    (r"nested", "nested tensors (funcgrad.nested is not ATen-dispatched)"),
    (r"^_?fft_|^_fft", "FFT kernel (torch.fft's functions are funcgrad.fft's)"),
    (r"^_?linalg_|^_?(cholesky|lu_|lu$|geqrf|ormqr|orgqr|triangular_solve|slogdet|logdet|det$|inverse|pinverse|"
     r"svd|qr$|eig|symeig|lstsq|matrix_exp|matrix_power|matrix_H|_lu_with_info|linalg|_det_lu|_lu_|lu_solve|"
     r"lu_unpack|cholesky_inverse|cholesky_solve|ldl|solve)",
     "linear algebra kernel (torch.linalg's functions are funcgrad.linalg's; not yet in the table)"),
    (r"^special_|^_special_", "torch.special kernel (funcgrad.special has the functions; not yet in the table)"),
    (r"^_?(rnn|lstm|gru)|_thnn_|^_pack_padded|^_pad_packed|^quantized_(rnn|lstm|gru)",
     "recurrent-network kernel (nn.LSTM/GRU/RNN are funcgrad modules, not one ATen call)"),
    (r"^sym_|^_sym|^_assert|^_functional_assert|^_print$|^_make_dep_token|^_check_|^_propagate_|^_nested|"
     r"^_to_functional|^_from_functional|^_sync|^_freeze|^_functionalize|^_enable_functionalization|"
     r"^_disable_functionalization|^_is_|^is_|^_has_|^_version|^_unsafe|^_resize|^resize|^set_|^_set_|"
     r"^_shape_as_tensor|^_reshape_alias|^_reshape_copy|^_debug|^_test_|^_autocast|^_add_batch_dim|"
     r"^_remove_batch_dim|^_new_zeros_with_same|^_make_dual|^_unpack_dual|^_fw_primal|^_lazy_|^_conj|^_neg_view|"
     r"^retains_grad|^retain_grad|^requires_grad_|^output_nr|^data$|^item$|^_local_scalar|^record_stream|"
     r"^_nested|^_storage|^storage|^_use_|^_cast_|^_cufft|^_get_|^_mps|^_standard_gamma_grad|^_values_copy|"
     r"^lift|^_lift|^_wrapped|^_dispatch|^_dimI|^_copy_from|^_batch_norm_impl_index|^_embedding_bag_(per|sparse|dense)|"
     r"^_weight_norm_interface|^_masked_softmax|^_pin_memory|^pin_memory|^is_pinned|^_fused_|^_chunk_cat|"
     r"^_safe_softmax|^_functional_sym|^_async|^_mkldnn|^_grid_sampler_2d_cpu_fallback|^_empty_|^_compute_|"
     r"^_spsolve|^_transformer|^_native_multi_head|^_triton|^_upsample_.*_aa|^_cummax_helper|^_cummin_helper|"
     r"^_segment_reduce|^_amp_|^_sobol|^_dirichlet|^_sample_dirichlet|^_standard_gamma|^_s_where|^_cdist|^_pdist|"
     r"^_euclidean_dist|^_histogramdd|^_index_put_impl|^_unique|^_aminmax|^_assert_|^_addmm_activation|"
     r"^_thnn|^_logcumsumexp|^_fill_mem|^_jagged|^_sparse|^_coalesce|^_padded_dense|^_efficientzerotensor|"
     r"^_conv_depthwise|^_convolution|^_slow_conv|^slow_conv|^thnn_conv|^_nnpack|^_test|^_to_cpu|^_cpu_|"
     r"^_stack|^_cat|^_dim_arange|^_rowwise_prune|^_validate|^_weight_norm|^_reshape_from_tensor|^_unsafe_view",
     "internal ATen entry point (dispatcher, functionalization, autograd or backend plumbing behind a public op)"),
    (r"^__|^[A-Z]", "TorchScript builtin (a Python operator or cast: `__and__`, `Int`, ...; the Tensor methods and "
     "Python operators exist)"),
    (r"_$", "in-place variant (torch.export's graphs are functional; the out-of-place operator is what a "
     "program records)"),
]
NOT_YET = "not yet in the table (funcgrad has the torch function)"
NOT_YET_NO_FN = "not yet in the table"


def _torch_schemas() -> dict:
    """{(op, overload): torch's schema} for every aten operator torch 2.13 registers."""
    import torch
    return {(s.name[len("aten::"):], s.overload_name or "default"): s
            for s in torch._C._jit_get_all_schemas() if s.name.startswith("aten::")}


def _is_out(schema) -> bool:
    """An out= overload (writes into a tensor given by keyword): not an operator a graph records."""
    return any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def reason(op: str) -> str:
    import funcgrad
    for pattern, why in REASONS:
        if re.search(pattern, op):
            return why
    return NOT_YET if hasattr(funcgrad, op) or hasattr(funcgrad.Tensor, op) or \
        hasattr(funcgrad.nn.functional, op) else NOT_YET_NO_FN


def mismatched_schemas() -> list:
    """Table lines that differ from torch's schema of the same overload (or name one torch lacks)."""
    from funcgrad._torch import _aten
    theirs = _torch_schemas()
    out = []
    for op, ovs in _aten.table().items():
        for ov, line in ovs.items():
            want = theirs.get((op, ov))
            if want is None or str(want) != line:
                out.append((f"aten.{op}.{ov}", line, want and str(want)))
    return out


def render() -> str:
    import torch

    from funcgrad._torch import _aten
    table = _aten.table()
    schemas = _torch_schemas()
    ops: dict = {}
    for (op, ov), text in schemas.items():
        if not _is_out(text):
            ops.setdefault(op, []).append(ov)
    core = set()
    for op in ops:
        packet = getattr(torch.ops.aten, op, None)
        if packet is not None and any(torch.Tag.core in getattr(packet, ov).tags for ov in packet.overloads()
                                      if hasattr(packet, ov)):
            core.add(op)
    covered = sorted(op for op in ops if op in table)
    missing: dict = {}
    for op in sorted(ops):
        if op not in table:
            missing.setdefault(reason(op), []).append(op)
    n_ov = sum(len(v) for v in table.values())
    lines = [
        "# ATen operators funcgrad runs",
        "",
        "funcgrad has one table of torch's ATen operators (`funcgrad/_torch/_aten.py`): each overload's schema, as "
        "torch 2.13 prints it, and the funcgrad function that runs it. `torch.ops.aten.<op>.<overload>` calls "
        "them (positional arguments in schema order, any of them by name, as torch's operators take them), "
        "`torch.export.load` runs the operators of a torch-written `.pt2` file with them, and `torch.export.save` "
        "writes a funcgrad graph's calls as them. Every overload is tested against torch 2.13 (value, and the "
        "float64 gradient where torch's is defined) in `tests/test_torch_ops_namespace.py`.",
        "",
        "This page is generated by `python tools/aten_coverage.py` (it needs torch installed); "
        "`tests/test_aten_coverage.py` fails when it is stale. Overloads that write into an `out=` tensor are not "
        "counted: a graph never records them.",
        "",
        f"- covered: {len(covered)} operators, {n_ov} overloads "
        f"({len(core & set(covered))} of the {len(core)} operators of torch's core ATen opset)",
        f"- missing: {sum(len(v) for v in missing.values())} of torch's {len(ops)} operators, by reason below",
        "",
        "## Covered",
        "",
        "| operator | overloads funcgrad serves | torch's other overloads | core ATen |",
        "|---|---|---|---|",
    ]
    for op in covered:
        mine = list(table[op])
        others = [ov for ov in ops[op] if ov not in table[op]]
        lines.append(f"| `{op}` | {', '.join(mine)} | {', '.join(others) or '-'} | {'yes' if op in core else ''} |")
    lines += ["", "## Missing, by reason", "", "| why it is missing | count | operators |", "|---|---|---|"]
    for why, names in sorted(missing.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(f"`{n}`" + ("*" if n in core else "") for n in names)
        lines.append(f"| {why} | {len(names)} | {shown} |")
    missing_core = sorted(core - set(covered))
    lines += ["", f"Operators marked `*` are in torch's core ATen opset ({len(missing_core)} missing).", ""]
    return "\n".join(lines)


def main(argv: list) -> int:
    bad = mismatched_schemas()
    for q, mine, theirs in bad:
        print(f"{q}: table has {mine!r}, torch has {theirs!r}")
    text = render()
    if "--check" in argv:
        stale = not PAGE.exists() or PAGE.read_text() != text
        if stale:
            print(f"{PAGE} is stale: run python tools/aten_coverage.py")
        return int(stale or bool(bad))
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return int(bool(bad))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
