"""How alike two tasks are, over their prompt, their files and their solution: the near-twin check of the splits.

A held-out task that is a near-twin of a training task (the same template with one parameter changed, the same
script over other data) measures template transfer, not generalisation. Each task is cut into three parts:

* ``prompt``: the instruction;
* ``files``: the text files of the environment, each preceded by its path (a binary file counts as its path);
* ``solution``: the reference solution and the text files beside it.

Each part becomes a TF-IDF vector of its words (identifiers of two characters or more, lower-cased; term weight
``1 + log(count)``, inverse document frequency ``1 + log((1 + N) / (1 + df))`` over the N tasks compared, so words
every task uses, such as ``app`` or ``file``, weigh little). The similarity of a part is the cosine of the two
vectors; the similarity of two tasks is the mean over the parts that at least one of them has (a part both lack
is left out, not counted as equal). Identical tasks score 1.0.

Measured on the old corpus (68 tasks, 14 held out), whose review found 3 to 4 held-out tasks with close train
twins: the closest pairs scored 0.47 (the same stats script), 0.27 (CSV reshaping), 0.25 (the same speed-up
template), 0.25 (the same ``find`` idiom) and 0.20 (JSON config edits); the other nine held-out tasks 0.19 or less. A family
instance and another instance of the same family score about 0.6 to 0.9. :data:`NEAR_TWIN` is the line the
splits refuse to cross.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from terminal_agent.tasks.model import Task

NEAR_TWIN = 0.25
"""A held-out task at or above this similarity to any training task is a near-twin."""
PARTS = ("prompt", "files", "solution")

_WORD = re.compile(r"[a-z][a-z0-9_]+")


def _files_text(files: dict[str, str | bytes]) -> str:
    return "\n".join(f"{path}\n{content}" if isinstance(content, str) else path for path, content in sorted(files.items()))


def task_parts(task: Task) -> tuple[str, str, str]:
    """The text of a task's prompt, files and solution."""
    solution = (task.solution or "") + "\n" + _files_text(dict(task.solution_files))
    return task.instruction, _files_text(dict(task.files)), solution


@dataclass(frozen=True)
class Similarity:
    """How alike a held-out task is to a training task: the mean over the compared parts, and each part's cosine."""

    held_out: str
    train: str
    score: float
    parts: dict[str, float | None]

    def to_dict(self) -> dict[str, object]:
        return {"held_out": self.held_out, "train": self.train, "score": round(self.score, 4),
                "parts": {k: (None if v is None else round(v, 4)) for k, v in self.parts.items()}}


class SimilarityIndex:
    """TF-IDF vectors of every part of ``tasks`` (the document frequencies come from all of them)."""

    def __init__(self, tasks: Sequence[Task]):
        counts = {task.task_id: [Counter(_WORD.findall(text.lower())) for text in task_parts(task)] for task in tasks}
        total = len(counts)
        self._vectors: dict[str, list[dict[str, float]]] = {}
        idf = []
        for part in range(len(PARTS)):
            frequency: Counter[str] = Counter()
            for words in counts.values():
                frequency.update(words[part].keys())
            idf.append({word: 1.0 + math.log((1 + total) / (1 + n)) for word, n in frequency.items()})
        for task_id, words in counts.items():
            vectors = []
            for part, bag in enumerate(words):
                vector = {word: (1.0 + math.log(n)) * idf[part][word] for word, n in bag.items()}
                norm = math.sqrt(sum(value * value for value in vector.values())) or 1.0
                vectors.append({word: value / norm for word, value in vector.items()})
            self._vectors[task_id] = vectors

    def similarity(self, first: str, second: str) -> Similarity:
        a, b = self._vectors[first], self._vectors[second]
        parts: dict[str, float | None] = {}
        for name, x, y in zip(PARTS, a, b):
            if not x and not y:
                parts[name] = None
                continue
            small, large = (x, y) if len(x) <= len(y) else (y, x)
            parts[name] = sum(value * large.get(word, 0.0) for word, value in small.items())
        known = [value for value in parts.values() if value is not None]
        return Similarity(first, second, sum(known) / len(known) if known else 0.0, parts)


def closest_pairs(held_out: Sequence[Task], train: Sequence[Task], top: int = 10) -> list[Similarity]:
    """For every held-out task its most similar training task; the ``top`` highest of those (0: all), highest first.
    Document frequencies are taken over both lists together."""
    index = SimilarityIndex([*held_out, *train])
    best: list[Similarity] = []
    for task in held_out:
        pairs = [index.similarity(task.task_id, other.task_id) for other in train if other.task_id != task.task_id]
        if pairs:
            best.append(max(pairs, key=lambda pair: pair.score))
    best.sort(key=lambda pair: pair.score, reverse=True)
    return best[:top] if top else best


def near_twins(pairs: Iterable[Similarity], threshold: float = NEAR_TWIN) -> list[Similarity]:
    """The pairs at or above ``threshold``."""
    return [pair for pair in pairs if pair.score >= threshold]
