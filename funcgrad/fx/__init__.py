"""funcgrad.fx (torch.fx): capture a Module or function as a Graph of Nodes, inspect and rewrite it, and run
it again as a GraphModule.

    gm = torch.fx.symbolic_trace(model)      # a GraphModule: gm(x) == model(x)
    gm.graph.print_tabular()
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == torch.add:
            node.target = torch.mul
    gm.recompile()

Tracing runs the program on Proxies (see tracer.py for how calls of funcgrad's torch namespaces are recorded);
Interpreter runs a graph node by node, Transformer rebuilds one; replace_pattern (subgraph_rewriter) swaps every
occurrence of a pattern for a replacement."""
from . import passes  # noqa: F401
from .graph import Graph, PythonCode
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy, TraceError
from .tracer import Tracer, symbolic_trace, wrap
from . import tracer as _symbolic_trace  # noqa: F401,I100 (torch's name for it: generated code calls its wrap)
from . import subgraph_rewriter  # noqa: F401,I100 (after the tracer it uses)
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "Graph", "GraphModule", "Node", "Proxy", "Interpreter", "Transformer",
           "wrap", "map_arg", "PythonCode", "TraceError", "passes", "replace_pattern", "subgraph_rewriter"]
