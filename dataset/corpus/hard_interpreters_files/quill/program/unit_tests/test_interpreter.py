import unittest

from quill.errors import QuillRuntimeError
from unit_tests.helpers import output_of


class InterpreterTest(unittest.TestCase):
    def test_arithmetic(self):
        self.assertEqual(output_of("print(1 + 2 * 3, 7 // 2, 7 / 2, 2 ** 10);"), "7 3 3.5 1024\n")

    def test_strings_and_lists(self):
        self.assertEqual(output_of('print("ab" + "cd", "ab" * 2, [1] + [2]);'), "abcd abab [1, 2]\n")

    def test_if_and_while(self):
        source = "let i = 0; let s = 0; while i < 5 { i += 1; if i == 3 { continue; } s += i; } print(s);"
        self.assertEqual(output_of(source), "12\n")

    def test_break(self):
        self.assertEqual(output_of("for x in [1, 2, 3, 4] { if x == 3 { break; } print(x); }"), "1\n2\n")

    def test_recursion(self):
        source = "fn fact(n) { if n <= 1 { return 1; } return n * fact(n - 1); } print(fact(10));"
        self.assertEqual(output_of(source), "3628800\n")

    def test_block_scope(self):
        self.assertEqual(output_of("let a = 1; if true { let a = 2; print(a); } print(a);"), "2\n1\n")

    def test_assignment_reaches_outer_scope(self):
        self.assertEqual(output_of("let a = 1; if true { a = 5; } print(a);"), "5\n")

    def test_map_and_index_assignment(self):
        source = 'let m = {"a": 1}; m["b"] = 2; m["a"] += 10; let xs = [1, 2]; xs[-1] = 9; print(m, xs);'
        self.assertEqual(output_of(source), '{"a": 11, "b": 2} [1, 9]\n')

    def test_short_circuit(self):
        self.assertEqual(output_of("print(nil or 3, 0 and boom(), true and 2);"), "3 0 2\n")

    def test_booleans_are_not_numbers(self):
        self.assertEqual(output_of("print(true == 1, 1 == 1.0);"), "false true\n")

    def test_undefined_variable(self):
        with self.assertRaises(QuillRuntimeError) as caught:
            output_of("let a = 1;\nprint(b);")
        self.assertEqual(caught.exception.line, 2)

    def test_division_by_zero(self):
        with self.assertRaises(QuillRuntimeError):
            output_of("print(1 / 0);")

    def test_wrong_argument_count(self):
        with self.assertRaises(QuillRuntimeError):
            output_of("fn f(a) { return a; } f(1, 2);")

    def test_type_errors(self):
        with self.assertRaises(QuillRuntimeError):
            output_of('print("a" + 1);')


if __name__ == "__main__":
    unittest.main()
