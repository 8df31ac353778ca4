import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/docs/MANUAL.md': '0b273d6adf78d92e02a84e1198512447ee0a3e55ef7765ce97b4e902fba8cecf', '/app/jqlite/__init__.py': '2aa95e8348cac5be28e76dd2f9e573c9c7c22b5c188b9f1f001adf35fddf76a6', '/app/jqlite/__main__.py': 'da3ea59a62a69690e9674534602644cd0667a8542405e5417f047bed5d750a43', '/app/jqlite/builtins.py': 'e4157517e87f9a8f72a416c06b20d317ab5c2459ccd7826ac8dca1d6a3043abd', '/app/jqlite/cli.py': '876a7b335bddd30de5885b281ac524329ebb671cd0b77af08a6cdc653824376c', '/app/jqlite/errors.py': 'd97fdf3621c4e95b7cdd4a089d992d9ba1da186b63cc508f45f53792d4a568a5', '/app/jqlite/evaluator.py': '2afd5e244c0249e7d7f514c738866f98739b2d2da7ba0eeab70690c4d24a5319', '/app/jqlite/inputs.py': '4b5ba8049f787ed111b60d347df9425dc8c0e397d1040a2c9d32417ff61bf5e2', '/app/jqlite/lexer.py': '4d45c398d2ede5ef27298e28ea746e7eac59351b80aaa528124a03454d6fa72c', '/app/jqlite/nodes.py': '44485eb8001994bf8c9acae79ef7143c74154b7d382a90687c8e07e2076d7507', '/app/jqlite/output.py': 'b71c4d7720236eb177a5eb4bc4bc331a9663533f8e72de6436b413b3372d6f44', '/app/jqlite/parser.py': 'b1a7450ce88ec98f8524732a4e6d33cfe375c9a9850055f5cb38c101abe1a4b3', '/app/jqlite/tokens.py': '69ba9d975eb83c48c076070168798e077f44dbe13e4ea6e88e252486f9dcd95a', '/app/jqlite/values.py': '3b13cdc48afe6f0a6e192385a487419651eb7c5ee6713b66769a14e8c817ee9b', '/app/unit_tests/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/unit_tests/test_builtins_and_cli.py': '4288d5990e39cc785a15f53d0343749e2842cad5b1405e2e06fe21cd6784d25e', '/app/unit_tests/test_language.py': '44234750ea013b20948cb0c852b1a851e34751b15841ceb99be2ff5904c7e097'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import json as _json

APP = "/app"
HERE = Path(__file__).parent
SHIPPED_TESTS = ["/app/unit_tests/__init__.py", "/app/unit_tests/test_language.py", "/app/unit_tests/test_builtins_and_cli.py"]


def jqlite(*arguments, stdin=""):
    """Run the shipped command line; (status, stdout, stderr)."""
    result = run("python3", "-m", "jqlite", *arguments, input=stdin, cwd=APP, timeout=60)
    return result.returncode, result.stdout, result.stderr


def outputs(*arguments, stdin=""):
    """The JSON outputs of a compact run, parsed (the run must succeed)."""
    status, out, err = jqlite("-c", *arguments, stdin=stdin)
    assert status == 0, f"exit {status}: {err}"
    return [_json.loads(line) for line in out.splitlines()]


def test_alternative_keeps_false_looking_json_values():
    data = _json.dumps({"zero": 0, "empty": "", "list": [], "obj": {}, "f": False, "n": None})
    assert outputs(".zero // 9, .empty // \"x\", .list // [1], .obj // 1", stdin=data) == [0, "", [], {}]
    assert outputs(".f // \"was false\", .n // \"was null\", .missing // 0", stdin=data) == ["was false", "was null", 0]
    assert outputs("[(.zero, .n, .f, .empty) // 7]", stdin=data) == [[0, ""]]
    assert outputs("[(.n, .f) // (1, 2)]", stdin=data) == [[1, 2]]
    assert outputs("[.[] | (. // \"-\")]", stdin="[0, null, 3, false, \"\"]") == [[0, "-", 3, "-", ""]]


def test_negative_slice_bounds():
    data = _json.dumps({"a": [10, 20, 30, 40, 50], "s": "abcdef"})
    assert outputs(".a[-2:], .a[:-1], .a[-4:-2], .a[1:-1]", stdin=data) == [[40, 50], [10, 20, 30, 40], [20, 30], [20, 30, 40]]
    assert outputs(".s[-3:], .s[:-4], .s[-100:2], .a[-1:100], .a[-2:-4]", stdin=data) == ["def", "ab", "ab", [50], []]
    assert outputs("[.a[-3:][] | . + 1]", stdin=data) == [[31, 41, 51]]


def test_as_binds_each_output_of_a_term():
    data = _json.dumps({"base": 10, "xs": [1, 2, 3], "name": "kit"})
    assert outputs(".base as $b | .xs | map(. + $b)", stdin=data) == [[11, 12, 13]]
    assert outputs(".xs[] as $x | .base * $x", stdin=data) == [10, 20, 30]
    assert outputs("[.xs[] as $x | .xs[] as $y | select($x < $y) | [$x, $y]]", stdin=data) == [[[1, 2], [1, 3], [2, 3]]]
    assert outputs(".name as $n | {$n, upper: ($n | ascii_upcase)}", stdin=data) == [{"n": "kit", "upper": "KIT"}]
    assert outputs("-n", "(1, 2) as $v | $v * 100") == [100, 200]


def test_binding_scope_and_shadowing():
    data = _json.dumps({"v": 1, "inner": {"v": 2}})
    # the body's input is the input of the whole expression, not the bound value
    assert outputs(".inner as $i | .v", stdin=data) == [1]
    # an inner binding shadows an outer one only inside its own body
    assert outputs(".v as $x | (.inner.v as $x | $x), $x", stdin=data) == [2, 1]
    assert outputs("[.v as $x | .inner | .v as $y | $x + $y]", stdin=data) == [[3]]
    # bindings inside map/select see the enclosing variables
    assert outputs(".v as $limit | [range(5) | select(. > $limit)]", stdin=data) == [[2, 3, 4]]
    assert outputs("-n", "3 as $x | [$x, ($x | . + 1)]") == [[3, 4]]


def test_arg_and_argjson():
    assert outputs("-n", "--arg", "name", "Ada", "{greeting: (\"hi \" + $name)}") == [{"greeting": "hi Ada"}]
    assert outputs("-n", "--arg", "n", "5", "$n | type") == ["string"]
    assert outputs("-n", "--argjson", "n", "5", "$n + 1") == [6]
    assert outputs("-n", "--argjson", "cfg", '{"limits": [3, 7]}', "--arg", "unit", "kg",
                   "$cfg.limits | map(tostring + $unit)") == [["3kg", "7kg"]]
    data = _json.dumps([{"k": "a", "v": 1}, {"k": "b", "v": 2}])
    assert outputs("--arg", "want", "b", ".[] | select(.k == $want) | .v", stdin=data) == [2]
    assert outputs("-n", "--argjson", "x", "null", "--argjson", "y", "[1,2]", "[$x, $y[-1:]]") == [[None, [2]]]
    status, out, _ = jqlite("-r", "-n", "--arg", "s", "two words", "$s")
    assert (status, out) == (0, "two words\n")


def test_variable_errors():
    status, _, err = jqlite("-n", "$nope")
    assert status == 3 and "$nope is not defined" in err
    status, _, err = jqlite("-n", "if true then 1 else $unset end")  # never reached, still an error
    assert status == 3 and "$unset is not defined" in err
    status, _, err = jqlite("-n", "(1 as $x | $x), $x")  # the binding ends with its body
    assert status == 3 and "$x is not defined" in err
    status, _, err = jqlite("-n", "--arg", "x", "1", "$x, $y")
    assert status == 3 and "$y is not defined" in err
    status, _, err = jqlite("-n", "--argjson", "v", "{bad", "$v")
    assert status == 2 and "--argjson" in err
    status, _, err = jqlite("-n", "1 as x | x")
    assert status == 3
    status, _, _ = jqlite("-n", "--arg", "only_name")
    assert status == 2


def test_report_fixture():
    program = (HERE / "report.jq").read_text()
    status, out, err = jqlite("-c", "--arg", "prefix", "order ", "--argjson", "default_discount", "1",
                              "--argjson", "min_qty", "2", "--argjson", "customer_names",
                              '{"ada": "Ada L.", "cy": "Cy T."}', program, str(HERE / "orders.json"))
    assert status == 0, err
    assert [_json.loads(line) for line in out.splitlines()] == [
        _json.loads(line) for line in (HERE / "report.out").read_text().splitlines()]


def test_guard_shipped_tests_unchanged_and_passing():
    for path in SHIPPED_TESTS:
        assert unchanged(path), f"{path} was changed"
    result = run("python3", "-m", "unittest", "discover", "-s", "unit_tests", "-t", ".", cwd=APP, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_guard_the_package_keeps_its_layers():
    code = (
        "from jqlite import run_filter\n"
        "from jqlite.parser import compile_filter\n"
        "from jqlite.evaluator import Evaluator\n"
        "from jqlite import nodes\n"
        "assert run_filter('.a[1:]', {'a': [1, 2, 3]}) == [[2, 3]]\n"
        "tree = compile_filter('.a | length')\n"
        "assert isinstance(tree, nodes.Pipe), tree\n"
        "print(list(Evaluator().outputs(tree, {'a': 'four'}))[0])\n"
    )
    result = run("python3", "-c", code, cwd=APP)
    assert result.returncode == 0 and result.stdout.strip() == "4", result.stderr
    cli = Path("/app/jqlite/cli.py").read_text()
    assert "from jqlite.parser import compile_filter" in cli and "from jqlite.evaluator import Evaluator" in cli
