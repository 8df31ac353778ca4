import io
import json
import os
import tempfile
import unittest

from jqlite import run_filter
from jqlite.cli import main

ROWS = [{"team": "red", "pts": 3}, {"team": "blue", "pts": 5}, {"team": "red", "pts": 1}]


class BuiltinTest(unittest.TestCase):
    def test_collections(self):
        self.assertEqual(run_filter("map(.pts) | add, length", ROWS), [9, 3])
        self.assertEqual(run_filter("[.[] | select(.pts > 2) | .team]", ROWS), [["red", "blue"]])
        self.assertEqual(run_filter("sort_by(.pts) | map(.pts)", ROWS), [[1, 3, 5]])
        self.assertEqual(run_filter("group_by(.team) | map(length)", ROWS), [[1, 2]])
        self.assertEqual(run_filter("map(.team) | unique", ROWS), [["blue", "red"]])

    def test_objects(self):
        self.assertEqual(run_filter("keys, has(\"a\"), to_entries", {"b": 1, "a": 2}),
                         [["a", "b"], True, [{"key": "b", "value": 1}, {"key": "a", "value": 2}]])
        self.assertEqual(run_filter("with_entries({key, value: (.value + 1)})", {"x": 1}), [{"x": 2}])

    def test_strings(self):
        self.assertEqual(run_filter('split(",") | join("+")', "a,b,c"), ["a+b+c"])
        self.assertEqual(run_filter('ascii_upcase, test("^a"), ltrimstr("ab"), tostring', "abc"), ["ABC", True, "c", "abc"])
        self.assertEqual(run_filter("tojson, (\"12\" | tonumber)", [1, "x"]), ['[1,"x"]', 12])

    def test_ranges_and_first(self):
        self.assertEqual(run_filter("[range(3)], [range(2; 4)], first(range(5; 9))", None), [[0, 1, 2], [2, 3], 5])

    def test_error(self):
        from jqlite.errors import FilterRuntimeError
        with self.assertRaises(FilterRuntimeError):
            run_filter('error("stop")', None)


def run_cli(argv, stdin_text=""):
    stdout, stderr = io.StringIO(), io.StringIO()
    status = main(argv, stdin=io.StringIO(stdin_text), stdout=stdout, stderr=stderr)
    return status, stdout.getvalue(), stderr.getvalue()


class CliTest(unittest.TestCase):
    def test_pretty_and_compact(self):
        self.assertEqual(run_cli([".a"], '{"a": [1, {"b": 2}]}'),
                         (0, '[\n  1,\n  {\n    "b": 2\n  }\n]\n', ""))
        self.assertEqual(run_cli(["-c", ".a"], '{"a": [1, {"b": 2}]}'), (0, '[1,{"b":2}]\n', ""))

    def test_raw_and_stream_of_inputs(self):
        self.assertEqual(run_cli(["-r", ".name"], '{"name": "x"} {"name": "y"}\n'), (0, "x\ny\n", ""))

    def test_slurp_and_null_input(self):
        self.assertEqual(run_cli(["-c", "map(. * 2)", "-s"], "1 2 3"), (0, "[2,4,6]\n", ""))
        self.assertEqual(run_cli(["-n", "1 + 1"]), (0, "2\n", ""))

    def test_files(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump({"k": "v"}, handle)
        try:
            self.assertEqual(run_cli(["-r", ".k", handle.name]), (0, "v\n", ""))
        finally:
            os.unlink(handle.name)

    def test_exit_statuses(self):
        self.assertEqual(run_cli([".a |"], "{}")[0], 3)
        self.assertEqual(run_cli([".a"], "[1]")[0], 5)
        status, _, err = run_cli(["."], "{nope")
        self.assertEqual(status, 2)
        self.assertIn("invalid JSON at line 1", err)
        self.assertEqual(run_cli(["--bogus", "."], "1")[0], 2)

    def test_sorted_keys(self):
        self.assertEqual(run_cli(["-cS", "."], '{"b": 1, "a": {"d": 1, "c": 2}}'), (0, '{"a":{"c":2,"d":1},"b":1}\n', ""))


if __name__ == "__main__":
    unittest.main()
