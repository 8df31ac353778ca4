"""What every procedural task family shares: the registry, the parameter split and instance making.

A family is a seeded generator of tasks of one kind (count matches in a log, sort records,
rename files ...). Each family draws its instances from a finite pool of **split keys** (the word
to count, the mode to set, the extension to exclude ...). Every key belongs to exactly one split,
``train`` or ``held_out``, decided by a hash of family name and key alone
(:func:`split_of_key`): a held-out instance therefore never shares a family's key with any
training instance, whatever the seeds. Everything else (file contents, sizes, names) comes from
the instance's own seed.

A family can also be held out **as a whole** (``held_out_family = True``): then every key belongs to
``held_out`` and the family has no training instance at all. Those families differ in structure from
every training family (a multi-file package to repair, git history to recover, a script run on fresh
inputs), so the held-out split measures transfer to unseen kinds of work, not only unseen parameters.
:func:`held_out_families` lists them.

Every weighted test fails on an untouched environment and on empty outputs; "inputs unchanged" checks
are guards (:class:`~terminal_agent.tasks.model.TestGuards`): they earn nothing and zero (or cap) the
score when they fail.

An instance is a full :class:`~terminal_agent.tasks.model.Task`: instruction, a Dockerfile on the
validated base (``python:3.11-slim-bookworm``, aliased offline onto the project's base), at least three weighted tests with the
expected values computed by the generator, and a reference solution in bash.
"""

from __future__ import annotations

import hashlib
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from terminal_agent.errors import ConfigError
from terminal_agent.registry import Registry
from terminal_agent.tasks.model import FileContent, Task, TestGuards

Split = Literal["train", "held_out"]
SPLITS: tuple[Split, ...] = ("train", "held_out")
Difficulty = Literal["easy", "medium"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium")

HELD_OUT_SHARE = 0.25
"""Share of a family's split keys (by hash, so stable when keys are added) reserved for held-out."""

VALIDATED_BASE = "python:3.11-slim-bookworm"
"""The base every generated and shipped task names: Debian bookworm with Python 3.11, what validation runs on.
Offline, the image alias table maps it onto the project's base (debootstrap bookworm + python3, pip, venv); with
registry access the official image is pulled, so exported tasks build there as they are."""
BASE_DOCKERFILE = f"FROM {VALIDATED_BASE}\nWORKDIR /app\n"

DEV_TOOLS = (
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
    "bc curl ca-certificates file gcc git libc6-dev make procps sqlite3 xxd && rm -rf /var/lib/apt/lists/*"
)
"""The shared package layer (gcc, make, git, sqlite3, ...), as a ``setup`` line of :func:`dockerfile_for`.

It must stay byte-identical to ``DEV_TOOLS`` of the corpus authoring form (dataset/corpus/_spec.py): Docker then
builds the layer once and every corpus task and family instance that asks for it shares it."""
GIT_IDENTITY = (
    'RUN git config --global user.name "Corpus Author" && git config --global user.email author@example.com '
    "&& git config --global init.defaultBranch main"
)
"""A Dockerfile step for instances with git history (identical to the corpus form's ``GIT_IDENTITY``)."""


def split_of_key(family: str, key: str) -> Split:
    """``held_out`` when sha256(family:key) falls in the first :data:`HELD_OUT_SHARE` of the hash range."""
    digest = int(hashlib.sha256(f"{family}:{key}".encode()).hexdigest()[:8], 16)
    return "held_out" if digest < HELD_OUT_SHARE * 0x1_0000_0000 else "train"


@dataclass
class InstanceParts:
    """What a family's ``build`` returns; :meth:`TaskFamily.instance` turns it into a Task."""

    title: str
    instruction: str
    category: str
    test_source: str
    test_weights: dict[str, float]
    solution: str
    files: Mapping[str, FileContent] = field(default_factory=dict)
    """Build-context files (text, or bytes for binary fixtures); each top-level directory (or file) is copied to ``/app/``."""
    dockerfile_steps: list[str] = field(default_factory=list)
    """Extra Dockerfile lines after the copies (``RUN chmod ...``)."""
    tags: list[str] = field(default_factory=list)
    parameters: dict[str, object] = field(default_factory=dict)
    """Instance parameters recorded in the task's metadata (sizes, chosen names)."""
    guards: list[str] = field(default_factory=list)
    """Guard tests (declared in ``test_source``, no weight): "inputs unchanged", "nothing else touched"."""
    guard_cap: float = 0.0
    """0: a failed guard zeroes the score; between 0 and 1: it caps the score there."""
    setup: list[str] = field(default_factory=list)
    """Shared Dockerfile layers before the copies (``[DEV_TOOLS]``)."""
    outputs: list[str] = field(default_factory=list)
    """The paths the agent is asked to write, recorded as ``metadata['outputs']``: the empty-output probe of
    validation creates them empty (without it, validation derives the paths from the tests)."""


def dockerfile_for(files: Mapping[str, object], steps: Sequence[str] = (), setup: Sequence[str] = ()) -> str:
    """``FROM`` the validated base, ``WORKDIR /app``, ``setup`` (shared layers such as package installs, before
    the copies so that tasks share them), one ``COPY`` per top-level entry of ``files``, then ``steps``."""
    lines = [BASE_DOCKERFILE.rstrip("\n"), *setup]
    tops = sorted({path.split("/", 1)[0] + ("/" if "/" in path else "") for path in files})
    for top in tops:
        if any(ch.isspace() for ch in top):
            raise ValueError(f"top-level build-context entry {top!r} must not contain whitespace")
        lines.append(f"COPY {top} /app/{top}")
    lines.extend(steps)
    return "\n".join(lines) + "\n"


class TaskFamily(ABC):
    """A seeded generator of easy and medium tasks of one kind; see the module docstring."""

    held_out_family: bool = False
    """True: the whole family is held out (every key in ``held_out``, none in ``train``)."""
    difficulties: tuple[Difficulty, ...] = DIFFICULTIES
    """The difficulties this family makes (a subset of :data:`DIFFICULTIES`)."""

    name: str
    """Registry name; also the prefix of every instance's task id."""
    summary: str
    """One line on what the instances ask for."""
    keys: tuple[str, ...]
    """The split parameter's pool (each key is in exactly one split)."""
    key_meaning: str
    """What a key is (``the word counted``), for docs and the split manifest."""

    def split_keys(self, split: Split) -> list[str]:
        """The keys of ``split``, in pool order."""
        if split not in SPLITS:
            raise ConfigError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
        return [key for key in self.keys if self.split_of(key) == split]

    def split_of(self, key: str) -> Split:
        """The split of one key: ``held_out`` for every key of a held-out family, else :func:`split_of_key`."""
        return "held_out" if self.held_out_family else split_of_key(self.name, key)

    @abstractmethod
    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        """Make one instance for ``key`` at ``difficulty``, drawing everything else from ``rng``."""

    def instance(self, key: str, difficulty: Difficulty, seed: int) -> Task:
        """The task of (``key``, ``difficulty``, ``seed``): the same arguments always give the same task."""
        if key not in self.keys:
            raise ConfigError(f"family {self.name}: unknown key {key!r}; valid: {', '.join(self.keys)}")
        if difficulty not in self.difficulties:
            raise ConfigError(f"family {self.name}: difficulty must be one of {', '.join(self.difficulties)}")
        rng = random.Random(f"{self.name}|{key}|{difficulty}|{seed}")
        parts = self.build(key, difficulty, rng)
        split = self.split_of(key)
        guards = None
        if parts.guards:
            guards = TestGuards(tests=list(parts.guards), on_failure="cap" if parts.guard_cap > 0 else "zero",
                                cap=parts.guard_cap)
        digest = hashlib.sha256(json.dumps([self.name, key, difficulty, seed]).encode()).hexdigest()[:10]
        return Task(
            task_id=f"gen-{self.name}-{digest}",
            title=parts.title,
            instruction=parts.instruction,
            difficulty=difficulty,
            category=parts.category,
            use_case_category="procedural",
            tags=["generated", self.name, *parts.tags],
            dockerfile=dockerfile_for(parts.files, parts.dockerfile_steps, setup=parts.setup),
            files=parts.files,
            test_source=parts.test_source,
            test_weights=parts.test_weights,
            guards=guards,
            solution=parts.solution,
            metadata={
                "family": self.name,
                "family_key": key,
                "family_split": split,
                "family_seed": seed,
                "family_parameters": parts.parameters,
                **({"outputs": list(parts.outputs)} if parts.outputs else {}),
                **({"family_held_out": True} if self.held_out_family else {}),
            },
        )


FAMILIES: Registry[type[TaskFamily]] = Registry("task family")
"""Every registered family class, by name: one line per family, naming its class in its module (imported on
first use). A new family is one module in ``tasks/families/`` plus one line here; a family defined elsewhere
registers its class (``FAMILIES.register("name")(MyFamily)``)."""

_FAMILIES = "terminal_agent.tasks.families"
FAMILIES.register_path("archive-without", f"{_FAMILIES}.archive_without:ArchiveWithout")
FAMILIES.register_path("config-migrate", f"{_FAMILIES}.config_migrate:ConfigMigrate")
FAMILIES.register_path("copy-named-file", f"{_FAMILIES}.copy_named_file:CopyNamedFile")
FAMILIES.register_path("count-file-lines", f"{_FAMILIES}.count_file_lines:CountFileLines")
FAMILIES.register_path("count-matches", f"{_FAMILIES}.count_matches:CountMatches")
FAMILIES.register_path("csv-column-total", f"{_FAMILIES}.csv_column_total:CsvColumnTotal")
FAMILIES.register_path("filter-status", f"{_FAMILIES}.filter_status:FilterStatus")
FAMILIES.register_path("fix-package-bug", f"{_FAMILIES}.fix_package_bug:FixPackageBug")
FAMILIES.register_path("git-recover", f"{_FAMILIES}.git_recover:GitRecover")
FAMILIES.register_path("log-forensics", f"{_FAMILIES}.log_forensics:LogForensics")
FAMILIES.register_path("read-json-key", f"{_FAMILIES}.read_json_key:ReadJsonKey")
FAMILIES.register_path("rename-extension", f"{_FAMILIES}.rename_extension:RenameExtension")
FAMILIES.register_path("set-config-value", f"{_FAMILIES}.set_config_value:SetConfigValue")
FAMILIES.register_path("set-permissions", f"{_FAMILIES}.set_permissions:SetPermissions")
FAMILIES.register_path("shell-script", f"{_FAMILIES}.shell_script:ShellScript")
FAMILIES.register_path("sort-records", f"{_FAMILIES}.sort_records:SortRecords")
FAMILIES.register_path("sqlite-query", f"{_FAMILIES}.sqlite_query:SqliteQuery")
FAMILIES.register_path("sum-json-field", f"{_FAMILIES}.sum_json_field:SumJsonField")
FAMILIES.register_path("top-words", f"{_FAMILIES}.top_words:TopWords")


def get_family(name: str) -> TaskFamily:
    """The family registered as ``name`` (an unknown name raises ConfigError listing the valid ones)."""
    return FAMILIES.get(name)()


def held_out_families() -> list[str]:
    """Names of the families held out as a whole (no training instance; every key in ``held_out``), sorted."""
    return sorted(name for name in FAMILIES if FAMILIES.get(name).held_out_family)


def generate_instances(
    family_name: str,
    count: int,
    seed: int,
    *,
    split: Split = "train",
    difficulties: Sequence[str] | None = None,
) -> list[Task]:
    """``count`` distinct instances of one family, drawn only from the keys of ``split``.

    Keys and instance seeds come from ``Random(family:split:seed)``; difficulties alternate over
    ``difficulties`` (default: the family's own). The same arguments always give the same tasks.
    A split that holds none of the family's keys (``train`` of a held-out family) gives no instances.
    """
    family = get_family(family_name)
    if count < 0:
        raise ConfigError(f"count must be >= 0, got {count}")
    if difficulties is None:
        difficulties = family.difficulties
    unknown = [d for d in difficulties if d not in family.difficulties]
    if unknown or not difficulties:
        raise ConfigError(
            f"family {family_name}: difficulties must be among {', '.join(family.difficulties)}, got {list(difficulties)}"
        )
    made = [d for d in difficulties if d in family.difficulties]  # all of them (none is unknown), as Difficulty
    keys = family.split_keys(split)
    if not keys:
        return []
    rng = random.Random(f"{family_name}:{split}:{seed}")
    tasks: dict[str, Task] = {}
    index = 0
    while len(tasks) < count:
        key = keys[rng.randrange(len(keys))]
        difficulty = made[index % len(made)]
        task = family.instance(key, difficulty, rng.getrandbits(32))
        tasks.setdefault(task.task_id, task)
        index += 1
    return list(tasks.values())


def family_parameter_space(family_name: str) -> dict[str, object]:
    """The split of one family's keys, as recorded in the frozen split manifest."""
    family = get_family(family_name)
    return {
        "summary": family.summary,
        "key_meaning": family.key_meaning,
        "train_keys": family.split_keys("train"),
        "held_out_keys": family.split_keys("held_out"),
        "difficulties": list(family.difficulties),
        "held_out_family": family.held_out_family,
    }


def test_module(constants: Mapping[str, object], body: str) -> str:
    """A test file: ``import`` lines, one ``NAME = repr(value)`` line per constant, then ``body``.

    The generator computes the expected values; the tests only compare (they reach the container
    after the episode, so the agent never sees them).
    """
    head = "import hashlib\nimport os\nimport stat\nimport subprocess\nfrom pathlib import Path\n\n"
    lines = [f"{name} = {value!r}" for name, value in constants.items()]
    return head + "\n".join(lines) + "\n\n\n" + body.strip("\n") + "\n"


def sha256_text(text: str) -> str:
    """sha256 of ``text`` as UTF-8 (what the tests compare files against)."""
    return hashlib.sha256(text.encode()).hexdigest()


SHA256_HELPER = '''
def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
'''
"""A helper the tests of several families share (pasted into their test source)."""
