import unittest

from vm16.assembler import assemble
from vm16.directives import decode_string
from vm16.errors import AssemblyError
from vm16.objfile import from_bytes


class AssemblerTest(unittest.TestCase):
    def test_small_push_uses_short_form(self):
        self.assertEqual(assemble("push 5\nhalt\n").code, bytes([0x03, 5, 0x01]))

    def test_large_push_uses_long_form(self):
        self.assertEqual(assemble("push 1000\n").code, bytes([0x02, 0xE8, 0x03, 0, 0]))

    def test_backward_label(self):
        obj = assemble("top: nop\njmp top\n")
        self.assertEqual(obj.code, bytes([0x00, 0x30, 0x00, 0x00]))
        self.assertEqual(obj.symbols, {"top": 0})

    def test_local_labels_are_scoped(self):
        obj = assemble("a:\n.x: nop\nb:\n.x: nop\njmp .x\n")
        self.assertEqual(obj.symbols, {"a": 0, "a.x": 0, "b": 1, "b.x": 1})
        self.assertEqual(obj.code[-2:], bytes([1, 0]))

    def test_constants_and_syscall_names(self):
        obj = assemble(".const N, 7\npush N\nsys PRINT_INT\n")
        self.assertEqual(obj.code, bytes([0x03, 7, 0x50, 1]))

    def test_words_and_bytes(self):
        obj = assemble(".word 1, -1\n.byte 'A', 0x20\n.zero 2\n")
        self.assertEqual(obj.code, bytes([1, 0, 0, 0, 255, 255, 255, 255, 65, 32, 0, 0]))

    def test_plain_string(self):
        self.assertEqual(assemble('.string "ok"\n').code, b"ok\0")

    def test_string_escapes_decode(self):
        self.assertEqual(decode_string(r'"a\tb\x41\\"'), "a\tbA\\")

    def test_entry_defaults_to_main(self):
        self.assertEqual(assemble("nop\nmain: halt\n").entry, 1)

    def test_errors_name_the_line(self):
        for source, fragment in (("nop\nfly 3\n", "unknown instruction"), ("x: nop\nx: nop\n", "defined twice"),
                                 ("jmp nowhere\n", "undefined label"), ("push 1, 2\n", "takes 1 operand"),
                                 (".byte 300\n", "out of range")):
            with self.assertRaises(AssemblyError) as caught:
                assemble(source, source_name="p.s")
            self.assertIn(fragment, str(caught.exception))
            self.assertIn("p.s:", str(caught.exception))

    def test_object_round_trip(self):
        obj = assemble("main: push 1\nhalt\n")
        again = from_bytes(obj.to_bytes())
        self.assertEqual((again.code, again.entry, again.symbols), (obj.code, obj.entry, obj.symbols))


if __name__ == "__main__":
    unittest.main()
