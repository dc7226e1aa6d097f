"""torch.fx.subgraph_rewriter: replace every occurrence of a pattern in a GraphModule's graph by a replacement.

    def pattern(a, b):
        return torch.cat([torch.neg(a), b]).sum()
    def replacement(a, b):
        return torch.stack([a, b])
    replace_pattern(gm, pattern, replacement)   # -> [Match(anchor, nodes_map), ...]

pattern and replacement are callables (traced with symbolic_trace), GraphModules or Graphs, with the same
parameters. Occurrences are found by passes.utils.matcher_utils.SubgraphMatcher (on use-def edges, not names;
a parameter of the pattern matches any value; non-overlapping, the first in graph order winning). Each one's
replacement is copied in before the first user of the pattern's result, the users are rewired to it, the
matched nodes are erased, then the graph is recompiled (and a GraphModule replacement's submodules and
attributes that the new nodes use are copied into gm)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional, Union

from ..nn.modules.module import Module
from .graph import Graph
from .graph_module import GraphModule
from .node import Node
from .passes.utils.matcher_utils import InternalMatch, SubgraphMatcher
from .tracer import symbolic_trace

__all__ = ["Match", "replace_pattern", "replace_pattern_with_filters", "ReplacedPatterns"]

_GraphLike = Union[Callable[..., Any], Graph, GraphModule]


class Match(NamedTuple):
    """Where a pattern was replaced: `anchor` (the pattern node the match was grown from) and `nodes_map`
    (pattern node -> the graph node it matched)."""
    anchor: Node
    nodes_map: dict


@dataclass
class ReplacedPatterns:
    """A Match and the nodes its replacement put into the graph (`replacements`)."""
    anchor: Node
    nodes_map: dict
    replacements: list


def _graph_of(g: _GraphLike, what: str) -> Graph:
    if isinstance(g, GraphModule):
        return g.graph
    if isinstance(g, Graph):
        return g
    if callable(g):
        return symbolic_trace(g).graph
    raise TypeError(f"replace_pattern: the {what} must be a callable, a GraphModule or a Graph, got "
                    f"{type(g).__name__}")


def _get_attr_or_none(mod: Module, target: str):
    path, _, name = target.rpartition(".")
    try:
        owner = mod.get_submodule(path) if path else mod
    except AttributeError:
        return None
    return getattr(owner, name, None)


def _replace_attributes(gm: GraphModule, replacement: Module) -> None:
    """After rewriting with a Module replacement: drop gm's unused submodules, and copy from the replacement
    every submodule / attribute that a call_module / get_attr node of gm names and gm lacks."""
    gm.delete_all_unused_submodules()
    if isinstance(replacement, GraphModule):
        replacement.graph.lint()
    for node in gm.graph.nodes:
        if node.op not in ("call_module", "get_attr") or _get_attr_or_none(gm, node.target) is not None:
            continue
        attr = _get_attr_or_none(replacement, node.target)
        if attr is None:
            raise RuntimeError(f'Attempted to create a "{node.op}" node during subgraph rewriting with target '
                               f"{node.target}, but the referenced attribute does not exist in the replacement "
                               "GraphModule")
        attr = copy.deepcopy(attr)
        if isinstance(attr, Module):
            gm.add_submodule(node.target, attr)
        else:
            setattr(gm, node.target, attr)
    gm.graph.lint()


def replace_pattern(gm: GraphModule, pattern: Union[Callable[..., Any], GraphModule],
                    replacement: Union[Callable[..., Any], GraphModule]) -> list:
    """Replace every non-overlapping occurrence of `pattern` in gm.graph by `replacement` and recompile gm.
    Returns the Matches (empty when the pattern does not occur)."""
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in _replace_pattern(gm, pattern, replacement)]


def replace_pattern_with_filters(gm: GraphModule, pattern: _GraphLike, replacement: Optional[_GraphLike] = None,
                                 match_filters: Optional[list] = None, ignore_literals: bool = False,
                                 replacement_callback: Optional[Callable] = None,
                                 node_name_match: str = "") -> list:
    """replace_pattern, keeping only the matches every `match_filters` function accepts (called as
    f(internal_match, original_graph, pattern_graph)); ignore_literals: literal arguments match any literal;
    replacement_callback(match, original_graph, pattern_graph) gives each match's replacement graph. Returns
    ReplacedPatterns (with the nodes each replacement added)."""
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback,
                            node_name_match)


def _insert_point(graph: Graph, returning: list) -> Node:
    """The replacement goes before the first user of the returned nodes, or (none used) after the last of them."""
    users: set = set()
    for n in returning:
        users.update(n.users)
    if users:
        return next(n for n in graph.nodes if n in users)
    after = None
    for n in reversed(graph.nodes):
        if n in returning:
            break
        after = n
    if after is None:
        raise AssertionError("The insert point can't be None")
    return after


def _replace_pattern(gm: GraphModule, pattern: _GraphLike, replacement: Optional[_GraphLike] = None,
                     match_filters: Optional[list] = None, ignore_literals: bool = False,
                     replacement_callback: Optional[Callable] = None, node_name_match: str = "") -> list:
    original = gm.graph
    pattern_graph = _graph_of(pattern, "pattern")
    matcher = SubgraphMatcher(pattern_graph, match_output=False, match_placeholder=False,
                              remove_overlapping_matches=True, ignore_literals=ignore_literals)
    matches: list[InternalMatch] = [m for m in matcher.match(original, node_name_match=node_name_match)
                                    if all(f(m, original, pattern_graph) for f in match_filters or ())]
    if replacement is not None:
        common = _graph_of(replacement, "replacement")
    elif replacement_callback is None:
        raise AssertionError("Must provide either a replacement GraphModule or a replacement callback")

    changed: dict = {}  # a returned node of an earlier match -> the node that replaced it
    results = []
    for match in matches:
        repl = replacement_callback(match, original, pattern_graph) if replacement_callback else common
        placeholders = [n for n in repl.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(placeholders):
            raise AssertionError(f"Placeholder count mismatch: {len(match.placeholder_nodes)} vs "
                                 f"{len(placeholders)} (the replacement must take the pattern's parameters)")
        val_map: dict = {}
        for i, (rn, gn) in enumerate(zip(placeholders, match.placeholder_nodes)):
            if isinstance(gn, Node) and gn in changed:
                new = changed[gn]
                match.placeholder_nodes[i] = new
                for pn, v in match.nodes_map.items():
                    if v is gn:
                        match.nodes_map[pn] = new
                        break
                gn = new
            val_map[rn] = gn
        with original.inserting_before(_insert_point(original, match.returning_nodes)):
            copied = original.graph_copy(repl, val_map)
        if isinstance(copied, Node):
            copied = (copied,)
        added = [v for v in val_map.values() if v not in match.placeholder_nodes]
        if len(match.returning_nodes) != len(copied):
            raise AssertionError(f"Returning nodes count mismatch: {len(match.returning_nodes)} vs {len(copied)} "
                                 "(the replacement must return as many values as the pattern)")
        for gn, new in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for pn in reversed(pattern_graph.nodes):
            if pn.op not in ("placeholder", "output"):
                original.erase_node(match.nodes_map[pn])
        results.append(ReplacedPatterns(anchor=match.anchors[0], nodes_map=match.nodes_map, replacements=added))
    gm.recompile()
    if isinstance(replacement, Module):
        _replace_attributes(gm, replacement)
    return results
