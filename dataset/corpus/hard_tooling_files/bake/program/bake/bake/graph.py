"""Resolving goals into a dependency graph.

A target is made by the explicit rule(s) naming it (their prerequisites are merged; at most one may have a
recipe), else by the first pattern rule whose target pattern matches it and whose prerequisites all exist or can
be made, else it must be an existing file (a source). Phony targets are never files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from bake.errors import GraphError
from bake.parser import Bakefile, Rule
from bake.variables import pattern_match


@dataclass
class Node:
    """One target of the build."""

    name: str
    prerequisites: list[str] = field(default_factory=list)
    order_only: list[str] = field(default_factory=list)
    recipe: list[str] = field(default_factory=list)
    stem: str = ""
    phony: bool = False
    source: bool = False
    """An existing file no rule makes."""
    rule_line: int = 0

    def dependencies(self) -> list[str]:
        """Everything that must be finished before this node's recipe may run."""
        return self.prerequisites + [name for name in self.order_only if name not in self.prerequisites]


class Graph:
    """The nodes needed for some goals, in an order where every node follows its dependencies."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.order: list[str] = []

    def __contains__(self, name: str) -> bool:
        return name in self.nodes

    def dependents(self, name: str) -> list[str]:
        return [other.name for other in self.nodes.values() if name in other.dependencies()]


def _substitute(names: list[str], stem: str) -> list[str]:
    return [name.replace("%", stem, 1) for name in names]


class _Resolver:
    def __init__(self, bakefile: Bakefile, root: str):
        self.bakefile = bakefile
        self.root = root
        self.explicit: dict[str, list[Rule]] = {}
        for rule in bakefile.explicit_rules():
            for target in rule.targets:
                self.explicit.setdefault(target, []).append(rule)
        self.graph = Graph()
        self.visiting: list[str] = []

    def exists(self, name: str) -> bool:
        return os.path.exists(os.path.join(self.root, name))

    def can_make(self, name: str, depth: int = 0) -> bool:
        if name in self.explicit or self.exists(name) or name in self.bakefile.phony:
            return True
        if depth > 4:
            return False
        return self._pattern_for(name, depth + 1) is not None

    def _pattern_for(self, name: str, depth: int = 0) -> tuple[Rule, str] | None:
        for rule in self.bakefile.pattern_rules():
            if not rule.recipe:
                continue
            for target in rule.targets:
                stem = pattern_match(target, name)
                if stem is None:
                    continue
                needed = _substitute(rule.prerequisites, stem) + _substitute(rule.order_only, stem)
                if all(self.can_make(prerequisite, depth) for prerequisite in needed):
                    return rule, stem
        return None

    def node_for(self, name: str, needed_by: str | None) -> Node:
        phony = name in self.bakefile.phony
        rules = self.explicit.get(name, [])
        if rules:
            with_recipe = [rule for rule in rules if rule.recipe]
            if len(with_recipe) > 1:
                lines = ", ".join(str(rule.line) for rule in with_recipe)
                raise GraphError(f"target '{name}' has recipes in more than one rule (lines {lines})")
            node = Node(name, phony=phony)
            for rule in rules:
                node.prerequisites += [p for p in rule.prerequisites if p not in node.prerequisites]
                node.order_only += [p for p in rule.order_only if p not in node.order_only]
            if with_recipe:
                node.recipe = list(with_recipe[0].recipe)
                node.rule_line = with_recipe[0].line
            elif not phony and not self.exists(name):
                found = self._pattern_for(name)
                if found is not None:
                    rule, stem = found
                    node.prerequisites = _substitute(rule.prerequisites, stem) + node.prerequisites
                    node.order_only += _substitute(rule.order_only, stem)
                    node.recipe, node.stem, node.rule_line = list(rule.recipe), stem, rule.line
            return node
        if not phony:
            found = self._pattern_for(name)
            if found is not None:
                rule, stem = found
                return Node(name, _substitute(rule.prerequisites, stem), _substitute(rule.order_only, stem),
                            list(rule.recipe), stem, rule_line=rule.line)
            if self.exists(name):
                return Node(name, source=True)
        if phony:
            return Node(name, phony=True)
        suffix = f", needed by '{needed_by}'" if needed_by else ""
        raise GraphError(f"no rule to make target '{name}'{suffix}")

    def visit(self, name: str, needed_by: str | None) -> None:
        if name in self.graph.nodes:
            return
        if name in self.visiting:
            cycle = self.visiting[self.visiting.index(name):] + [name]
            raise GraphError("circular dependency: " + " -> ".join(cycle))
        self.visiting.append(name)
        node = self.node_for(name, needed_by)
        for dependency in node.dependencies():
            self.visit(dependency, name)
        self.visiting.pop()
        self.graph.nodes[name] = node
        self.graph.order.append(name)


def build_graph(bakefile: Bakefile, goals: list[str], root: str = ".") -> Graph:
    """The graph of everything ``goals`` need, in dependency order."""
    resolver = _Resolver(bakefile, root)
    for goal in goals:
        resolver.visit(goal, None)
    return resolver.graph
