"""Running the recipes of a graph, ``jobs`` at a time, each only after everything it depends on finished."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TextIO

from bake.errors import BakeError
from bake.filestat import FileStat
from bake.graph import Graph, Node
from bake.parser import Bakefile
from bake.staleness import Verdict, hash_verdict, timestamp_verdict
from bake.state import BuildState, recipe_signature
from bake.variables import expand


@dataclass
class Options:
    """How to build."""

    jobs: int = 1
    dry_run: bool = False
    keep_going: bool = False
    use_hash: bool = False
    explain: bool = False


@dataclass
class Outcome:
    """What a build did."""

    ran: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.skipped


class Builder:
    """Builds the nodes of ``graph`` rooted at ``root``, printing commands and errors to ``out``."""

    def __init__(self, bakefile: Bakefile, graph: Graph, root: str, options: Options, out: TextIO = sys.stdout):
        self.bakefile = bakefile
        self.graph = graph
        self.root = root
        self.options = options
        self.out = out
        self.stats = FileStat(root)
        self.state = BuildState(root) if options.use_hash else None
        self.rebuilt: set[str] = set()
        self.outcome = Outcome()
        self._print_lock = threading.Lock()

    def emit(self, text: str) -> None:
        with self._print_lock:
            self.out.write(text)
            self.out.flush()

    def automatic_variables(self, node: Node) -> dict[str, str]:
        newer = [p for p in node.prerequisites
                 if p in self.rebuilt or (self.stats.mtime(p) or 0) > (self.stats.mtime(node.name) or 0)]
        unique = []
        for prerequisite in node.prerequisites:
            if prerequisite not in unique:
                unique.append(prerequisite)
        return {
            "@": node.name,
            "<": node.prerequisites[0] if node.prerequisites else "",
            "^": " ".join(unique),
            "?": " ".join(newer),
            "*": node.stem,
            "|": " ".join(node.order_only),
        }

    def commands(self, node: Node) -> list[str]:
        automatic = self.automatic_variables(node)
        return [expand(line, self.bakefile.variables, automatic, self.root) for line in node.recipe]

    def verdict(self, node: Node, commands: list[str]) -> Verdict:
        if self.state is not None:
            signature = recipe_signature(commands, node.recipe)
            return hash_verdict(node, self.stats, self.state, signature, self.rebuilt, self.options.dry_run)
        return timestamp_verdict(node, self.stats, self.rebuilt)

    def run_commands(self, node: Node, commands: list[str]) -> bool:
        for command in commands:
            silent = ignore = False
            while command[:1] in ("@", "-", "+"):
                silent |= command[0] == "@"
                ignore |= command[0] == "-"
                command = command[1:]
            if not silent or self.options.dry_run:
                self.emit(command + "\n")
            if self.options.dry_run:
                continue
            result = subprocess.run(["/bin/sh", "-c", command], cwd=self.root, capture_output=True, text=True)
            if result.stdout or result.stderr:
                self.emit(result.stdout + result.stderr)
            if result.returncode != 0:
                if ignore:
                    self.emit(f"bake: [{node.name}] Error {result.returncode} (ignored)\n")
                    continue
                self.emit(f"bake: *** [{node.name}] Error {result.returncode}\n")
                return False
        return True

    def build_node(self, node: Node) -> bool:
        """Bring one node up to date; False when its recipe failed."""
        if node.source:
            return True
        commands = self.commands(node)
        verdict = self.verdict(node, commands)
        if not verdict.stale:
            return True
        if self.options.explain:
            self.emit(f"bake: rebuilding '{node.name}' because {verdict.reason}\n")
        if not commands and not node.phony and not self.options.dry_run and not self.stats.exists(node.name):
            raise BakeError(f"no recipe for target '{node.name}' and it does not exist")
        before = self.stats.mtime(node.name)
        ok = self.run_commands(node, commands)
        self.stats.forget(node.name)
        if not ok:
            if not node.phony and self.stats.mtime(node.name) not in (None, before):
                os.remove(os.path.join(self.root, node.name))
                self.emit(f"bake: deleting '{node.name}'\n")
                self.stats.forget(node.name)
            if self.state is not None:
                self.state.drop(node.name)
            return False
        with self._print_lock:
            self.rebuilt.add(node.name)
            if commands:
                self.outcome.ran.append(node.name)
        if self.state is not None and not self.options.dry_run and not node.phony:
            inputs = {p: self.stats.digest(p) for p in node.prerequisites}
            self.state.record(node.name, recipe_signature(commands, node.recipe), inputs)
        return True

    def build(self) -> Outcome:
        """Build every node of the graph; stop scheduling at the first failure unless ``keep_going``."""
        pending = list(self.graph.order)
        done: set[str] = set()
        broken: set[str] = set()
        running: dict[Future[bool], str] = {}
        stop = False
        if self.state is not None:
            # Hash every existing file once, up front and in parallel (most are sources nothing rewrites).
            present = [name for name in self.graph.order if os.path.exists(os.path.join(self.root, name))]
            with ThreadPoolExecutor(max_workers=8) as hasher:
                list(hasher.map(self.stats.digest, present))
        with ThreadPoolExecutor(max_workers=max(1, self.options.jobs)) as pool:
            while pending or running:
                if not stop:
                    for name in list(pending):
                        if len(running) >= max(1, self.options.jobs):
                            break
                        node = self.graph.nodes[name]
                        dependencies = node.dependencies()
                        if any(d in broken for d in dependencies):
                            pending.remove(name)
                            broken.add(name)
                            self.outcome.skipped.append(name)
                            continue
                        if all(d in done for d in dependencies):
                            pending.remove(name)
                            running[pool.submit(self.build_node, node)] = name
                if not running:
                    break  # one pass schedules every ready node: nothing running means nothing can start
                finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in finished:
                    name = running.pop(future)
                    if future.result():
                        done.add(name)
                    else:
                        broken.add(name)
                        self.outcome.failed.append(name)
                        if not self.options.keep_going:
                            stop = True
        self.outcome.skipped += [name for name in pending if name not in self.outcome.skipped]
        if self.state is not None and not self.options.dry_run:
            self.state.save()
        return self.outcome
