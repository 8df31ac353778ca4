"""Hard systems-tooling tasks (issue 36): codebases of 1,000+ lines where several modules must change.

- ``hard-patchkit-offsets-merge``: a Python diff/patch/merge toolkit (Myers diff, unified writer and reader, a
  patch applier with offsets and fuzz, a three-way merge, a CLI) whose patches disagree with GNU diff on empty
  ranges, whose applier lands hunks at the wrong place and whose merge misses and invents conflicts.
- ``hard-bake-incremental-order-only``: a make-like build tool in Python (parser, variables, graph, staleness,
  hash state, parallel executor, CLI) whose incremental rebuilds are wrong in three modules, and which must
  gain GNU make's order-only prerequisites across parser, graph, executor and CLI.

The programs live as ordinary files under ``hard_tooling_files/<task>/``: ``program/`` is the correct program,
``planted_bugs.toml`` the named bugs planted in it by exact replacements (see _planted_bugs.py), ``fixtures/`` the
hidden tests' inputs, ``hidden_tests.py`` the weighted tests. The reference solution undoes every bug from
``/solution/fixes.json`` and each negative solution undoes a subset by name, so the solution and the negatives can
never drift from the shipped code.
"""

from __future__ import annotations

import json
from pathlib import Path

from _planted_bugs import PlantedBug, PlantedCodebase
from _spec import NegativeSolution, Spec

FILES = Path(__file__).resolve().parent / "hard_tooling_files"


def _fixes_json(bugs: list[PlantedBug]) -> str:
    """/solution/fixes.json: per bug name, [path, planted text, original text]; each bug here is one edit."""
    fixes = {}
    for bug in bugs:
        if len(bug.edits) != 1:
            raise ValueError(f"planted bug {bug.name}: a bug undone from fixes.json must be a single edit")
        fixes[bug.name] = [bug.path, bug.edits[0].planted, bug.edits[0].original]
    return json.dumps(fixes, indent=1)


def _fix_script(names: list[str] | None = None, then: str = "") -> str:
    """A bash script that undoes the named planted bugs (all when ``names`` is None), then runs ``then``."""
    chosen = "None" if names is None else repr(sorted(names))
    return f"""
python3 - <<'FIX'
import json
from pathlib import Path
fixes = json.loads(Path("/solution/fixes.json").read_text())
chosen = {chosen}
for name, (path, planted, correct) in sorted(fixes.items()):
    if chosen is not None and name not in chosen:
        continue
    target = Path("/app") / path
    text = target.read_text()
    assert text.count(planted) == 1, (name, path)
    target.write_text(text.replace(planted, correct))
    print("fixed", name, "in", path)
FIX
{then}
"""

# --------------------------------------------------------------------------------------------------------------
# hard-patchkit-offsets-merge

_PK = PlantedCodebase(FILES / "patchkit")

_PK_SHORTCUT = r"""
python3 - <<'EDIT'
from pathlib import Path
cli = Path("/app/patchkit/patchkit/cli.py")
text = cli.read_text()
text = text.replace("import argparse\n", "import argparse\nimport subprocess\n", 1)
old = "    text = unified_diff(old, new, args.label_old or args.old, args.label_new or args.new, context=args.unified)\n"
new = ("    labels = [\"--label\", args.label_old or args.old, \"--label\", args.label_new or args.new]\n"
       "    text = subprocess.run([\"diff\", f\"-U{args.unified}\", *labels, args.old, args.new],\n"
       "                          capture_output=True, text=True).stdout\n")
assert old in text
cli.write_text(text.replace(old, new))
EDIT
"""

_PK_INSTRUCTION = """
/app/patchkit is our in-house diff/patch/merge toolkit (pure Python, `python3 -m patchkit diff|apply|merge`, see
its README). It is supposed to be interchangeable with GNU diff and GNU patch, and its merge is supposed to behave
like git's. Three reports came in this week:

1. "Patches made with `diff -U0` (zero lines of context) apply without complaint but put the added lines in the
   wrong place; `apply -R` of such a patch corrupts the file too. And the patches `patchkit diff` writes for a new
   or emptied file, or with `-U 0`, have hunk headers that GNU patch and other tools read differently from what
   we meant."
2. "`patchkit apply` on a file that drifted since the patch was made sometimes changes the wrong copy of a
   repeated block (config sections, identical function bodies), where GNU patch changes the right one. It
   happens both when the right copy is only a couple of lines away from where the hunk says, and in later
   hunks of a file whose first hunk was found a few lines further down."
3. "`patchkit merge` quietly stacks both sides' lines when both sides insert at the same place, and when the two
   sides edit adjacent lines: both cases must be conflicts, as in git. Yet when both sides made the very same
   change it reports a conflict where there is nothing to resolve."

Fix the toolkit so that all of this works: diff output uses the standard unified-format hunk headers (exactly
what GNU diff writes for the same hunks), apply reads them the same way and lands every hunk where GNU patch
would, with the same `Hunk #N succeeded at L (offset K lines).` / `with fuzz F` reports, and merge reports
conflicts exactly in the cases described in `patchkit/merge3.py`'s docstring. Keep the package's structure
and its command-line interface (the CLI must keep using the package's own diff, apply and merge code; no
external diff/patch programs and no difflib). The unit tests in /app/patchkit/tests must keep passing; do not
edit them. Your fix will be checked on other files and patches than the ones in the reports.
"""

TASKS = [
    Spec(
        task_id="hard-patchkit-offsets-merge",
        title="Make a diff/patch/merge toolkit agree with GNU diff, GNU patch and git",
        difficulty="hard",
        category="debugging",
        instruction=_PK_INSTRUCTION,
        files=_PK.shipped,
        tests=_PK.tests,
        test_files=_PK.fixtures,
        weights={
            "test_diff_hunk_headers": 2.0,
            "test_apply_gnu_zero_context_patches": 2.0,
            "test_reverse_and_round_trip": 1.0,
            "test_apply_takes_the_nearest_match": 1.5,
            "test_apply_carries_offsets_and_fuzz": 1.5,
            "test_merge_same_change_on_both_sides_is_clean": 1.5,
            "test_merge_touching_changes_conflict": 1.5,
        },
        guards=["test_guard_suite_and_fixtures_unchanged", "test_guard_shipped_suite_passes", "test_guard_no_rewrite"],
        solution=_fix_script(None, "cd /app/patchkit && python3 -m unittest discover -s tests -t . 2>&1 | tail -1"),
        solution_files={"fixes.json": _fixes_json(_PK.planted)},
        negative_solutions=[
            NegativeSolution(name="writer-only", script=_fix_script(["format-empty-range"]), max_score=0.2,
                             why="fixes only the diff writer's empty-range headers"),
            NegativeSolution(name="merge-only", script=_fix_script(["merge-touching", "merge-identical"]),
                             max_score=0.3, why="fixes the merge and nothing of diff/apply"),
            NegativeSolution(name="diff-and-apply-not-merge",
                             script=_fix_script(["format-empty-range", "parse-empty-range", "apply-search-order",
                                                 "apply-offset-carry"]),
                             max_score=0.75, why="leaves both merge bugs"),
            NegativeSolution(name="gnu-diff-shortcut",
                             script=_fix_script([bug.name for bug in _PK.planted if bug.name != "format-empty-range"],
                                                _PK_SHORTCUT),
                             max_score=0.0, why="shells out to GNU diff instead of fixing the writer"),
        ],
        tags=["python", "diff", "patch", "merge", "multi-file", "gnu-compat"],
        limits={"agent_timeout_s": 3600, "test_timeout_s": 600},
    ),
]


# --------------------------------------------------------------------------------------------------------------
# hard-bake-incremental-order-only

_BK = PlantedCodebase(FILES / "bake")
_BK_BUGS = [bug.name for bug in _BK.planted if not bug.name.startswith("feature-")]
_BK_FEATURE = [bug.name for bug in _BK.planted if bug.name.startswith("feature-")]

_BK_ORDER_ONLY_AS_NORMAL = r"""
python3 - <<'EDIT'
from pathlib import Path
parser = Path("/app/bake/bake/parser.py")
text = parser.read_text()
old = "        prerequisites = self.expand(line, tail).split()\n"
assert old in text
parser.write_text(text.replace(old, '        prerequisites = self.expand(line, tail.replace("|", " ")).split()\n'))
EDIT
"""

_BK_INSTRUCTION = """
/app/bake is `bake`, our make-like build tool (pure Python; `python3 -m bake` in a folder with a `Bakefile`; see
/app/bake/README.md and the module docstrings). Teams rely on its incremental rebuilds, and those are wrong:

- After a source changes, `bake -n` does not list everything a real build would run, and a real build can
  leave a dependent target stale: a target must be rebuilt when one of its prerequisites was rebuilt earlier in
  the same run, whatever modification time the rebuilt file ends up with (see `bake/staleness.py`).
- In `--hash` mode, editing a source rebuilds the object but the final program is not relinked, so it keeps the
  old code. Also in `--hash` mode, changing a variable that a recipe uses (in the Bakefile or on the command
  line as `NAME=value`) rebuilds nothing, although the command that made the target is now different. Editing a
  Bakefile in a way that leaves the expanded commands the same must not rebuild anything.

We also need GNU make's order-only prerequisites: in a rule `targets : normal prerequisites | order-only
prerequisites` (explicit and pattern rules alike), the order-only ones are built before the target (also under
`-j`), but never make it out of date (neither in timestamp nor in `--hash` mode), are not part of `$^`, `$<` or
`$?`, and are listed by the automatic variable `$|`. `--print-graph` shows them after ` | `, as in
`app [target]: a.o b.o | out`. Today `bake` fails on such a rule with "no rule to make target '|'".

Fix and extend `bake` in place: keep its package structure and command line (the CLI must keep using the
package's parser, graph, executor, staleness and state modules). The unit tests in /app/bake/tests must keep
passing; do not edit them. Your work will be checked with other Bakefiles than any you write.
"""

TASKS.append(
    Spec(
        task_id="hard-bake-incremental-order-only",
        title="Fix the incremental rebuilds of a make-like build tool and add order-only prerequisites",
        difficulty="hard",
        category="build-repair",
        instruction=_BK_INSTRUCTION,
        files=_BK.shipped,
        tests=_BK.tests,
        weights={
            "test_dry_run_lists_everything_that_would_run": 1.5,
            "test_rebuilt_prerequisite_makes_dependents_stale": 1.5,
            "test_hash_mode_propagates_content_changes": 2.0,
            "test_hash_mode_recipe_changes": 1.5,
            "test_order_only_prerequisites": 2.0,
            "test_order_only_in_pattern_rules_in_parallel": 1.5,
        },
        guards=["test_guard_suite_unchanged_and_passing", "test_guard_no_rewrite"],
        solution=_fix_script(None, "cd /app/bake && python3 -m unittest discover -s tests -t . 2>&1 | tail -1"),
        solution_files={"fixes.json": _fixes_json(_BK.planted)},
        negative_solutions=[
            NegativeSolution(name="hash-mode-only",
                             script=_fix_script(["filestat-forget-digest", "state-signature-expanded"]),
                             max_score=0.35, why="fixes --hash mode only"),
            NegativeSolution(name="bugs-without-feature", script=_fix_script(_BK_BUGS),
                             max_score=0.65, why="fixes the three staleness bugs, adds no order-only prerequisites"),
            NegativeSolution(name="feature-only", script=_fix_script(_BK_FEATURE),
                             max_score=0.35, why="adds order-only prerequisites, leaves the staleness bugs"),
            NegativeSolution(name="order-only-as-normal",
                             script=_fix_script(_BK_BUGS, _BK_ORDER_ONLY_AS_NORMAL),
                             max_score=0.65, why="treats order-only prerequisites as normal ones"),
        ],
        tags=["python", "build-system", "make", "incremental", "feature", "multi-file"],
        limits={"agent_timeout_s": 3600, "test_timeout_s": 600},
    )
)
