import unittest

from vm16 import isa
from vm16.errors import AssemblyError
from vm16.expressions import Unresolved, evaluate, qualify
from vm16.source import read_source, split_operands, strip_comment


class IsaTest(unittest.TestCase):
    def test_sizes_follow_operands(self):
        self.assertEqual(isa.BY_MNEMONIC["push"].size, 5)
        self.assertEqual(isa.BY_MNEMONIC["push8"].size, 2)
        self.assertEqual(isa.BY_MNEMONIC["call"].size, 4)
        self.assertEqual(isa.BY_MNEMONIC["add"].size, 1)

    def test_table_is_consistent(self):
        for opcode, instruction in isa.BY_OPCODE.items():
            self.assertIs(isa.BY_MNEMONIC[instruction.mnemonic], instruction)
            self.assertEqual(instruction.opcode, opcode)

    def test_operand_round_trip(self):
        for kind, value in (("i8", -5), ("i32", -123456), ("u8", 200), ("addr", 0xBEEF)):
            self.assertEqual(isa.decode_operand(kind, isa.encode_operand(kind, value), 0), value)

    def test_operand_range(self):
        with self.assertRaises(ValueError):
            isa.encode_operand("i8", 128)

    def test_to_signed(self):
        self.assertEqual(isa.to_signed(2 ** 31), -(2 ** 31))
        self.assertEqual(isa.to_signed(-1), -1)


class SourceTest(unittest.TestCase):
    def test_comment_outside_quotes_only(self):
        self.assertEqual(strip_comment('.string "a;b" ; note'), '.string "a;b" ')

    def test_operands_split_outside_quotes(self):
        self.assertEqual(split_operands('"a,b", \',\', x+1', 1, "t"), ['"a,b"', "','", "x+1"])

    def test_statements(self):
        statements = read_source("start: .loop: push 1 ; one\n  call f, 2\nmsg: .string \"hi\"\n")
        self.assertEqual([(s.kind, s.name, s.operands) for s in statements], [
            ("label", "start", []), ("label", ".loop", []), ("instruction", "push", ["1"]),
            ("instruction", "call", ["f", "2"]), ("label", "msg", []), ("directive", ".string", ['"hi"'])])

    def test_bad_line(self):
        with self.assertRaises(AssemblyError):
            read_source("push 1\n9lives\n")


class ExpressionTest(unittest.TestCase):
    def test_numbers_and_characters(self):
        for text, value in (("42", 42), ("-7", -7), ("0x1f", 31), ("0b101", 5), ("'A'", 65), ("'\\n'", 10)):
            self.assertEqual(evaluate(text, None, {}, {}), value, text)

    def test_names(self):
        symbols = {"start": 4, "end": 20, "f.loop": 9}
        self.assertEqual(evaluate("end-start", None, symbols, {}), 16)
        self.assertEqual(evaluate("start+LIMIT", None, symbols, {"LIMIT": 3}), 7)
        self.assertEqual(evaluate(".loop", "f", symbols, {}), 9)

    def test_unresolved(self):
        with self.assertRaises(Unresolved):
            evaluate("later", None, {}, {})

    def test_qualify(self):
        self.assertEqual(qualify(".x", "main"), "main.x")
        with self.assertRaises(AssemblyError):
            qualify(".x", None)


if __name__ == "__main__":
    unittest.main()
