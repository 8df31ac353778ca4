import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/_build/plan.json': '8c08012c2d51c1ae492840c500a65f3ac2c3a5a8e7e7ca1b264d0df61172a9a7'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


RECORDED = {}

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

SECRETS = ['sk_live_CORPUS51xQ9vR2mT7wZpL', 'corpus-hunter2-9F3kWq']
EXPECTED = json.loads('{"main": [["Initial billing service", "Maya Chen <maya@example.com>", 1709289420, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\n"}], ["Add payment client", "Tomas Berg <tomas@example.com>", 1709295240, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\n", "client.py": "def charge(amount, currency):\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\"}\\n"}], ["Configure staging", "Maya Chen <maya@example.com>", 1709301060, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\nSTRIPE_KEY = os.environ.get(\\"STRIPE_KEY\\", \\"\\")\\nTIMEOUT_S = 5\\n", "client.py": "def charge(amount, currency):\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\"}\\n", "deploy/README.md": "Deployment notes: the service reads its settings from the environment.\\n"}], ["Add retries to client", "Tomas Berg <tomas@example.com>", 1709306880, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\nSTRIPE_KEY = os.environ.get(\\"STRIPE_KEY\\", \\"\\")\\nTIMEOUT_S = 5\\n", "client.py": "def charge(amount, currency):\\n    # retried up to 3 times by the caller\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\"}\\n", "deploy/README.md": "Deployment notes: the service reads its settings from the environment.\\n"}], ["Document deployment", "Maya Chen <maya@example.com>", 1709335980, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n\\nSee deploy/README.md.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\nSTRIPE_KEY = os.environ.get(\\"STRIPE_KEY\\", \\"\\")\\nTIMEOUT_S = 5\\n", "client.py": "def charge(amount, currency):\\n    # retried up to 3 times by the caller\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\"}\\n", "deploy/README.md": "Deployment notes: the service reads its settings from the environment.\\nRestart after changing settings.\\n"}], ["Use configured timeout", "Tomas Berg <tomas@example.com>", 1709341800, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n\\nSee deploy/README.md.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\nSTRIPE_KEY = os.environ.get(\\"STRIPE_KEY\\", \\"\\")\\nTIMEOUT_S = 10\\n", "client.py": "import settings\\n\\n\\ndef charge(amount, currency):\\n    # retried up to 3 times by the caller\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\", \\"timeout\\": settings.TIMEOUT_S}\\n", "deploy/README.md": "Deployment notes: the service reads its settings from the environment.\\nRestart after changing settings.\\n"}]], "hotfix": [["Initial billing service", "Maya Chen <maya@example.com>", 1709289420, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\n"}], ["Add payment client", "Tomas Berg <tomas@example.com>", 1709295240, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\n", "client.py": "def charge(amount, currency):\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\"}\\n"}], ["Configure staging", "Maya Chen <maya@example.com>", 1709301060, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\nSTRIPE_KEY = os.environ.get(\\"STRIPE_KEY\\", \\"\\")\\nTIMEOUT_S = 5\\n", "client.py": "def charge(amount, currency):\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\"}\\n", "deploy/README.md": "Deployment notes: the service reads its settings from the environment.\\n"}], ["Add retries to client", "Tomas Berg <tomas@example.com>", 1709306880, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\nSTRIPE_KEY = os.environ.get(\\"STRIPE_KEY\\", \\"\\")\\nTIMEOUT_S = 5\\n", "client.py": "def charge(amount, currency):\\n    # retried up to 3 times by the caller\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\"}\\n", "deploy/README.md": "Deployment notes: the service reads its settings from the environment.\\n"}], ["Hotfix: round before charging", "Tomas Berg <tomas@example.com>", 1709324340, {"README.md": "# billing\\n\\nCharges carts through the payment client.\\n", "app.py": "from client import charge\\nfrom settings import CURRENCY\\n\\n\\ndef checkout(cart):\\n    total = sum(price * qty for price, qty in cart)\\n    return charge(round(total + 1e-9, 2), CURRENCY)\\n", "settings.py": "import os\\n\\nDEBUG = os.environ.get(\\"DEBUG\\", \\"0\\") == \\"1\\"\\nCURRENCY = \\"EUR\\"\\nSTRIPE_KEY = os.environ.get(\\"STRIPE_KEY\\", \\"\\")\\nTIMEOUT_S = 5\\n", "client.py": "def charge(amount, currency):\\n    # retried up to 3 times by the caller\\n    \\"\\"\\"Send a charge to the payment provider (stubbed here).\\"\\"\\"\\n    return {\\"amount\\": amount, \\"currency\\": currency, \\"status\\": \\"ok\\"}\\n", "deploy/README.md": "Deployment notes: the service reads its settings from the environment.\\n"}]]}')
CLEAN_LINE = 'STRIPE_KEY = os.environ.get("STRIPE_KEY", "")'


def _history(branch):
    out = []
    for commit in git("rev-list", "--reverse", branch).split():
        subject, author, date = git("log", "-1", "--format=%s%n%an <%ae>%n%at", commit).splitlines()
        files = {path: git("show", f"{commit}:{path}") for path in git("ls-tree", "-r", "--name-only", commit).split()}
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
    tagged = git("rev-parse", "v1.0^{commit}").strip()
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
