"""Git history to recover, inspect or rewrite.

Every repository is built in the image by one small builder (:data:`_BUILDER`, written by a Dockerfile step and
removed after it ran) from a plan of commits (``_build/plan.json``, removed too) with fixed authors and dates, so
commit hashes are the same in every build. The hashes and trees the tests compare with are constants of the tests
(``RECORDED``): :func:`_recorded` runs the same builder here, when the corpus is built, and keeps what the plan's
``record`` steps print. Nothing the tests trust lives in the image, where the agent (root) could rewrite it.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _spec import GIT_IDENTITY, Spec

_BUILDER = r'''"""Build a git repository from a JSON plan: fixed identities and dates, so every build gives the same hashes."""
import json
import os
import subprocess
import sys

plan = json.load(open(sys.argv[1]))
records = sys.argv[2] if len(sys.argv) > 2 else None  # given only when the corpus is built, never in the image
repo = plan["path"]
os.makedirs(repo, exist_ok=True)
clock = [plan.get("start", 1709283600)]
DEFAULT = "Corpus Author <author@example.com>"


def ident(text):
    name, email = text.rsplit(" <", 1)
    return name, email.rstrip(">")


def git(*args, author=None, committer=None, capture=False):
    env = dict(os.environ)
    a_name, a_email = ident(author or DEFAULT)
    c_name, c_email = ident(committer or author or DEFAULT)
    stamp = f"@{clock[0]} +0000"
    env.update(GIT_AUTHOR_NAME=a_name, GIT_AUTHOR_EMAIL=a_email, GIT_COMMITTER_NAME=c_name,
               GIT_COMMITTER_EMAIL=c_email, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    result = subprocess.run(["git", "-C", repo, *args], env=env, check=True, text=True,
                            stdout=subprocess.PIPE if capture else None)
    return result.stdout if capture else None


git("init", "-q", "-b", "main")
for step in plan["steps"]:
    op = step["op"]
    clock[0] += step.get("gap", 5820)
    if op == "commit":
        for path, content in step.get("files", {}).items():
            full = os.path.join(repo, path)
            if content is None:
                git("rm", "-q", "--", path)
                continue
            os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
            with open(full, "w", newline="") as handle:
                handle.write(content)
            git("add", "--", path)
        git("commit", "-q", "--allow-empty", "-m", step["msg"], author=step.get("author"),
            committer=step.get("committer"))
    elif op == "git":
        git(*step["args"], author=step.get("author"))
    elif op == "record":
        if records:
            value = git(*step["args"], capture=True)
            with open(os.path.join(records, step["name"]), "w") as handle:
                handle.write(value)
    else:
        raise SystemExit(f"unknown op {op}")
'''

_GIT_HELPERS = '''
REPO = "/app/repo"


def git(*args, check=True):
    result = run("git", "-C", REPO, *args)
    if check:
        assert result.returncode == 0, result.stderr
    return result.stdout


def recorded(name):
    return RECORDED[name].strip()


def export(ref, target):
    """The tree of ``ref`` unpacked into ``target`` (a fresh directory), without touching the repository."""
    archive = subprocess.run(["git", "-C", REPO, "archive", "--format=tar", ref], capture_output=True, timeout=60)
    assert archive.returncode == 0, archive.stderr
    Path(target).mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True, timeout=60)
    return Path(target)
'''


def _repo(plan_steps: list[dict], start: int = 1709283600) -> tuple[dict[str, str], list[str]]:
    """Build-context files and Dockerfile steps that build /app/repo from ``plan_steps``."""
    plan = {"path": "/app/repo", "start": start, "steps": plan_steps}
    files = {"_build/plan.json": json.dumps(plan, indent=1) + "\n"}
    builder = base64.b64encode(_BUILDER.encode()).decode()
    steps = [GIT_IDENTITY, f"RUN echo {builder} | base64 -d > /tmp/make_repo.py && python3 /tmp/make_repo.py "
             "/app/_build/plan.json && rm -rf /app/_build /tmp/make_repo.py"]
    return files, steps


def _recorded(plan: dict) -> dict[str, str]:
    """What the ``record`` steps of ``plan`` print, from the builder run here on a scratch copy (fixed identities
    and dates, and no user or system git settings, give the hashes the image build gives)."""
    if not any(step["op"] == "record" for step in plan["steps"]):
        return {}
    with tempfile.TemporaryDirectory(prefix="corpus-git-") as scratch:
        local = {**plan, "path": os.path.join(scratch, "repo")}
        plan_path, records = Path(scratch, "plan.json"), Path(scratch, "records")
        plan_path.write_text(json.dumps(local))
        records.mkdir()
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", HOME=scratch)
        subprocess.run([sys.executable, "-c", _BUILDER, str(plan_path), str(records)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        return {path.name: path.read_text() for path in sorted(records.iterdir())}


def _with_recorded(spec: Spec) -> Spec:
    """``spec`` with the recorded values of its repository written into its tests as ``RECORDED``."""
    plan = json.loads(spec.files["_build/plan.json"])
    spec.tests = f"RECORDED = {_recorded(plan)!r}\n" + spec.tests
    return spec


def _dates(plan_steps: list[dict], start: int = 1709283600) -> list[int]:
    """The builder's clock after each step (the date of the commit a step makes)."""
    clock, out = start, []
    for step in plan_steps:
        clock += step.get("gap", 5820)
        out.append(clock)
    return out


def _c(msg: str, files: dict, author: str | None = None, committer: str | None = None) -> dict:
    step = {"op": "commit", "msg": msg, "files": files}
    if author:
        step["author"] = author
    if committer:
        step["committer"] = committer
    return step


def _g(*args: str) -> dict:
    return {"op": "git", "args": list(args)}


def _rec(name: str, *args: str) -> dict:
    return {"op": "record", "name": name, "args": list(args)}


# ---------------------------------------------------------------------------------------------------------------
# git-recover-reset-commits
# ---------------------------------------------------------------------------------------------------------------

PRIYA = "Priya Natarajan <priya@example.com>"
_INV_README = "# Inventroy\n\nA tiny stock ledger. `items.csv` holds name, quantity and reorder level.\n"
_INV_V1 = '''"""Tiny stock ledger: items.csv holds name,quantity,reorder_level."""
import csv


def load(path="items.csv"):
    with open(path, newline="") as handle:
        return [{"name": row["name"], "quantity": int(row["quantity"]), "reorder_level": int(row["reorder_level"])}
                for row in csv.DictReader(handle)]
'''
_INV_V2 = _INV_V1 + '''

def shortfall(item):
    """How many units are missing to reach the reorder level (0 or more)."""
    return max(0, item["reorder_level"] - item["quantity"])
'''
_INV_DEBUG = _INV_V1.replace("    with open", '    print("DEBUG load", path)\n    with open')
_ITEMS = "name,quantity,reorder_level\nbolts,120,50\nnuts,30,40\nhinges,8,10\nscrews,400,100\nbrackets,2,25\n"
_EXPORT = '''import json

from inventory import load

if __name__ == "__main__":
    print(json.dumps(load(), indent=2))
'''
_REPORT_V1 = '''from inventory import load


def low_stock(items):
    return [item for item in items if item["quantity"] <= item["reorder_level"]]


if __name__ == "__main__":
    for item in low_stock(load()):
        print(f"{item['name']}: {item['quantity']} (reorder at {item['reorder_level']})")
'''
_REPORT_V2 = '''from inventory import load, shortfall


def low_stock(items):
    """Items at or under their reorder level, the largest shortfall first."""
    low = [item for item in items if item["quantity"] <= item["reorder_level"]]
    return sorted(low, key=lambda item: (-shortfall(item), item["name"]))


if __name__ == "__main__":
    for item in low_stock(load()):
        print(f"{item['name']}: {item['quantity']} (short by {shortfall(item)})")
'''
_RECOVER_PLAN = [
    _c("Initial inventory tool", {"README.md": _INV_README, "inventory.py": _INV_V1, "items.csv": _ITEMS,
                                  ".gitignore": "__pycache__/\n"}),
    _c("Add JSON export", {"export.py": _EXPORT}),
    _c("Add low-stock report", {"report.py": _REPORT_V1}, author=PRIYA),
    _c("Report: sort by shortfall", {"report.py": _REPORT_V2, "inventory.py": _INV_V2}, author=PRIYA),
    _g("reset", "-q", "--hard", "HEAD~2"),
    _c("tmp: debug print", {"inventory.py": _INV_DEBUG}),
    _g("reset", "-q", "--hard", "HEAD~1"),
    _c("Fix README typo, add washers", {"README.md": _INV_README.replace("Inventroy", "Inventory"),
                                        "items.csv": _ITEMS + "washers,3,20\n"}),
    _rec("main", "rev-parse", "main"),
]
_RECOVER_DATES = _dates(_RECOVER_PLAN)
_recover_files, _recover_steps = _repo(_RECOVER_PLAN)

_RECOVER_TESTS = _GIT_HELPERS + f'''
REPORT = {_REPORT_V2!r}
INVENTORY = {_INV_V2!r}
C_DATE, D_DATE = {_RECOVER_DATES[2]}, {_RECOVER_DATES[3]}


def test_report_work_restored():
    assert git("show", "main:report.py") == REPORT
    assert git("show", "main:inventory.py") == INVENTORY


def test_lost_commits_replayed_on_top():
    top = git("log", "-3", "--format=%s|%an <%ae>|%at", "main").splitlines()
    assert top == [f"Report: sort by shortfall|{PRIYA}|{{D_DATE}}", f"Add low-stock report|{PRIYA}|{{C_DATE}}",
                   "Fix README typo, add washers|Corpus Author <author@example.com>|" + top[2].rsplit("|", 1)[1]]
    assert git("rev-parse", "main~2").strip() == recorded("main")


def test_history_is_linear():
    assert git("rev-list", "--count", "main").strip() == "5"
    assert git("rev-list", "--merges", "main").strip() == ""


def test_report_output():
    result = run("python3", "-B", "report.py", cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["brackets: 2 (short by 23)", "washers: 3 (short by 17)",
                                          "nuts: 30 (short by 10)", "hinges: 8 (short by 2)"]


def test_guard_clean_and_no_debug_commit():
    assert git("status", "--porcelain") == ""
    assert "tmp: debug print" not in git("log", "--format=%s", "main")
'''.replace("{PRIYA}", PRIYA)

_RECOVER_SOLUTION = r'''cd /app/repo
c=$(git log -g --format='%H %s' | awk '$2 == "Add" && /Add low-stock report/ {print $1; exit}')
d=$(git log -g --format='%H %s' | awk '/Report: sort by shortfall/ {print $1; exit}')
git cherry-pick "$c" "$d"
git status --short
'''

# ---------------------------------------------------------------------------------------------------------------
# git-purge-secret-history
# ---------------------------------------------------------------------------------------------------------------

MAYA = "Maya Chen <maya@example.com>"
TOMAS = "Tomas Berg <tomas@example.com>"
STRIPE_SECRET = "sk_live_CORPUS51xQ9vR2mT7wZpL"
DB_SECRET = "corpus-hunter2-9F3kWq"
_SET_A = 'import os\n\nDEBUG = os.environ.get("DEBUG", "0") == "1"\nCURRENCY = "EUR"\n'
_SET_C = _SET_A + f'STRIPE_KEY = "{STRIPE_SECRET}"\nTIMEOUT_S = 5\n'
_SET_F = _SET_C.replace("TIMEOUT_S = 5", "TIMEOUT_S = 10")
_CLEAN_LINE = 'STRIPE_KEY = os.environ.get("STRIPE_KEY", "")'
_APP = '''from client import charge
from settings import CURRENCY


def checkout(cart):
    total = sum(price * qty for price, qty in cart)
    return charge(round(total, 2), CURRENCY)
'''
_CLIENT_B = '''def charge(amount, currency):
    """Send a charge to the payment provider (stubbed here)."""
    return {"amount": amount, "currency": currency, "status": "ok"}
'''
_CLIENT_D = _CLIENT_B.replace('    """Send', '    # retried up to 3 times by the caller\n    """Send')
_CLIENT_F = "import settings\n\n\n" + _CLIENT_D.replace('"status": "ok"}', '"status": "ok", "timeout": settings.TIMEOUT_S}')
_BILL_README = "# billing\n\nCharges carts through the payment client.\n"
_DEPLOY_README = "Deployment notes: the service reads its settings from the environment.\n"
_ENV_FILE = f"DB_HOST=db.internal\nDB_PASSWORD={DB_SECRET}\n"
_PURGE_PLAN = [
    _c("Initial billing service", {"README.md": _BILL_README, "app.py": _APP, "settings.py": _SET_A}, author=MAYA),
    _c("Add payment client", {"client.py": _CLIENT_B}, author=TOMAS),
    _c("Configure staging", {"settings.py": _SET_C, "deploy/.env": _ENV_FILE, "deploy/README.md": _DEPLOY_README},
       author=MAYA),
    _c("Add retries to client", {"client.py": _CLIENT_D}, author=TOMAS),
    _g("tag", "-a", "v1.0", "-m", "Release 1.0"),
    _g("checkout", "-q", "-b", "hotfix"),
    _c("Hotfix: round before charging", {"app.py": _APP.replace("round(total, 2)", "round(total + 1e-9, 2)")},
       author=TOMAS),
    _g("checkout", "-q", "main"),
    _c("Document deployment", {"README.md": _BILL_README + "\nSee deploy/README.md.\n",
                               "deploy/README.md": _DEPLOY_README + "Restart after changing settings.\n"}, author=MAYA),
    _c("Use configured timeout", {"client.py": _CLIENT_F, "settings.py": _SET_F}, author=TOMAS),
]


def _expected_history(plan: list[dict], dates: list[int], branches: dict[str, list[int]], clean) -> dict:
    """Per branch, the commits (subject, author, date, tree) the plan's step indexes give, each tree passed
    through ``clean``."""
    trees, tree = {}, {}
    current = "main"
    heads = {"main": {}}
    for index, step in enumerate(plan):
        if step["op"] == "git" and step["args"][0] == "checkout":
            name = step["args"][-1]
            if "-b" in step["args"]:
                heads[name] = dict(heads[current])
            current = name
            tree = heads[current]
        if step["op"] != "commit":
            continue
        tree = dict(heads.get(current, {}))
        for path, content in step["files"].items():
            if content is None:
                tree.pop(path, None)
            else:
                tree[path] = content
        heads[current] = tree
        trees[index] = clean(dict(tree))
    out = {}
    for branch, indexes in branches.items():
        out[branch] = [[plan[i]["msg"], plan[i].get("author", "Corpus Author <author@example.com>"), dates[i], trees[i]]
                       for i in indexes]
    return out


def _purge_clean(tree: dict) -> dict:
    tree.pop("deploy/.env", None)
    if "settings.py" in tree:
        tree["settings.py"] = tree["settings.py"].replace(f'STRIPE_KEY = "{STRIPE_SECRET}"', _CLEAN_LINE)
    return tree


_PURGE_EXPECTED = _expected_history(_PURGE_PLAN, _dates(_PURGE_PLAN), {"main": [0, 1, 2, 3, 8, 9],
                                                                       "hotfix": [0, 1, 2, 3, 6]}, _purge_clean)
_purge_files, _purge_steps = _repo(_PURGE_PLAN)

_PURGE_TESTS = _GIT_HELPERS + f'''
SECRETS = [{STRIPE_SECRET!r}, {DB_SECRET!r}]
EXPECTED = json.loads({json.dumps(_PURGE_EXPECTED)!r})
CLEAN_LINE = {_CLEAN_LINE!r}


def _history(branch):
    out = []
    for commit in git("rev-list", "--reverse", branch).split():
        subject, author, date = git("log", "-1", "--format=%s%n%an <%ae>%n%at", commit).splitlines()
        files = {{path: git("show", f"{{commit}}:{{path}}") for path in git("ls-tree", "-r", "--name-only", commit).split()}}
        out.append([subject, author, int(date), files])
    return out


def _secret_free(commit):
    names = git("ls-tree", "-r", "--name-only", commit).split()
    grep = run("git", "-C", REPO, "grep", "-q", "-F", "-e", SECRETS[0], "-e", SECRETS[1], commit, "--")
    return "deploy/.env" not in names and grep.returncode == 1


def test_no_commit_holds_a_secret():
    commits = git("rev-list", "--all").split()
    assert len(commits) >= 7
    assert all(_secret_free(commit) for commit in commits)


def test_main_history_rewritten_faithfully():
    assert _history("main") == EXPECTED["main"]


def test_hotfix_branch_and_tag_rewritten():
    assert _history("hotfix") == EXPECTED["hotfix"]
    tagged = git("rev-parse", "v1.0^{{commit}}").strip()
    assert git("cat-file", "-t", "v1.0").strip() == "tag"
    assert tagged == git("rev-parse", "main~2").strip() == git("rev-parse", "hotfix~1").strip()
    assert _secret_free(tagged)


def test_no_object_keeps_a_secret():
    assert git("for-each-ref", "refs/original") == ""
    objects = subprocess.run(["git", "-C", REPO, "cat-file", "--batch-all-objects", "--batch"], capture_output=True,
                             timeout=60)
    assert objects.returncode == 0 and len(objects.stdout) > 1000
    assert all(secret.encode() not in objects.stdout for secret in SECRETS)


def test_head_settings():
    text = Path(REPO, "settings.py").read_text()
    assert CLEAN_LINE in text.splitlines() and text == git("show", "HEAD:settings.py")
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"


def test_guard_working_tree_matches_head():
    assert git("status", "--porcelain", "--ignored") == ""
'''

_PURGE_SOLUTION = r'''cd /app/repo
cat > /tmp/scrub.sh <<'EOF'
rm -f deploy/.env
if [ -f settings.py ]; then
  sed -i 's/^STRIPE_KEY = .*/STRIPE_KEY = os.environ.get("STRIPE_KEY", "")/' settings.py
fi
EOF
FILTER_BRANCH_SQUELCH_WARNING=1 git filter-branch -f --tree-filter 'sh /tmp/scrub.sh' --tag-name-filter cat -- --all
git for-each-ref --format='%(refname)' refs/original | while read -r ref; do git update-ref -d "$ref"; done
rm -f .git/ORIG_HEAD
git reflog expire --expire=now --all
git gc -q --prune=now
git status --short
'''

# ---------------------------------------------------------------------------------------------------------------
# git-bisect-regression (held out)
# ---------------------------------------------------------------------------------------------------------------

_UNITS = '''"""Parse and format human-friendly quantities."""
import re

_DURATION = re.compile(r"(\\d+)([dhms])")
_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """'1h30m' -> 5400. Units d, h, m, s."""
    text = text.strip().lower()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"bad duration: {text!r}")
    return sum(int(n) * _SECONDS[u] for n, u in parts)
'''
_UNITS_BAD_LINE = ('_DURATION = re.compile(r"(\\d+)([dhms])")', '_DURATION = re.compile(r"(\\d{1,2})([dhms])")')
_SIZES = '''"""Byte sizes for humans."""

_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"]


def format_bytes(n):
    value = float(n)
    for unit in _UNITS:
        if value < 1024 or unit == _UNITS[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
'''
_CHECK = '''"""Regression check: exit 0 good, 1 bad, 125 when this commit cannot be tested at all."""
import sys

try:
    import sizes
    import units
except Exception as error:  # a commit that does not even import cannot be judged
    print(f"untestable: {error!r}")
    sys.exit(125)

CASES = {"90s": 90, "1h30m": 5400, "2d": 172800, "10m5s": 605, "120m": 7200, "1d1h1m1s": 90061}
failed = 0
for text, seconds in CASES.items():
    try:
        got = units.parse_duration(text)
    except ValueError as error:
        got = error
    if got != seconds:
        print(f"FAIL parse_duration({text!r}) = {got!r}, expected {seconds}")
        failed += 1
if sizes.format_bytes(1536) != "1.5 KiB":
    print("FAIL format_bytes(1536)")
    failed += 1
print("ok" if not failed else f"{failed} failure(s)")
sys.exit(1 if failed else 0)
'''
_EXTRA_FUNCS = [
    ('parse_percent', 'def parse_percent(text):\n    """\'12.5%\' -> 0.125."""\n    return float(text.strip().rstrip("%")) / 100\n'),
    ('format_duration', 'def format_duration(seconds):\n    """5400 -> \'1h30m\'."""\n    out = ""\n    for unit, size in _SECONDS.items():\n        count, seconds = divmod(seconds, size)\n        if count:\n            out += f"{count}{unit}"\n    return out or "0s"\n'),
    ('parse_ratio', 'def parse_ratio(text):\n    """\'3:4\' -> 0.75."""\n    left, right = text.split(":")\n    return int(left) / int(right)\n'),
    ('clamp', 'def clamp(value, low, high):\n    return max(low, min(high, value))\n'),
    ('format_percent', 'def format_percent(fraction, digits=1):\n    return f"{fraction * 100:.{digits}f}%"\n'),
]
_BAD_SUBJECT = "Tidy duration parsing"
_BISECT_AUTHORS = ["Wen Liu <wen@units.example>", "Olu Adeyemi <olu@units.example>", "Rosa Ibarra <rosa@units.example>"]


def _bisect_plan() -> list[dict]:
    units, sizes, changelog, readme = _UNITS, _SIZES, "# Changelog\n", "# units\n\nSmall parsing helpers.\n"
    plan = [_c("Initial units library", {"units.py": units, "sizes.py": sizes, "check.py": _CHECK,
                                         "CHANGELOG.md": changelog, "README.md": readme,
                                         ".gitignore": "__pycache__/\n"})]
    extra = list(_EXTRA_FUNCS)
    for i in range(2, 41):
        files: dict[str, str] = {}
        if i == 17:
            sizes = sizes.replace("def format_bytes(n):", "def format_bytes(n)")
            files["sizes.py"], subject = sizes, "Start size formatting rework"
        elif i == 18:
            sizes = sizes.replace("def format_bytes(n)\n", "def format_bytes(n):\n")
            files["sizes.py"], subject = sizes, "Finish size formatting rework"
        elif i == 26:
            units = units.replace(*_UNITS_BAD_LINE)
            files["units.py"], subject = units, _BAD_SUBJECT
        elif i % 4 == 0 and extra:
            name, body = extra.pop(0)
            units += "\n\n" + body
            files["units.py"], subject = units, f"Add {name}"
        elif i % 7 == 0:
            readme += f"\nNote {i}: see CHANGELOG.md for release {i // 7}.\n"
            files["README.md"], subject = readme, f"Tidy README ({i})"
        else:
            changelog += f"- entry {i}: housekeeping\n"
            files["CHANGELOG.md"], subject = changelog, f"Changelog entry {i}"
        plan.append(_c(subject, files, author=_BISECT_AUTHORS[i % 3]))
    plan.append(_rec("main", "rev-parse", "main"))
    return plan


_BISECT_PLAN = _bisect_plan()
_bisect_files, _bisect_steps = _repo(_BISECT_PLAN)

_BISECT_TESTS = _GIT_HELPERS + f'''
BAD_SUBJECT = {_BAD_SUBJECT!r}


def _bad():
    found = git("log", "main", "--format=%H %s").splitlines()
    return [line.split(" ", 1)[0] for line in found if line.split(" ", 1)[1] == BAD_SUBJECT][0]


def _changed_lines(diff):
    return [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_first_bad_commit_named():
    text = Path("/app/first_bad.txt").read_text().strip()
    assert text == _bad()


def test_hotfix_branch_passes_the_check(tmp_path):
    assert git("rev-parse", "hotfix^").strip() == recorded("main")
    tree = export("hotfix", tmp_path / "hotfix")
    result = run("python3", "-B", "check.py", cwd=str(tree))
    assert result.returncode == 0, result.stdout


def test_hotfix_only_reverts_the_bad_change():
    bad = _bad()
    assert git("diff", "--name-only", "main", "hotfix").split() == ["units.py"]
    assert _changed_lines(git("diff", "main", "hotfix")) == _changed_lines(git("diff", bad, bad + "^"))


def test_guard_main_unchanged():
    assert git("rev-parse", "main").strip() == recorded("main")
'''

_BISECT_SOLUTION = r'''cd /app/repo
first=$(git rev-list --max-parents=0 main)
git bisect start main "$first"
git bisect run python3 -B check.py > /tmp/bisect.log 2>&1
git rev-parse refs/bisect/bad > /app/first_bad.txt
git bisect reset
git switch -q -c hotfix main
git revert --no-edit "$(cat /app/first_bad.txt)"
git switch -q main
echo "first bad commit: $(cat /app/first_bad.txt)"
'''

# ---------------------------------------------------------------------------------------------------------------
# git-restore-last-good-file
# ---------------------------------------------------------------------------------------------------------------

_RATES_V1 = ("currency,rate,updated\nUSD,1.0842,2024-01-31\nGBP,0.8571,2024-01-31\nJPY,160.91,2024-01-31\n"
             "CHF,0.9336,2024-01-31\nCAD,1.4560,2024-01-31\nAUD,1.6470,2024-01-31\nCNY,7.7700,2024-01-31\n"
             "PLN,4.3430,2024-01-31\nCZK,24.930,2024-01-31\nHUF,388.40,2024-01-31\n")
_RATES_V2 = _RATES_V1 + "SEK,11.275,2024-01-31\nNOK,11.373,2024-01-31\n"
_RATES_V3 = (_RATES_V2.replace("2024-01-31", "2024-02-29").replace("1.0842", "1.0797").replace("0.8571", "0.8554")
             .replace("160.91", "162.48").replace("11.275", "11.210"))
_RATES_V4 = "\r\n".join(_RATES_V3.replace("2024-02-29", "29/02/2024").split("\n"))
_RATES_V5 = _RATES_V4 + "ISK,148.70,29/02/2024\r\n"
_REGIONS = "region,currencies\neurozone,EUR\nnordics,SEK NOK ISK\n"
_VALIDATE = '''"""Check a rates file: exit 0 if valid, 1 with the reasons otherwise."""
import re
import sys


def problems(data):
    if b"\\r" in data:
        yield "carriage returns in the file"
    lines = data.decode("utf-8", "replace").replace("\\r", "").splitlines()
    if not lines or lines[0] != "currency,rate,updated":
        yield "bad header"
    if len(lines) < 11:
        yield "fewer than 10 rates"
    for number, line in enumerate(lines[1:], 2):
        fields = line.split(",")
        if len(fields) != 3 or not re.fullmatch(r"[A-Z]{3}", fields[0]):
            yield f"line {number}: bad row"
            continue
        if not re.fullmatch(r"\\d+\\.\\d+", fields[1]) or not re.fullmatch(r"\\d{4}-\\d{2}-\\d{2}", fields[2]):
            yield f"line {number}: bad rate or date"


found = list(problems(open(sys.argv[1], "rb").read()))
print("\\n".join(found) or "valid")
sys.exit(1 if found else 0)
'''
_RESTORE_PLAN = [
    _c("Add rate tables", {"data/rates.csv": _RATES_V1, "data/regions.csv": _REGIONS,
                           "tools/validate_rates.py": _VALIDATE, "README.md": "# fx\n\nExchange rates against EUR.\n",
                           "VERSION": "0.1.0\n"}, author=MAYA),
    _c("Add SEK and NOK rates", {"data/rates.csv": _RATES_V2}, author=TOMAS),
    _c("Update rates for February", {"data/rates.csv": _RATES_V3}, author=MAYA),
    _c("Normalize data files", {"data/rates.csv": _RATES_V4}, author=TOMAS),
    _c("Add ISK rate", {"data/rates.csv": _RATES_V5}, author=TOMAS),
    _c("Drop unused data files", {"data/rates.csv": None, "data/regions.csv": None,
                                  "README.md": "# fx\n\nExchange rates against EUR (data lives elsewhere now).\n"},
       author=MAYA),
    _c("Bump version", {"VERSION": "0.2.0\n"}, author=MAYA),
    _rec("main", "rev-parse", "main"),
]
_restore_files, _restore_steps = _repo(_RESTORE_PLAN)

_RESTORE_TESTS = _GIT_HELPERS + f'''
GOOD = {_RATES_V3!r}
VERSIONS = {[v.replace(chr(13) + chr(10), chr(10)) for v in (_RATES_V1, _RATES_V2, _RATES_V3, _RATES_V4, _RATES_V5)]!r}


def test_restored_content_is_last_good():
    assert git("show", "HEAD:data/rates.csv") == GOOD
    assert Path(REPO, "data/rates.csv").read_bytes() == GOOD.encode()


def test_new_commit_on_top():
    assert git("rev-parse", "HEAD^").strip() == recorded("main")
    assert git("log", "-1", "--format=%s").strip() == "Restore data/rates.csv"
    assert git("show", "HEAD:data/rates.csv") in VERSIONS
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"


def test_commit_touches_only_rates():
    assert git("diff", "--name-status", "HEAD^", "HEAD").splitlines() == ["A\\tdata/rates.csv"]
    assert len(git("show", "HEAD:data/rates.csv").splitlines()) >= 11


def test_restored_file_validates():
    result = run("python3", "-B", "tools/validate_rates.py", "data/rates.csv", cwd=REPO)
    assert result.returncode == 0, result.stdout


def test_guard_clean_tree_and_history():
    assert git("status", "--porcelain") == ""
    assert git("rev-parse", "HEAD~1").strip() == recorded("main")
'''

_RESTORE_SOLUTION = r'''cd /app/repo
for c in $(git rev-list main -- data/rates.csv); do
  if git show "$c:data/rates.csv" > /tmp/rates.csv 2>/dev/null && python3 -B tools/validate_rates.py /tmp/rates.csv >/dev/null; then
    good=$c; break
  fi
done
echo "last good: $good"
git checkout "$good" -- data/rates.csv
git commit -q -m "Restore data/rates.csv"
git log --oneline -3
'''

# ---------------------------------------------------------------------------------------------------------------
# git-resolve-merge-conflict
# ---------------------------------------------------------------------------------------------------------------

_PRICING_BASE = '''import configparser


def load_config(path="config.ini"):
    parser = configparser.ConfigParser()
    parser.read(path)
    return parser


def line_total(unit_price, quantity):
    return round(unit_price * quantity, 2)


def order_total(lines, config):
    """Total of (unit_price, quantity) lines in EUR, VAT included."""
    subtotal = sum(line_total(price, qty) for price, qty in lines)
    vat = float(config["tax"]["vat_rate"])
    return round(subtotal * (1 + vat), 2)
'''
_PRICING_MAIN = _PRICING_BASE.replace('''    """Total of (unit_price, quantity) lines in EUR, VAT included."""
    subtotal = sum(line_total(price, qty) for price, qty in lines)
    vat''', '''    """Total of (unit_price, quantity) lines in EUR, VAT included; bulk discount on big subtotals."""
    subtotal = sum(line_total(price, qty) for price, qty in lines)
    if subtotal >= float(config["discount"]["threshold"]):
        subtotal *= 1 - float(config["discount"]["rate"])
    vat''')
_PRICING_FEATURE = _PRICING_BASE.replace("import configparser\n", "import configparser\n\nfrom currency import convert\n").replace(
    '''def order_total(lines, config):
    """Total of (unit_price, quantity) lines in EUR, VAT included."""''', '''def order_total(lines, config, currency="EUR"):
    """Total of (unit_price, quantity) lines, VAT included, in ``currency`` (prices are EUR)."""''').replace(
    "    return round(subtotal * (1 + vat), 2)\n", "    return convert(round(subtotal * (1 + vat), 2), currency, config)\n")
_PRICING_MERGED = _PRICING_FEATURE.replace(
    '''    """Total of (unit_price, quantity) lines, VAT included, in ``currency`` (prices are EUR)."""
    subtotal = sum(line_total(price, qty) for price, qty in lines)
''', '''    """Total of (unit_price, quantity) lines, VAT included, in ``currency`` (prices are EUR); bulk discount on
    big subtotals."""
    subtotal = sum(line_total(price, qty) for price, qty in lines)
    if subtotal >= float(config["discount"]["threshold"]):
        subtotal *= 1 - float(config["discount"]["rate"])
''')
_CURRENCY = '''def convert(amount_eur, currency, config):
    """EUR amount -> ``currency`` with the [currency] rates of the config, rounded to cents."""
    rate = float(config["currency"][currency.lower()])
    return round(amount_eur * rate, 2)
'''
_CONFIG_BASE = "[tax]\nvat_rate = 0.20\n"
_CONFIG_MAIN = _CONFIG_BASE + "\n[discount]\nthreshold = 100\nrate = 0.05\n"
_CONFIG_FEATURE = _CONFIG_BASE + "\n[currency]\neur = 1.0\nusd = 1.08\ngbp = 0.86\n"
_CONFIG_MERGED = _CONFIG_MAIN + "\n[currency]\neur = 1.0\nusd = 1.08\ngbp = 0.86\n"
_UT_BASE = '''import unittest

from pricing import load_config, order_total


class PricingTest(unittest.TestCase):
    def setUp(self):
        self.config = load_config()

    def test_small_order(self):
        self.assertEqual(order_total([(10.0, 2)], self.config), 24.0)
'''
_UT_MAIN_ADD = '''
    def test_bulk_discount(self):
        self.assertEqual(order_total([(50.0, 2)], self.config), 114.0)
'''
_UT_FEATURE_ADD = '''
    def test_display_currency(self):
        self.assertEqual(order_total([(10.0, 2)], self.config, "USD"), 25.92)
'''
_UT_MAIN = _UT_BASE + _UT_MAIN_ADD
_UT_FEATURE = _UT_BASE + _UT_FEATURE_ADD
_UT_MERGED = _UT_BASE + _UT_MAIN_ADD + _UT_FEATURE_ADD + '''
    def test_discount_then_currency(self):
        self.assertEqual(order_total([(50.0, 2)], self.config, "GBP"), 98.04)
'''
_SHOP_README = "# shop\n\nOrder pricing. Run the tests with `python3 -m unittest`.\n"
_MERGE_PLAN = [
    _c("Initial pricing", {"pricing.py": _PRICING_BASE, "config.ini": _CONFIG_BASE, "test_pricing.py": _UT_BASE,
                           "README.md": _SHOP_README, ".gitignore": "__pycache__/\n"}, author=MAYA),
    _g("checkout", "-q", "-b", "feature/currency"),
    _c("Add currency conversion helper", {"currency.py": _CURRENCY}, author=PRIYA),
    _c("Show totals in the customer's currency", {"pricing.py": _PRICING_FEATURE, "config.ini": _CONFIG_FEATURE,
                                                  "test_pricing.py": _UT_FEATURE}, author=PRIYA),
    _g("checkout", "-q", "main"),
    _c("Bulk discount over a threshold", {"pricing.py": _PRICING_MAIN, "config.ini": _CONFIG_MAIN,
                                          "test_pricing.py": _UT_MAIN}, author=TOMAS),
    _c("README: how to run the tests", {"README.md": _SHOP_README + "\nConfiguration lives in config.ini.\n"},
       author=TOMAS),
    _rec("main", "rev-parse", "main"),
    _rec("feature", "rev-parse", "feature/currency"),
]
_merge_files, _merge_steps = _repo(_MERGE_PLAN)

_MERGE_TESTS = _GIT_HELPERS + '''
import configparser
import importlib
import sys


def _merged(tmp_path):
    """main's tree after the merge (the feature must be merged into main first)."""
    assert run("git", "-C", REPO, "merge-base", "--is-ancestor", recorded("feature"), "main").returncode == 0
    return export("main", tmp_path / "merged")


def _pricing(tree):
    sys.path.insert(0, str(tree))
    try:
        for name in ("pricing", "currency"):
            sys.modules.pop(name, None)
        module = importlib.import_module("pricing")
        return module, module.load_config(str(tree / "config.ini"))
    finally:
        sys.path.remove(str(tree))


def test_merge_commit_joins_both_branches():
    parents = git("log", "-1", "--format=%P", "main").split()
    assert parents == [recorded("main"), recorded("feature")]
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"
    text = "".join(git("show", f"main:{path}") for path in git("ls-tree", "-r", "--name-only", "main").split())
    assert "<<<<<<<" not in text and ">>>>>>>" not in text and "\\n=======\\n" not in text


def test_config_has_every_section(tmp_path):
    parser = configparser.ConfigParser()
    parser.read_string((_merged(tmp_path) / "config.ini").read_text())
    assert parser["tax"]["vat_rate"] == "0.20"
    assert (parser["discount"]["threshold"], parser["discount"]["rate"]) == ("100", "0.05")
    assert {key: parser["currency"][key] for key in parser["currency"]} == {"eur": "1.0", "usd": "1.08", "gbp": "0.86"}


def test_discount_still_applies(tmp_path):
    pricing, config = _pricing(_merged(tmp_path))
    assert pricing.order_total([(50.0, 2)], config) == 114.0
    assert pricing.order_total([(99.0, 1)], config) == 118.8
    assert pricing.order_total([(20.0, 5)], config, "EUR") == 114.0


def test_currency_still_applies(tmp_path):
    pricing, config = _pricing(_merged(tmp_path))
    assert pricing.order_total([(10.0, 2)], config, "USD") == 25.92
    assert pricing.order_total([(10.0, 2)], config, currency="GBP") == 20.64


def test_discount_and_currency_together(tmp_path):
    pricing, config = _pricing(_merged(tmp_path))
    assert pricing.order_total([(50.0, 2)], config, "GBP") == 98.04
    assert pricing.order_total([(40.0, 5)], config, "USD") == 246.24


def test_repository_unit_tests_pass(tmp_path):
    tree = _merged(tmp_path)
    source = (tree / "test_pricing.py").read_text()
    assert "def test_bulk_discount" in source and "def test_display_currency" in source
    result = run("python3", "-B", "-m", "unittest", "-v", "test_pricing", cwd=str(tree))
    assert result.returncode == 0, result.stderr
    assert "Ran 0 tests" not in result.stderr


def test_guard_feature_branch_and_tree():
    assert git("rev-parse", "feature/currency").strip() == recorded("feature")
    assert git("status", "--porcelain") == ""
'''

_MERGE_SOLUTION = (r'''cd /app/repo
git merge --no-edit feature/currency || true
cat > pricing.py <<'EOF'
''' + _PRICING_MERGED + '''EOF
cat > config.ini <<'EOF'
''' + _CONFIG_MERGED + '''EOF
cat > test_pricing.py <<'EOF'
''' + _UT_MERGED + r'''EOF
python3 -B -m unittest test_pricing
git add pricing.py config.ini test_pricing.py
git commit -q --no-edit
git log --oneline --graph -6
''')

# ---------------------------------------------------------------------------------------------------------------
# git-rewrite-author-identities
# ---------------------------------------------------------------------------------------------------------------

ANA = "Ana Souza <ana@example.com>"
JDOE_LAPTOP = "jdoe <jdoe@laptop.local>"
JDOE_OLD = "John Doe <john@oldcorp.example>"
JOHN = "John Doe <john.doe@example.com>"
LEE = "Lee Park <lee@example.com>"


def _authors_plan() -> list[dict]:
    who = [(ANA, None), (JDOE_LAPTOP, None), (LEE, None), (JDOE_OLD, None), (ANA, JDOE_LAPTOP), (JDOE_LAPTOP, None),
           (LEE, JDOE_OLD), (JDOE_OLD, ANA), (ANA, None), (JDOE_LAPTOP, None)]
    plan, notes = [], ""
    for i, (author, committer) in enumerate(who, 1):
        notes += f"- change {i}\n"
        plan.append(_c(f"Change {i}: " + ["parser", "docs", "tests", "cli", "build"][i % 5], {"NOTES.md": notes,
                       f"src/part{i % 4}.txt": f"part {i % 4} revision {i}\n"}, author=author, committer=committer))
        if i == 5:
            plan.append(_g("tag", "v0.9"))
        if i == 6:
            plan.append(_g("branch", "docs"))
    plan += [_g("checkout", "-q", "docs"),
             _c("Docs: install guide", {"docs/install.md": "pip install .\n"}, author=JDOE_OLD),
             _c("Docs: faq", {"docs/faq.md": "Q: why?\n"}, author=LEE, committer=JDOE_LAPTOP),
             _g("checkout", "-q", "main"),
             _rec("main_trees", "log", "--format=%T", "main"), _rec("docs_trees", "log", "--format=%T", "docs")]
    return plan


_AUTHORS_PLAN = _authors_plan()
_authors_files, _authors_steps = _repo(_AUTHORS_PLAN)


def _authors_expected() -> dict:
    dates = _dates(_AUTHORS_PLAN)
    fix = {JDOE_LAPTOP: JOHN, JDOE_OLD: JOHN}
    rows, branch = {"main": [], "docs": []}, "main"
    history = []
    for index, step in enumerate(_AUTHORS_PLAN):
        if step["op"] == "git" and step["args"][:2] == ["checkout", "-q"]:
            branch = step["args"][2]
        if step["op"] == "git" and step["args"][0] == "branch":
            rows["docs"] = list(history)
        if step["op"] != "commit":
            continue
        author = step.get("author")
        committer = step.get("committer") or author
        row = [step["msg"], fix.get(author, author), fix.get(committer, committer), dates[index]]
        if branch == "main":
            history.append(row)
            rows["main"] = list(history)
        else:
            rows["docs"].append(row)
    return rows


_AUTHORS_TESTS = _GIT_HELPERS + f'''
EXPECTED = json.loads({json.dumps(_authors_expected())!r})
OLD = ["jdoe@laptop.local", "john@oldcorp.example"]


def _rows(ref):
    lines = git("log", "--reverse", "--format=%s|%an <%ae>|%cn <%ce>|%at", ref).splitlines()
    return [[*line.rsplit("|", 3)[:3], int(line.rsplit("|", 1)[1])] for line in lines]


def test_no_old_identity_left():
    idents = git("log", "--all", "--format=%ae%n%ce")
    assert "john.doe@example.com" in idents
    assert all(old not in idents for old in OLD)
    assert git("for-each-ref", "refs/original") == ""


def test_main_identities_rewritten():
    assert _rows("main") == EXPECTED["main"]


def test_docs_branch_and_tag_rewritten():
    assert _rows("docs") == EXPECTED["docs"]
    assert _rows("v0.9") == EXPECTED["main"][:5]
    assert run("git", "-C", REPO, "merge-base", "--is-ancestor", "v0.9", "main").returncode == 0


def test_trees_unchanged():
    assert "john.doe@example.com" in git("log", "--format=%ae", "main")
    assert git("log", "--format=%T", "main").split() == recorded("main_trees").split()
    assert git("log", "--format=%T", "docs").split() == recorded("docs_trees").split()


def test_guard_clean_tree():
    assert git("status", "--porcelain") == ""
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"
'''

_AUTHORS_SOLUTION = r'''cd /app/repo
FILTER_BRANCH_SQUELCH_WARNING=1 git filter-branch -f --env-filter '
case "$GIT_AUTHOR_EMAIL" in jdoe@laptop.local|john@oldcorp.example)
  GIT_AUTHOR_NAME="John Doe"; GIT_AUTHOR_EMAIL="john.doe@example.com";; esac
case "$GIT_COMMITTER_EMAIL" in jdoe@laptop.local|john@oldcorp.example)
  GIT_COMMITTER_NAME="John Doe"; GIT_COMMITTER_EMAIL="john.doe@example.com";; esac
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
' --tag-name-filter cat -- --all
git for-each-ref --format='%(refname)' refs/original | while read -r ref; do git update-ref -d "$ref"; done
git log --all --format='%an <%ae> / %cn <%ce>' | sort | uniq -c
'''

# ---------------------------------------------------------------------------------------------------------------
# git-split-messy-commit (held out)
# ---------------------------------------------------------------------------------------------------------------

_PARSER_V1 = '''def parse(text):
    """Records separated by lines; fields 'key: value'. Returns a list of dicts."""
    records, current = [], {}
    for line in text.splitlines():
        key, value = line.split(":", 1)
        current[key.strip()] = value.strip()
        if key.strip() == "end":
            records.append(current)
            current = {}
    return records
'''
_PARSER_FIXED = _PARSER_V1.replace('''    for line in text.splitlines():
        key''', '''    for line in text.splitlines():
        if not line.strip():
            continue
        key''')
_EXPORT_V1 = '''def to_csv(records, fields):
    rows = [",".join(fields)]
    rows += [",".join(record.get(field, "") for field in fields) for record in records]
    return "\\n".join(rows) + "\\n"
'''
_EXPORT_V2 = "import json\n\n\n" + _EXPORT_V1 + '''

def to_json(records):
    return json.dumps(records, indent=2, sort_keys=True) + "\\n"
'''
_TS_README = "# records\n\nParse 'key: value' records and export them as CSV.\n"
_TS_README_V2 = _TS_README + "\nJSON export: `export.to_json(records)`.\n"
_CLI = '''import sys

from export import to_json
from parser import parse

sys.stdout.write(to_json(parse(sys.stdin.read())))
'''
_TEST_PARSER = '''import unittest

from parser import parse


class ParserTest(unittest.TestCase):
    def test_two_records(self):
        self.assertEqual(parse("a: 1\\nend: x\\nb: 2\\nend: y\\n"), [{"a": "1", "end": "x"}, {"b": "2", "end": "y"}])
'''
_SPLIT_PLAN = [
    _c("Initial record parser", {"parser.py": _PARSER_V1, "export.py": _EXPORT_V1, "README.md": _TS_README,
                                 "test_parser.py": _TEST_PARSER, ".gitignore": "__pycache__/\n"}, author=LEE),
    _c("Add parser tests", {"test_parser.py": _TEST_PARSER + '''
    def test_values_keep_colons(self):
        self.assertEqual(parse("t: 10:30\\nend: 1\\n"), [{"t": "10:30", "end": "1"}])
'''}, author=LEE),
    _rec("base", "rev-parse", "HEAD"),
    _c("wip", {"parser.py": _PARSER_FIXED, "export.py": _EXPORT_V2, "README.md": _TS_README_V2}, author=ANA),
    _rec("wip_tree", "rev-parse", "HEAD^{tree}"),
    _c("Add a command-line entry point", {"cli.py": _CLI}, author=LEE),
    _rec("top_tree", "rev-parse", "HEAD^{tree}"),
    _rec("top_date", "log", "-1", "--format=%at"),
]
_split_files, _split_steps = _repo(_SPLIT_PLAN)
_SPLIT_SUBJECTS = ["Fix blank-line handling in parser", "Add JSON export", "Document JSON export"]

_SPLIT_TESTS = _GIT_HELPERS + f'''
SUBJECTS = {_SPLIT_SUBJECTS!r}


def test_three_commits_replace_wip():
    assert git("log", "--reverse", "--format=%s", "main~4..main~1").splitlines() == SUBJECTS
    assert git("rev-parse", "main~4").strip() == recorded("base")


def test_each_commit_touches_one_file():
    touched = [git("diff", "--name-only", f"main~{{n + 1}}", f"main~{{n}}").split() for n in (3, 2, 1)]
    assert touched == [["parser.py"], ["export.py"], ["README.md"]]


def test_split_adds_up_to_wip(tmp_path):
    assert git("log", "-1", "--format=%s", "main~1").strip() == SUBJECTS[2]
    assert git("rev-parse", "main~1^{{tree}}").strip() == recorded("wip_tree")
    tree = export("main~3", tmp_path / "fix")
    probe = "from parser import parse; print(parse('a: 1\\\\n\\\\nend: 2\\\\n'))"
    result = run("python3", "-B", "-c", probe, cwd=str(tree))
    assert result.returncode == 0 and result.stdout.strip() == "[{{'a': '1', 'end': '2'}}]", result.stderr


def test_top_commit_kept():
    assert git("log", "-1", "--format=%s", "main~1").strip() == SUBJECTS[2]
    assert git("rev-parse", "main^{{tree}}").strip() == recorded("top_tree")
    assert git("log", "-1", "--format=%s|%an <%ae>|%at", "main").strip() == (
        "Add a command-line entry point|{LEE}|" + recorded("top_date"))


def test_split_commits_keep_wip_author():
    assert git("log", "--format=%an <%ae>", "main~4..main~1").splitlines() == ["{ANA}"] * 3


def test_guard_clean_tree():
    assert git("status", "--porcelain") == ""
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"
'''

_SPLIT_SOLUTION = r'''cd /app/repo
base=$(git rev-parse HEAD~2); wip=$(git rev-parse HEAD~1); top=$(git rev-parse HEAD)
author=$(git log -1 --format='%an <%ae>' "$wip")
git reset -q --hard "$base"
git checkout "$wip" -- parser.py && git commit -q --author="$author" -m "Fix blank-line handling in parser"
git checkout "$wip" -- export.py && git commit -q --author="$author" -m "Add JSON export"
git checkout "$wip" -- README.md && git commit -q --author="$author" -m "Document JSON export"
git cherry-pick "$top"
git log --format='%h %an %s' -6
'''

_GIT_LIMITS = {"agent_timeout_s": 900, "test_timeout_s": 180}

TASKS = [
    Spec(
        task_id="git-recover-reset-commits",
        title="Recover commits lost to a hard reset",
        difficulty="medium",
        category="git",
        instruction="""
In the git repository /app/repo someone ran `git reset --hard` on `main` and threw away Priya's two commits
with the low-stock report (report.py and the `shortfall` helper). Since then another commit was made on `main`.
A throw-away debug commit was also made and reset away; it must stay lost.

Bring Priya's work back: `main` must keep its current commits exactly as they are (same hashes) and end with
Priya's two commits replayed on top, in their original order, with their original messages, author and author
dates. Keep the history linear (no merge commits) and leave a clean working tree on `main`.
""",
        files=_recover_files,
        steps=_recover_steps,
        tests=_RECOVER_TESTS,
        weights={"test_report_work_restored": 2, "test_lost_commits_replayed_on_top": 2,
                 "test_history_is_linear": 1, "test_report_output": 1},
        guards=["test_guard_clean_and_no_debug_commit"],
        solution=_RECOVER_SOLUTION,
        tags=["git", "reflog", "cherry-pick"],
        dev_tools=True,
        limits=_GIT_LIMITS,
        harbor=True,
    ),
    Spec(
        task_id="git-purge-secret-history",
        title="Purge leaked secrets from every commit",
        difficulty="medium",
        category="git",
        instruction=f"""
Three commits ago on `main` of /app/repo, "Configure staging" leaked two secrets: the file `deploy/.env`
(a database password) and a live payment key in `settings.py` (`STRIPE_KEY = "sk_live_..."`). The
repository's `.git` directory is about to be published, so rewrite the history:

- `deploy/.env` must not exist in any commit;
- in every commit where it appears, the key line of `settings.py` becomes exactly
  `{_CLEAN_LINE}` (the rest of the file stays as it was);
- every other file of every commit stays byte for byte the same, and every commit stays: same number of
  commits, same messages, authors and author dates, on every branch (`main` and `hotfix`); the annotated tag
  `v1.0` must point at the rewritten counterpart of its commit;
- nothing in the repository may still hold either secret: no branch, tag, backup ref, reflog entry or
  unreachable object.

Finish on `main` with a working tree identical to its last commit (no leftover copy of the secret file).
""",
        files=_purge_files,
        steps=_purge_steps,
        tests=_PURGE_TESTS,
        weights={"test_no_commit_holds_a_secret": 2, "test_main_history_rewritten_faithfully": 2,
                 "test_hotfix_branch_and_tag_rewritten": 1.5, "test_no_object_keeps_a_secret": 1.5,
                 "test_head_settings": 1},
        guards=["test_guard_working_tree_matches_head"],
        solution=_PURGE_SOLUTION,
        tags=["git", "filter-branch", "security"],
        dev_tools=True,
        limits=_GIT_LIMITS,
        harbor=True,
    ),
    Spec(
        task_id="git-bisect-regression",
        title="Find the commit that broke duration parsing and hotfix it",
        difficulty="medium",
        category="git",
        instruction="""
`python3 check.py` in /app/repo passed on the first commit of `main` and fails on its last one (40 commits of
history). Find the first commit that broke it and write its full 40-character hash to /app/first_bad.txt.
check.py exits 125 on a commit where the code does not even import; such a commit is neither good nor bad.

Then create a branch `hotfix` whose only new commit, on top of the current `main`, reverts that bad commit so
that check.py passes on `hotfix`. Do not change `main`.
""",
        files=_bisect_files,
        steps=_bisect_steps,
        tests=_BISECT_TESTS,
        weights={"test_first_bad_commit_named": 3, "test_hotfix_branch_passes_the_check": 2,
                 "test_hotfix_only_reverts_the_bad_change": 1},
        guards=["test_guard_main_unchanged"],
        solution=_BISECT_SOLUTION,
        tags=["git", "bisect", "revert"],
        dev_tools=True,
        limits=_GIT_LIMITS,
        held_out=True,
    ),
    Spec(
        task_id="git-restore-last-good-file",
        title="Restore a deleted data file from its last good version",
        difficulty="medium",
        category="git",
        instruction="""
In /app/repo, `data/rates.csv` was edited over several commits, damaged at some point, and finally deleted.
Bring it back on `main` with the content it had in the most recent commit where it was still valid according
to `python3 tools/validate_rates.py data/rates.csv` (exit 0).

Commit it as one new commit on top of the current `main` with the message `Restore data/rates.csv`; that
commit adds only this file (the other deleted data file stays deleted). Leave a clean working tree.
""",
        files=_restore_files,
        steps=_restore_steps,
        tests=_RESTORE_TESTS,
        weights={"test_restored_content_is_last_good": 3, "test_new_commit_on_top": 1,
                 "test_commit_touches_only_rates": 1, "test_restored_file_validates": 1},
        guards=["test_guard_clean_tree_and_history"],
        solution=_RESTORE_SOLUTION,
        tags=["git", "history", "restore"],
        dev_tools=True,
        limits=_GIT_LIMITS,
    ),
    Spec(
        task_id="git-resolve-merge-conflict",
        title="Merge a feature branch through conflicts in three files",
        difficulty="medium",
        category="git",
        instruction="""
/app/repo is a small pricing module. `main` gained a bulk discount; the branch `feature/currency` makes
`order_total` return the total in the customer's currency. Merge `feature/currency` into `main` with a real
merge commit (parents: the current `main`, then the branch tip) and resolve the conflicts so that both
features work together:

- `order_total(lines, config, currency="EUR")`: the bulk discount applies to the subtotal (as on `main`), then
  VAT, the VAT-included total is rounded to cents, then converted to the currency (as on the branch);
- `config.ini` keeps every section and value of both sides;
- `test_pricing.py` keeps the tests of both sides and `python3 -m unittest` passes.

Do not change `feature/currency`. Leave a clean working tree on `main`.
""",
        files=_merge_files,
        steps=_merge_steps,
        tests=_MERGE_TESTS,
        weights={"test_merge_commit_joins_both_branches": 1, "test_config_has_every_section": 1,
                 "test_discount_still_applies": 1, "test_currency_still_applies": 1,
                 "test_discount_and_currency_together": 1.5, "test_repository_unit_tests_pass": 1},
        guards=["test_guard_feature_branch_and_tree"],
        solution=_MERGE_SOLUTION,
        tags=["git", "merge", "conflicts", "python"],
        dev_tools=True,
        limits=_GIT_LIMITS,
        harbor=True,
        held_out=True,
    ),
    Spec(
        task_id="git-rewrite-author-identities",
        title="Rewrite a contributor's old identities across all branches",
        difficulty="medium",
        category="git",
        instruction="""
John committed to /app/repo under two old identities, `jdoe <jdoe@laptop.local>` and
`John Doe <john@oldcorp.example>`. Rewrite the history of every branch and tag so that wherever either of them
appears as author or as committer it becomes `John Doe <john.doe@example.com>`.

Everything else stays: other people's identities, every date, message and file content, the branches `main`
and `docs` and the tag `v0.9` (pointing at the rewritten counterpart of its commit). Do not keep backup refs of
the old history. Finish on `main` with a clean working tree.
""",
        files=_authors_files,
        steps=_authors_steps,
        tests=_AUTHORS_TESTS,
        weights={"test_no_old_identity_left": 2, "test_main_identities_rewritten": 2,
                 "test_docs_branch_and_tag_rewritten": 1, "test_trees_unchanged": 1},
        guards=["test_guard_clean_tree"],
        solution=_AUTHORS_SOLUTION,
        tags=["git", "filter-branch", "authors"],
        dev_tools=True,
        limits=_GIT_LIMITS,
    ),
    Spec(
        task_id="git-split-messy-commit",
        title="Split a work-in-progress commit into three",
        difficulty="medium",
        category="git",
        instruction=f"""
On `main` of /app/repo the second-to-last commit, "wip", mixes three unrelated changes: a bug fix in
parser.py, a new JSON export in export.py and its documentation in README.md. Replace it with three commits, in
this order, each changing only its one file:

1. `{_SPLIT_SUBJECTS[0]}` (parser.py)
2. `{_SPLIT_SUBJECTS[1]}` (export.py)
3. `{_SPLIT_SUBJECTS[2]}` (README.md)

The three commits keep the author of "wip". The commits before "wip" must stay untouched, and the last commit
("Add a command-line entry point") must come after the three with its message, author, author date and
resulting files unchanged. Finish on `main` with a clean working tree.
""",
        files=_split_files,
        steps=_split_steps,
        tests=_SPLIT_TESTS,
        weights={"test_three_commits_replace_wip": 2, "test_each_commit_touches_one_file": 2,
                 "test_split_adds_up_to_wip": 1, "test_top_commit_kept": 1, "test_split_commits_keep_wip_author": 1},
        guards=["test_guard_clean_tree"],
        solution=_SPLIT_SOLUTION,
        tags=["git", "rebase", "history"],
        dev_tools=True,
        limits=_GIT_LIMITS,
    ),
]
TASKS = [_with_recorded(spec) for spec in TASKS]
