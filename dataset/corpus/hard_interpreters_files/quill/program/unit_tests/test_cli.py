import io
import os
import tempfile
import unittest

from quill.cli import main


def run_cli(argv, stdin_text=""):
    stdin, stdout, stderr = io.StringIO(stdin_text), io.StringIO(), io.StringIO()
    status = main(argv, stdin=stdin, stdout=stdout, stderr=stderr)
    return status, stdout.getvalue(), stderr.getvalue()


class CliTest(unittest.TestCase):
    def test_eval_expression(self):
        self.assertEqual(run_cli(["-e", "1 + 2"]), (0, "3\n", ""))

    def test_program_file_with_arguments(self):
        with tempfile.NamedTemporaryFile("w", suffix=".ql", delete=False) as handle:
            handle.write('print(len(args), args[0]);')
        try:
            self.assertEqual(run_cli([handle.name, "first", "second"]), (0, "2 first\n", ""))
        finally:
            os.unlink(handle.name)

    def test_syntax_error_status(self):
        status, _, err = run_cli(["-e", "let = 3;"])
        self.assertEqual(status, 2)
        self.assertIn("syntax error at line 1", err)

    def test_runtime_error_status(self):
        status, _, err = run_cli(["-e", "print(1);\nnope();"])
        self.assertEqual(status, 1)
        self.assertIn("runtime error at line 2", err)

    def test_tokens(self):
        status, out, _ = run_cli(["--tokens", "-e", "x + 1"])
        self.assertEqual(status, 0)
        self.assertEqual(out.splitlines()[:3], ["1:1 NAME x", "1:3 OP +", "1:5 NUMBER 1"])

    def test_repl_keeps_state_and_reports_errors(self):
        status, out, _ = run_cli([], stdin_text='let a = 2;\na * 21\nbogus\nfn f(x) {\n  return x + a;\n}\nf(1)\n')
        self.assertEqual(out, "42\nruntime error at line 1: undefined variable 'bogus'\n3\n")
        self.assertEqual(status, 1)


if __name__ == "__main__":
    unittest.main()
