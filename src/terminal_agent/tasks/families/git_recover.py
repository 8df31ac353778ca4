"""Family ``git-recover`` (held out as a whole): recover something from a repository's history.

/app/repo is a git repository whose history the image builds (a script run in ``docker build`` with
fixed dates and identity, so every instance's history is reproducible). The key says what must be
recovered:

* ``deleted-file``: a file deleted some commits ago comes back with its last content, committed;
* ``lost-branch``: a deleted branch is recreated at its last commit (its commits are only in the reflog);
* ``value-at-tag``: the value a setting had at a release tag, and the commit that set it;
* ``first-bad-commit``: the first commit at which the repository's check script fails.

easy: a short history with few distractions.
medium: a longer history, with decoys (a same-named file elsewhere, a second deleted branch, the
setting changed after the tag, harmless edits to the checked module).
"""

from __future__ import annotations

import base64
import random

from terminal_agent.tasks.families.base import (
    DEV_TOOLS,
    FAMILIES,
    GIT_IDENTITY,
    Difficulty,
    InstanceParts,
    TaskFamily,
    test_module,
)

VERBS = ("Update", "Tidy", "Tune", "Document", "Refactor", "Adjust", "Extend", "Simplify")
THINGS = ("the parser", "logging", "the README", "error messages", "the build notes", "defaults", "the CLI help",
          "comments", "the changelog", "naming")
TOPICS = ("deploy", "backup", "onboarding", "release", "oncall", "metrics", "cleanup", "restore")
SETTINGS = ("cache_size", "pool_size", "max_workers", "timeout_s", "batch_limit", "retry_count")


class History:
    """A bash script that builds /app/repo commit by commit, and the subjects it committed (in order)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines = ["set -euo pipefail", "mkdir -p /app/repo && cd /app/repo && git init -q"]
        self.subjects: list[str] = []
        self.tree: dict[str, str] = {}

    def write(self, path: str, content: str) -> None:
        encoded = base64.b64encode(content.encode()).decode()
        folder = path.rsplit("/", 1)[0] if "/" in path else "."
        self.lines.append(f"mkdir -p {folder} && printf %s {encoded} | base64 -d > {path}")
        self.tree[path] = content

    def remove(self, path: str) -> None:
        self.lines.append(f"git rm -q {path}")
        del self.tree[path]

    def commit(self, subject: str) -> str:
        day = len(self.subjects) + 1
        stamp = f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}T10:00:00+00:00"
        self.lines.append(
            f"git add -A && GIT_AUTHOR_DATE={stamp} GIT_COMMITTER_DATE={stamp} git commit -q -m '{subject}'"
        )
        self.subjects.append(subject)
        return subject

    def noise(self, count: int, paths: list[str]) -> None:
        for _ in range(count):
            path = self.rng.choice(paths)
            self.write(path, self.tree.get(path, "") + f"note {self.rng.randrange(10**6)}\n")
            self.commit(f"{self.rng.choice(VERBS)} {self.rng.choice(THINGS)} (#{100 + len(self.subjects)})")

    def run(self, command: str) -> None:
        self.lines.append(command)

    def script(self) -> str:
        return "\n".join(self.lines) + "\n"


COMMON = '''

def git(*args):
    proc = subprocess.run(["git", "-C", "/app/repo", *args], capture_output=True, text=True, timeout=60)
    return proc.stdout if proc.returncode == 0 else None


def test_guard_history_kept():
    subjects = (git("log", "--reverse", "--format=%s", "main") or "").splitlines()
    assert subjects[: len(MAIN_SUBJECTS)] == MAIN_SUBJECTS, "the original history of main was rewritten"
'''

DELETED_TESTS = COMMON + '''

def test_file_is_back():
    assert Path("/app/repo", TARGET).is_file()


def test_content_is_the_last_version():
    assert Path("/app/repo", TARGET).read_text() == CONTENT


def test_restore_is_committed():
    assert git("show", f"main:{TARGET}") == CONTENT
    assert git("status", "--porcelain", "--", TARGET) == ""
'''

BRANCH_TESTS = COMMON + '''

def test_branch_exists():
    assert git("rev-parse", "--verify", "--quiet", f"refs/heads/{BRANCH}") is not None


def test_branch_tip_is_the_lost_work():
    assert git("log", "-1", "--format=%s", BRANCH).strip() == BRANCH_SUBJECTS[-1]
    assert git("show", f"{BRANCH}:{TARGET}") == CONTENT


def test_branch_has_all_its_commits():
    assert (git("log", "--reverse", "--format=%s", f"main..{BRANCH}") or "").splitlines() == BRANCH_SUBJECTS
'''

TAG_TESTS = COMMON + '''
import json


def _answer():
    answer = json.loads(Path("/app/answer.json").read_text())
    assert isinstance(answer, dict)
    return answer


def test_answer_has_both_fields():
    assert set(_answer()) >= {"value", "subject"}


def test_value_at_the_tag():
    assert str(_answer()["value"]).strip() == VALUE


def test_commit_that_set_it():
    assert str(_answer()["subject"]).strip() == SUBJECT
'''

BISECT_TESTS = COMMON + '''

def _subject():
    text = Path("/app/first_bad.txt").read_text().split()
    assert text and len(text[0]) == 40, "a full 40-character commit hash"
    subject = git("log", "-1", "--format=%s", text[0] + "^{commit}")
    assert subject is not None, "not a commit of /app/repo"
    return subject.strip()


def test_answer_is_a_commit():
    assert _subject() in MAIN_SUBJECTS


def test_answer_is_a_failing_commit():
    assert _subject() in BAD_SUBJECTS


def test_answer_is_the_first_failing_commit():
    assert _subject() == BAD_SUBJECTS[0]
'''

CALC = '''"""Prices with tax{revision}."""

RATE_PERCENT = {rate}


def with_tax(cents):
    return cents + cents * RATE_PERCENT // {divisor}
'''

CHECK = '''"""Exit 0 when calc.py is right, 1 when not: python3 check.py"""
import sys

from calc import with_tax

sys.exit(0 if with_tax(1000) == {expected} and with_tax(0) == 0 else 1)
'''


def _base(history: History, rng: random.Random, extra: int) -> list[str]:
    paths = ["README.md", "src/app.py", "docs/usage.md"]
    history.write("README.md", "# tools\n")
    history.write("src/app.py", "print('hello')\n")
    history.write("docs/usage.md", "Run src/app.py.\n")
    history.commit("Initial commit")
    history.noise(extra, paths)
    return paths


@FAMILIES.register("git-recover")
class GitRecover(TaskFamily):
    name = "git-recover"
    summary = "Recover a deleted file, a deleted branch, a value at a tag or the first bad commit from git history."
    keys = ("deleted-file", "lost-branch", "value-at-tag", "first-bad-commit")
    key_meaning = "what is recovered from the history"
    held_out_family = True

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        history = History(rng)
        paths = _base(history, rng, rng.randrange(3, 7) if medium else rng.randrange(1, 3))
        constants: dict[str, object] = {}
        outputs: list[str] = []
        repo_note = "/app/repo is a git repository (branch main)."
        if key == "deleted-file":
            topic = rng.choice(TOPICS)
            target = f"docs/{topic}.md"
            content = f"# {topic}\n"
            for version in range(rng.randrange(2, 4)):
                content += f"step {version + 1}: {rng.choice(VERBS).lower()} {rng.choice(THINGS)}\n"
                history.write(target, content)
                history.commit(f"{'Add' if version == 0 else 'Revise'} the {topic} notes (#{200 + version})")
                history.noise(rng.randrange(1, 3), paths)
            history.remove(target)
            history.commit(f"Drop docs that moved to the wiki (#{300})")
            history.noise(rng.randrange(2, 5) if medium else 1, paths)
            if medium:
                history.write(f"old/{topic}.md", f"# {topic} (outdated draft)\n")
                history.commit(f"Keep an outdated {topic} draft (#{400})")
                history.noise(2, paths)
            instruction = (
                f"{repo_note} The file {target} was deleted from it some commits ago. Bring it back at the same path "
                "with its content as it was last committed before the deletion, and commit the restored file on "
                "main. Do not rewrite the existing history."
            )
            solution = (
                "#!/bin/bash\nset -e\ncd /app/repo\n"
                f"gone=$(git rev-list -n 1 HEAD -- {target})\n"
                f"git checkout \"$gone^\" -- {target}\n"
                f"git commit -q -m 'Restore {target}'\n"
            )
            constants.update({"TARGET": target, "CONTENT": content})
            tests = DELETED_TESTS
            weights = {"test_file_is_back": 0.5, "test_content_is_the_last_version": 1.5, "test_restore_is_committed": 1.0}
        elif key == "lost-branch":
            topic = rng.choice(TOPICS)
            branch = f"feature/{topic}"
            target = f"src/{topic}.py"
            history.run(f"git checkout -q -b {branch}")
            branch_subjects = []
            content = ""
            for step in range(rng.randrange(2, 4)):
                content += f"def step_{step}():\n    return {rng.randrange(100)}\n\n"
                history.write(target, content)
                branch_subjects.append(f"{topic}: step {step + 1} (#{500 + step})")
                history.lines.append(
                    f"git add -A && GIT_AUTHOR_DATE=2025-06-0{step + 1}T10:00:00+00:00 "
                    f"GIT_COMMITTER_DATE=2025-06-0{step + 1}T10:00:00+00:00 git commit -q -m '{branch_subjects[-1]}'"
                )
            history.run("git checkout -q main")
            del history.tree[target]
            if medium:
                decoy = rng.choice([t for t in TOPICS if t != topic])
                history.run(f"git checkout -q -b feature/{decoy}")
                history.write(f"src/{decoy}.py", "def draft():\n    return None\n")
                history.lines.append(
                    "git add -A && GIT_AUTHOR_DATE=2025-07-01T10:00:00+00:00 GIT_COMMITTER_DATE=2025-07-01T10:00:00+00:00 "
                    f"git commit -q -m '{decoy}: draft (#600)'"
                )
                history.run("git checkout -q main")
                del history.tree[f"src/{decoy}.py"]
                history.run(f"git branch -q -D feature/{decoy}")
            history.run(f"git branch -q -D {branch}")
            history.noise(rng.randrange(1, 4), paths)
            instruction = (
                f"{repo_note} Someone deleted the branch {branch} before it was merged; its commits were never "
                f"pushed anywhere. Recreate the branch {branch} pointing at its last commit, so that all its work "
                "is reachable again. Leave main as it is."
            )
            solution = (
                "#!/bin/bash\nset -e\ncd /app/repo\n"
                f"tip=$(git log -g --format='%H %s' HEAD | grep ' {branch_subjects[-1]}$' | head -n 1 | cut -d' ' -f1)\n"
                f"git branch {branch} \"$tip\"\n"
            )
            constants.update({"BRANCH": branch, "TARGET": target, "CONTENT": content, "BRANCH_SUBJECTS": branch_subjects})
            tests = BRANCH_TESTS
            weights = {"test_branch_exists": 0.5, "test_branch_tip_is_the_lost_work": 1.5, "test_branch_has_all_its_commits": 1.0}
        elif key == "value-at-tag":
            setting = rng.choice(SETTINGS)
            values = rng.sample(range(2, 999), 6)
            path = "config/settings.ini"
            tags = ["v1.0", "v1.1", "v1.2", "v2.0"]
            chosen_tag = rng.choice(tags[:-1] if medium else tags[1:3])
            value_at_tag = subject_at_tag = ""
            number = 0
            for tag in tags:
                for _ in range(rng.randrange(1, 3)):
                    number += 1
                    value = str(values[number % len(values)])
                    history.write(path, f"[service]\nname = api\n{setting} = {value}\n")
                    subject = history.commit(f"Set {setting} to a new value (#{700 + number})")
                    history.noise(rng.randrange(0, 2) + (1 if medium else 0), paths)
                    if tag == chosen_tag:
                        value_at_tag, subject_at_tag = value, subject
                history.run(f"git tag {'-a -m release ' if medium else ''}{tag}")
            number += 1
            final = str(rng.choice([v for v in range(2, 999) if v not in values]))
            history.write(path, f"[service]\nname = api\n{setting} = {final}\n")
            history.commit(f"Set {setting} to a new value (#{700 + number})")
            instruction = (
                f"{repo_note} Its releases are tagged (v1.0, v1.1, ...). What was the value of {setting} in "
                f"{path} in release {chosen_tag}, and which commit set it? Write /app/answer.json: a JSON object "
                "with \"value\" (the value as written in the file) and \"subject\" (the subject line of the last commit "
                f"at or before {chosen_tag} that changed that line). Do not change the repository."
            )
            solution = (
                "#!/bin/bash\nset -e\ncd /app/repo\n"
                f"value=$(git show {chosen_tag}:{path} | sed -n 's/^{setting} = //p')\n"
                f"subject=$(git log -1 --format=%s {chosen_tag} -- {path})\n"
                "python3 -c 'import json, sys; json.dump({\"value\": sys.argv[1], \"subject\": sys.argv[2]}, "
                "open(\"/app/answer.json\", \"w\"))' \"$value\" \"$subject\"\n"
            )
            constants.update({"VALUE": value_at_tag, "SUBJECT": subject_at_tag})
            outputs = ["/app/answer.json"]
            tests = TAG_TESTS
            weights = {"test_answer_has_both_fields": 0.5, "test_value_at_the_tag": 1.5, "test_commit_that_set_it": 1.0}
        else:  # first-bad-commit
            rate = rng.choice([5, 8, 10, 12, 20, 25])
            history.write("calc.py", CALC.format(rate=rate, revision="", divisor=100))
            history.write("check.py", CHECK.format(expected=1000 + 10 * rate))
            history.commit("Add the tax calculator and its check (#800)")
            total = rng.randrange(14, 24) if medium else rng.randrange(6, 10)
            bad_at = rng.randrange(2, total - 2)
            bad_subjects: list[str] = []
            for index in range(total):
                if index == bad_at:
                    history.write("calc.py", CALC.format(rate=rate, revision="", divisor=1000))
                    subject = history.commit(f"Speed up the tax rounding (#{900 + index})")
                elif medium and rng.random() < 0.3:
                    divisor = 1000 if index > bad_at else 100
                    history.write("calc.py", CALC.format(rate=rate, revision=f" (rev {index})", divisor=divisor))
                    subject = history.commit(f"Reword the calculator docstring (#{900 + index})")
                else:
                    path = rng.choice(paths)
                    history.write(path, history.tree[path] + f"note {rng.randrange(10**6)}\n")
                    subject = history.commit(f"{rng.choice(VERBS)} {rng.choice(THINGS)} (#{900 + index})")
                if index >= bad_at:
                    bad_subjects.append(subject)
            instruction = (
                f"{repo_note} `python3 check.py` (run in the repository) exits 0 when the tax calculator is right. "
                "It passes at the commit that added it but fails now. Find the first commit on main at which it "
                "fails and write its full 40-character hash to /app/first_bad.txt. Leave the repository's history "
                "as it is."
            )
            solution = (
                "#!/bin/bash\nset -e\ncd /app/repo\n"
                "git bisect start HEAD \"$(git log --format=%H --grep='Add the tax calculator')\" >/dev/null\n"
                "git bisect run python3 check.py > /tmp/bisect.log 2>&1 || true\n"
                "git rev-parse refs/bisect/bad > /app/first_bad.txt\n"
                "git bisect reset -q\n"
            )
            constants.update({"BAD_SUBJECTS": bad_subjects})
            outputs = ["/app/first_bad.txt"]
            tests = BISECT_TESTS
            weights = {"test_answer_is_a_commit": 0.5, "test_answer_is_a_failing_commit": 1.0,
                       "test_answer_is_the_first_failing_commit": 1.5}
        main_subjects = list(history.subjects)
        constants = {"MAIN_SUBJECTS": main_subjects, **constants}
        return InstanceParts(
            title=f"git: recover ({key})",
            instruction=instruction,
            category="git",
            test_source=test_module(constants, tests),
            test_weights=weights,
            guards=["test_guard_history_kept"],
            solution=solution,
            files={"setup/history.sh": history.script()},
            setup=[DEV_TOOLS],
            dockerfile_steps=[GIT_IDENTITY, "RUN bash /app/setup/history.sh && rm -rf /app/setup"],
            outputs=outputs,
            tags=["git", "history", key],
            parameters={"commits": len(main_subjects)},
        )
