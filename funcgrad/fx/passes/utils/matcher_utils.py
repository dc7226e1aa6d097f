"""torch.fx.passes.utils.matcher_utils: SubgraphMatcher finds where a pattern Graph occurs in a larger Graph.

Matching walks backwards along use-def edges from the pattern's anchors (the nodes its output returns and that
nothing else in the pattern uses) in both graphs at once: a pattern node matches a graph node of the same op and
target whose arguments match in turn (nodes recursively, literals by type and value, lists and tuples item by
item). A pattern placeholder is a wildcard for any node or literal (the same one at each of its uses). With
several anchors each must match and the matches must agree (backtracking). A match is kept only when it is
self-contained (its inner nodes are used by nothing outside it), fusing it would not make a cycle, and (with
remove_overlapping_matches) it shares no computing node with an earlier match."""
from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ...._torch._tensor import Tensor
from ...graph import Graph
from ...node import Node

__all__ = ["SubgraphMatcher", "InternalMatch"]


@dataclass
class InternalMatch:
    """One occurrence of a pattern: `anchors` (the pattern's anchors), `nodes_map` (pattern node -> graph node),
    `placeholder_nodes` (what the pattern's placeholders stand for, in order), `returning_nodes` (the graph
    nodes the pattern's output returns)."""
    anchors: list
    nodes_map: dict = field(default_factory=dict)
    placeholder_nodes: list = field(default_factory=list)
    returning_nodes: list = field(default_factory=list)
    name_node_map: dict = field(default_factory=dict)

    def __copy__(self) -> "InternalMatch":
        return InternalMatch(anchors=self.anchors, nodes_map=self.nodes_map.copy(),
                             placeholder_nodes=self.placeholder_nodes.copy(),
                             returning_nodes=self.returning_nodes.copy())


def _get_attr(module, target: str):
    for atom in target.split("."):
        module = getattr(module, atom)
    return module


def _is_compute(pn: Node) -> bool:
    return pn.op not in ("placeholder", "output")


def _would_form_cycle(nodes: list) -> bool:
    """Whether some path leaves `nodes` and comes back into them (fusing them into one node would then make
    a cycle)."""
    inside = set(nodes)
    seen: set = set()
    stack = [u for n in nodes for u in n.users if u not in inside]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for u in n.users:
            if u in inside:
                return True
            stack.append(u)
    return False


class SubgraphMatcher:
    """Finds the occurrences of `pattern` in graphs (torch.fx.passes.utils.matcher_utils.SubgraphMatcher).

    match_output: the pattern's output node must match the graph's output too. match_placeholder: the pattern's
    placeholders must match placeholders (else they match anything). remove_overlapping_matches: of matches
    sharing a computing node, only the first is kept. ignore_literals: literal arguments match any literal."""

    def __init__(self, pattern: Graph, match_output: bool = False, match_placeholder: bool = False,
                 remove_overlapping_matches: bool = True, ignore_literals: bool = False) -> None:
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        if len(pattern.nodes) == 0:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        for node in pattern.nodes:
            if node.op != "output" and not node.is_impure() and not node.users:
                raise AssertionError("SubgraphMatcher cannot be initialized with an pattern with dead code")
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes: list = output_node.all_input_nodes
        if match_output:
            self.pattern_anchors: list = [output_node]
        else:
            self.pattern_anchors = [n for n in output_node.all_input_nodes if len(n.users) == 1]

    # --- comparing one node ---------------------------------------------------------------------------------
    def _match_attributes(self, pn: Node, gn: Node) -> bool:
        """get_attr nodes match when both read tensors (values are not compared)."""
        if pn.graph.owning_module is None or gn.graph.owning_module is None:
            raise AssertionError("SubgraphMatcher: matching get_attr nodes needs both graphs to have an "
                                 "owning module (use GraphModules, not bare Graphs)")
        pv = _get_attr(pn.graph.owning_module, pn.target)
        gv = _get_attr(gn.graph.owning_module, gn.target)
        if type(pv) is not type(gv):
            return False
        if isinstance(pv, Tensor):
            return True
        raise RuntimeError(f"Unsupported type {pv} when matching attributes")

    def _nodes_are_equal(self, pn: Node, gn: Node, node_name_match: str = "") -> bool:
        if not self.match_placeholder and pn.op == "placeholder":
            return True
        if node_name_match and node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in ("placeholder", "output"):
            return True
        if pn.op == "get_attr":
            return self._match_attributes(pn, gn)
        return pn.target == gn.target

    def _match_literals(self, pn: Any, gn: Any, match: InternalMatch) -> bool:
        if isinstance(pn, Node):
            if isinstance(gn, Node) or pn.op != "placeholder":
                return False
            if pn in match.nodes_map:  # the placeholder stands for one value wherever it is used
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_args(self, pargs, gargs, match: InternalMatch) -> bool:
        if len(pargs) != len(gargs):
            return False
        for pa, ga in zip(pargs, gargs):
            if isinstance(pa, Node) and isinstance(ga, Node):
                ok = self._match_nodes(pa, ga, match)
            elif isinstance(pa, (list, tuple)) and isinstance(ga, (list, tuple)):
                ok = self._match_args(pa, ga, match)
            else:
                ok = self._match_literals(pa, ga, match) or self.ignore_literals
            if not ok:
                return False
        return True

    def _match_nodes(self, pn: Node, gn: Node, match: InternalMatch, node_name_match: str = "") -> bool:
        """Whether pattern node pn matches graph node gn given the match so far (extended in place)."""
        if pn in match.nodes_map:
            return match.nodes_map[pn] == gn
        if gn in match.nodes_map.values():
            return False
        if not self._nodes_are_equal(pn, gn, node_name_match):
            return False
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":  # a wildcard: its inputs are not followed
            return True
        if len(pn.args) != len(gn.args) or list(pn.kwargs) != list(gn.kwargs):
            return False
        return self._match_args([*pn.args, *pn.kwargs.values()], [*gn.args, *gn.kwargs.values()], match)

    def _is_contained(self, nodes_map: dict) -> bool:
        """Only the returned nodes (and placeholders' values) of a match may be used outside it."""
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            if any(user not in lookup for user in gn.users):
                return False
        return True

    def _remove_overlapping_matches(self, matches: list) -> list:
        kept, used = [], set()
        for m in matches:
            compute = [gn for pn, gn in m.nodes_map.items() if _is_compute(pn)]
            if not any(gn in used for gn in compute):
                kept.append(m)
                used.update(compute)
        return kept

    # --- the search -------------------------------------------------------------------------------------------
    def match(self, graph: Graph, node_name_match: str = "") -> list:
        """The occurrences of the pattern in graph, in the order of the graph's nodes (of the first anchor);
        each self-contained (its inner nodes are used only inside it)."""
        candidates: dict = defaultdict(list)
        for anchor in self.pattern_anchors:
            for node in graph.nodes:
                if self._nodes_are_equal(anchor, node, node_name_match):
                    candidates[anchor].append(node)
        candidate_list = list(candidates.items())
        matches: list = []

        def backtrack(i: int, match: InternalMatch) -> None:
            if i == len(candidate_list):
                match.placeholder_nodes = [match.nodes_map[pn] for pn in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidate_list[i]
            for node in nodes:
                attempt = copy.copy(match)
                if self._match_nodes(anchor, node, attempt, node_name_match):
                    backtrack(i + 1, attempt)

        if candidate_list:
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        matches = [m for m in matches
                   if not _would_form_cycle([gn for pn, gn in m.nodes_map.items() if _is_compute(pn)])]
        if self.remove_overlapping_matches:
            matches = self._remove_overlapping_matches(matches)
        return matches
