"""The dependency graph of a workflow: order, cycles, ancestors and descendants."""

import heapq

from .errors import CycleError


class Graph:
    """Jobs and their dependencies: ``deps[job]`` are the jobs that must succeed before ``job`` runs."""

    def __init__(self, deps):
        self.deps = {job: tuple(parents) for job, parents in deps.items()}
        self.dependents = {job: [] for job in self.deps}
        for job, parents in self.deps.items():
            for parent in parents:
                self.dependents.setdefault(parent, []).append(job)
        for children in self.dependents.values():
            children.sort()

    @classmethod
    def from_workflow(cls, workflow):
        return cls({name: job.deps for name, job in workflow.jobs.items()})

    def roots(self):
        """Jobs without dependencies, sorted."""
        return sorted(job for job, parents in self.deps.items() if not parents)

    def find_cycle(self):
        """A dependency cycle as a list of jobs [a, b, ..., a], or None when there is none."""
        white, grey, black = 0, 1, 2
        colour = {job: white for job in self.deps}
        stack = []

        def visit(job):
            colour[job] = grey
            stack.append(job)
            for child in self.dependents.get(job, ()):
                if colour[child] == grey:
                    return stack[stack.index(child):] + [child]
                if colour[child] == white:
                    found = visit(child)
                    if found:
                        return found
            stack.pop()
            colour[job] = black
            return None

        for job in sorted(self.deps):  # every job: a cycle need not be reachable from a root
            if colour[job] == white:
                found = visit(job)
                if found:
                    return found
        return None

    def check(self):
        """Raise CycleError when the graph has a cycle."""
        cycle = self.find_cycle()
        if cycle:
            raise CycleError(cycle)

    def topological_order(self):
        """Every job after its dependencies; among the jobs that are ready, alphabetical order."""
        self.check()
        remaining = {job: len(parents) for job, parents in self.deps.items()}
        ready = [job for job, count in remaining.items() if count == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            job = heapq.heappop(ready)
            order.append(job)
            for child in self.dependents.get(job, ()):
                remaining[child] -= 1
                if remaining[child] == 0:
                    heapq.heappush(ready, child)
        if len(order) != len(self.deps):
            raise CycleError(sorted(set(self.deps) - set(order)))
        return order

    def descendants(self, job):
        """Every job that depends on ``job``, directly or not."""
        seen = set()
        todo = list(self.dependents.get(job, ()))
        while todo:
            child = todo.pop()
            if child not in seen:
                seen.add(child)
                todo.extend(self.dependents.get(child, ()))
        return seen

    def ancestors(self, job):
        seen = set()
        todo = list(self.deps.get(job, ()))
        while todo:
            parent = todo.pop()
            if parent not in seen:
                seen.add(parent)
                todo.extend(self.deps.get(parent, ()))
        return seen

    def levels(self):
        """{job: depth}: 0 for roots, else 1 + the deepest dependency."""
        depth = {}
        for job in self.topological_order():
            depth[job] = 1 + max((depth[parent] for parent in self.deps[job]), default=-1)
        return depth

    def to_dot(self, name="workflow"):
        lines = [f'digraph "{name}" {{']
        for job in sorted(self.deps):
            lines.append(f'  "{job}";')
            for parent in self.deps[job]:
                lines.append(f'  "{parent}" -> "{job}";')
        lines.append("}")
        return "\n".join(lines)
