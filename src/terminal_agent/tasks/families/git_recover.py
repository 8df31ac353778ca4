"""Family ``git-recover`` (held out as a whole): recover something from a repository's history.

/app/repo is a git repository whose history the image builds (a script run in ``docker build`` with
fixed dates and identity, so every instance's history is reproducible). The key says what must be
recovered:

* ``line-author``: which commit last changed one line of a file, who wrote it and when (``git blame``);
* ``author-stats``: how many commits each author made that touch ``src/`` (``git shortlog`` over a path);
* ``value-at-tag``: the value a setting had at a release tag, and the commit that set it;
* ``first-bad-commit``: the first commit at which the repository's check script fails, the last one at which it
  passes, and how many commits fail.

None of them restores or replays history (the skills of the train tasks ``git-restore-last-good-file`` and
``git-recover-reset-commits``, which the keys ``deleted-file`` and ``lost-branch`` repeated until issue 36): each
is a question about the history, answered in a JSON file.

easy: a short history with few distractions.
medium: a longer history, with decoys (later edits of other lines of the same file, authors with two commits
only outside ``src/``, the setting changed after the tag, harmless edits to the checked module).
"""

from __future__ import annotations

import base64
import random

from terminal_agent.tasks.families.base import (
    DEV_TOOLS,
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
AUTHORS = ("Ada Brandt <ada@example.com>", "Bo Lindqvist <bo@example.com>", "Chen Wei <chen@example.com>",
           "Dara Okafor <dara@example.com>", "Eli Moreau <eli@example.com>", "Fen Kowalski <fen@example.com>")
DEFAULT_AUTHOR = "Corpus Author <author@example.com>"


class History:
    """A bash script that builds /app/repo commit by commit, and the subjects it committed (in order)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines = ["set -euo pipefail", "mkdir -p /app/repo && cd /app/repo && git init -q"]
        self.subjects: list[str] = []
        self.tree: dict[str, str] = {}
        self.touched: list[tuple[str, str, set[str]]] = []
        """(subject, author, paths changed) of every commit on main, in order."""
        self._pending: set[str] = set()

    def write(self, path: str, content: str) -> None:
        encoded = base64.b64encode(content.encode()).decode()
        folder = path.rsplit("/", 1)[0] if "/" in path else "."
        self.lines.append(f"mkdir -p {folder} && printf %s {encoded} | base64 -d > {path}")
        self.tree[path] = content
        self._pending.add(path)

    def remove(self, path: str) -> None:
        self.lines.append(f"git rm -q {path}")
        del self.tree[path]

    def commit(self, subject: str, author: str | None = None) -> str:
        day = len(self.subjects) + 1
        stamp = self.date(day)
        who = ""
        if author:
            name, email = author[:-1].split(" <")
            who = f"GIT_AUTHOR_NAME='{name}' GIT_AUTHOR_EMAIL={email} "
        self.lines.append(
            f"git add -A && {who}GIT_AUTHOR_DATE={stamp} GIT_COMMITTER_DATE={stamp} git commit -q -m '{subject}'"
        )
        self.subjects.append(subject)
        self.touched.append((subject, author or DEFAULT_AUTHOR, set(self._pending)))
        self._pending.clear()
        return subject

    def date(self, day: int) -> str:
        """The author date of the ``day``-th commit of main (1-based)."""
        return f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}T10:00:00+00:00"

    def noise(self, count: int, paths: list[str], authors: tuple[str, ...] = ()) -> None:
        for _ in range(count):
            path = self.rng.choice(paths)
            self.write(path, self.tree.get(path, "") + f"note {self.rng.randrange(10**6)}\n")
            author = self.rng.choice(authors) if authors else None
            self.commit(f"{self.rng.choice(VERBS)} {self.rng.choice(THINGS)} (#{100 + len(self.subjects)})", author)

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

BLAME_TESTS = COMMON + '''
import json


def _answer():
    answer = json.loads(Path("/app/answer.json").read_text())
    assert isinstance(answer, dict)
    return answer


def test_commit_subject():
    assert str(_answer().get("subject", "")).strip() == SUBJECT


def test_author():
    assert str(_answer().get("author", "")).strip() == AUTHOR


def test_author_date():
    assert str(_answer().get("date", "")).strip() == DATE
'''

STATS_TESTS = COMMON + '''


def _lines():
    lines = [line.split(None, 1) for line in Path("/app/authors.txt").read_text().splitlines() if line.strip()]
    assert lines and all(len(parts) == 2 and parts[0].isdigit() for parts in lines), "COUNT NAME lines"
    return [(int(count), name.strip()) for count, name in lines]


def test_the_right_authors():
    assert sorted(name for _, name in _lines()) == sorted(name for _, name in EXPECTED)


def test_counts():
    assert sorted(_lines(), key=lambda item: item[1]) == sorted(map(tuple, EXPECTED), key=lambda item: item[1])


def test_order():
    assert _lines() == [tuple(item) for item in EXPECTED]
'''

TAG_TESTS = COMMON + '''
import json


def _answer():
    answer = json.loads(Path("/app/answer.json").read_text())
    assert isinstance(answer, dict) and set(answer) >= {"value", "subject", "date"}
    return answer


def test_date_of_that_commit():
    assert str(_answer()["date"]).strip() == DATE


def test_value_at_the_tag():
    assert str(_answer()["value"]).strip() == VALUE


def test_commit_that_set_it():
    assert str(_answer()["subject"]).strip() == SUBJECT
'''

BISECT_TESTS = COMMON + '''
import json


def _answer():
    answer = json.loads(Path("/app/bisect.json").read_text())
    assert isinstance(answer, dict)
    return answer


def _subject(field):
    text = str(_answer().get(field, "")).strip()
    assert len(text) == 40, "a full 40-character commit hash"
    subject = git("log", "-1", "--format=%s", text + "^{commit}")
    assert subject is not None, "not a commit of /app/repo"
    return subject.strip()


def test_first_bad_commit():
    assert _subject("first_bad") == BAD_SUBJECTS[0]


def test_last_good_commit():
    assert _subject("last_good") == GOOD_SUBJECT


def test_number_of_failing_commits():
    assert _answer().get("failing_commits") == len(BAD_SUBJECTS)
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


class GitRecover(TaskFamily):
    name = "git-recover"
    summary = "Answer questions about git history: who last changed a line, commits per author, a value at a tag, the first bad commit."
    keys = ("line-author", "author-stats", "value-at-tag", "first-bad-commit")
    key_meaning = "what is recovered from the history"
    held_out_family = True

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        history = History(rng)
        paths = _base(history, rng, rng.randrange(3, 7) if medium else rng.randrange(1, 3))
        constants: dict[str, object] = {}
        outputs: list[str] = []
        repo_note = "/app/repo is a git repository (branch main)."
        if key == "line-author":
            setting = rng.choice(SETTINGS)
            path = "src/settings.py"
            others = [s for s in SETTINGS if s != setting][:2]
            values = {name: rng.randrange(2, 999) for name in (setting, *others)}

            def settings_text() -> str:
                return "".join(f"{name} = {values[name]}\n" for name in (setting, *others))

            history.write(path, settings_text())
            history.commit("Add the settings module (#200)", rng.choice(AUTHORS))
            authors = list(rng.sample(AUTHORS, 3))
            answer_subject = answer_author = answer_date = ""
            for turn, author in enumerate(authors):
                history.noise(rng.randrange(1, 3), paths)
                values[setting] = rng.randrange(2, 999)
                history.write(path, settings_text())
                answer_subject = history.commit(f"Tune {setting} (#{210 + turn})", author)
                answer_author, answer_date = author, history.date(len(history.subjects))[:10]
            history.noise(rng.randrange(1, 3), paths)
            if medium:  # later commits change the same file, other lines: `git log -1 -- FILE` is a decoy
                for turn, name in enumerate(others):
                    values[name] = rng.randrange(2, 999)
                    history.write(path, settings_text())
                    history.commit(f"Tune {name} (#{230 + turn})", rng.choice([a for a in AUTHORS if a != answer_author]))
                    history.noise(1, paths)
            instruction = (
                f"{repo_note} Which commit last changed the line `{setting} = ...` of {path}, who wrote it and "
                "when? Write /app/answer.json: a JSON object with \"subject\" (that commit's subject line), "
                "\"author\" (its author as `Name <email>`) and \"date\" (its author date as YYYY-MM-DD). Do not "
                "change the repository."
            )
            solution = (
                "#!/bin/bash\nset -e\ncd /app/repo\n"
                f"line=$(grep -n '^{setting} = ' {path} | cut -d: -f1)\n"
                f"commit=$(git blame -L \"$line,$line\" --porcelain {path} | head -n 1 | cut -d' ' -f1)\n"
                "python3 -c 'import json, sys; json.dump(dict(zip((\"subject\", \"author\", \"date\"), sys.argv[1:])), "
                "open(\"/app/answer.json\", \"w\"))' \"$(git log -1 --format=%s \"$commit\")\" "
                "\"$(git log -1 --format='%an <%ae>' \"$commit\")\" \"$(git log -1 --format=%ad --date=short \"$commit\")\"\n"
            )
            constants.update({"SUBJECT": answer_subject, "AUTHOR": answer_author, "DATE": answer_date})
            outputs = ["/app/answer.json"]
            tests = BLAME_TESTS
            weights = {"test_commit_subject": 1.5, "test_author": 1.0, "test_author_date": 1.0}
        elif key == "author-stats":
            crew = list(rng.sample(AUTHORS, 4))
            src_paths = ["src/app.py", "src/util.py"]
            history.write("src/util.py", "def helper():\n    return 1\n")
            history.commit("Add a helper module (#250)", crew[0])
            for _ in range(rng.randrange(8, 14) if medium else rng.randrange(5, 8)):
                history.noise(1, rng.choice([src_paths, paths]), tuple(crew))
            if medium:  # an author who only touched docs: not listed
                outsider = next(a for a in AUTHORS if a not in crew)
                history.noise(2, ["docs/usage.md"], (outsider,))
            counts: dict[str, int] = {}
            for _subject, author, touched in history.touched:
                if any(path.startswith("src/") for path in touched):
                    name = author.split(" <")[0]
                    counts[name] = counts.get(name, 0) + 1
            expected = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            instruction = (
                f"{repo_note} Who worked on src/, and how much? For every person who wrote a change on main that "
                "touches a file under src/, write one line `COUNT NAME` to /app/authors.txt: the number of such "
                "changes they wrote and their name (without the e-mail), largest count first, equal counts by name "
                "in byte order. People who never touched src/ are not listed. Leave /app/repo as it is."
            )
            solution = (
                "#!/bin/bash\nset -e\ncd /app/repo\n"
                "git shortlog -s main -- src/ | awk -F '\\t' '{gsub(/ /, \"\", $1); print $1, $2}' | "
                "LC_ALL=C sort -k1,1nr -k2 > /app/authors.txt\n"
            )
            constants.update({"EXPECTED": [[count, name] for name, count in expected]})
            outputs = ["/app/authors.txt"]
            tests = STATS_TESTS
            weights = {"test_the_right_authors": 1.0, "test_counts": 1.5, "test_order": 1.0}
        elif key == "value-at-tag":
            setting = rng.choice(SETTINGS)
            picks = rng.sample(range(2, 999), 6)
            path = "config/settings.ini"
            tags = ["v1.0", "v1.1", "v1.2", "v2.0"]
            chosen_tag = rng.choice(tags[:-1] if medium else tags[1:3])
            value_at_tag = subject_at_tag = date_at_tag = ""
            number = 0
            for tag in tags:
                for _ in range(rng.randrange(1, 3)):
                    number += 1
                    value = str(picks[number % len(picks)])
                    history.write(path, f"[service]\nname = api\n{setting} = {value}\n")
                    subject = history.commit(f"Set {setting} to a new value (#{700 + number})")
                    set_on = history.date(len(history.subjects))[:10]
                    history.noise(rng.randrange(0, 2) + (1 if medium else 0), paths)
                    if tag == chosen_tag:
                        value_at_tag, subject_at_tag, date_at_tag = value, subject, set_on
                history.run(f"git tag {'-a -m release ' if medium else ''}{tag}")
            number += 1
            final = str(rng.choice([v for v in range(2, 999) if v not in picks]))
            history.write(path, f"[service]\nname = api\n{setting} = {final}\n")
            history.commit(f"Set {setting} to a new value (#{700 + number})")
            instruction = (
                f"{repo_note} Its releases are tagged (v1.0, v1.1, ...). What was the value of {setting} in "
                f"{path} in release {chosen_tag}, and which commit set it? Write /app/answer.json: a JSON object "
                "with \"value\" (the value as written in the file), \"subject\" (the subject line of the last commit "
                f"at or before {chosen_tag} that changed that line) and \"date\" (that commit's author date as "
                "YYYY-MM-DD). Do not change the repository."
            )
            solution = (
                "#!/bin/bash\nset -e\ncd /app/repo\n"
                f"value=$(git show {chosen_tag}:{path} | sed -n 's/^{setting} = //p')\n"
                f"subject=$(git log -1 --format=%s {chosen_tag} -- {path})\n"
                f"date=$(git log -1 --format=%ad --date=short {chosen_tag} -- {path})\n"
                "python3 -c 'import json, sys; json.dump({\"value\": sys.argv[1], \"subject\": sys.argv[2], "
                "\"date\": sys.argv[3]}, open(\"/app/answer.json\", \"w\"))' \"$value\" \"$subject\" \"$date\"\n"
            )
            constants.update({"VALUE": value_at_tag, "SUBJECT": subject_at_tag, "DATE": date_at_tag})
            outputs = ["/app/answer.json"]
            tests = TAG_TESTS
            weights = {"test_value_at_the_tag": 1.5, "test_commit_that_set_it": 1.0, "test_date_of_that_commit": 1.0}
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
                "It passes at the commit that added it but fails now, and once it fails it fails on every later "
                "commit. Write /app/bisect.json: a JSON object with \"first_bad\" (the full 40-character hash of the "
                "first commit on main at which it fails), \"last_good\" (the full hash of the commit just before "
                "it, where it passes) and \"failing_commits\" (how many commits of main fail it, as a number). "
                "Leave the repository's history as it is."
            )
            solution = (
                "#!/bin/bash\nset -e\ncd /app/repo\n"
                "git bisect start HEAD \"$(git log --format=%H --grep='Add the tax calculator')\" >/dev/null\n"
                "git bisect run python3 check.py > /tmp/bisect.log 2>&1 || true\n"
                "bad=$(git rev-parse refs/bisect/bad)\n"
                "git bisect reset > /dev/null 2>&1\n"
                "python3 -c 'import json, sys; json.dump({\"first_bad\": sys.argv[1], \"last_good\": sys.argv[2], "
                "\"failing_commits\": int(sys.argv[3])}, open(\"/app/bisect.json\", \"w\"))' "
                "\"$bad\" \"$(git rev-parse \"$bad^\")\" \"$(git rev-list --count \"$bad^..main\")\"\n"
            )
            good_subject = history.subjects[history.subjects.index(bad_subjects[0]) - 1]
            constants.update({"BAD_SUBJECTS": bad_subjects, "GOOD_SUBJECT": good_subject})
            outputs = ["/app/bisect.json"]
            tests = BISECT_TESTS
            weights = {"test_first_bad_commit": 1.5, "test_last_good_commit": 1.0, "test_number_of_failing_commits": 1.0}
        main_subjects = list(history.subjects)
        constants = {"MAIN_SUBJECTS": main_subjects, **constants}
        return InstanceParts(
            title=f"git: from the history ({key})",
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
