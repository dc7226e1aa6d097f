"""torch.fx.passes.shape_prop: run a GraphModule on example inputs and record, on every node producing a
tensor (or a container of tensors), `node.meta['tensor_meta']` (TensorMetadata: shape, dtype, requires_grad,
stride, memory_format, is_quantized, qparams) and `node.meta['type']`."""
from __future__ import annotations

from typing import Any, NamedTuple

from ..._torch._formats import contiguous_format
from ..._torch._tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result: Tensor) -> TensorMetadata:
    memory_format = contiguous_format if result.is_contiguous() else None
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format,
                          False, {})


class ShapeProp(Interpreter):
    """ShapeProp(gm).propagate(*args): run gm on args, recording each node's tensor metadata."""

    def __init__(self, gm, fake_mode=None) -> None:
        super().__init__(gm)

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = [False]

        def extract(obj):
            if isinstance(obj, Tensor):
                found[0] = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args) -> Any:
        """The graph's output on args (the metadata is left on the nodes)."""
        return super().run(*args)
