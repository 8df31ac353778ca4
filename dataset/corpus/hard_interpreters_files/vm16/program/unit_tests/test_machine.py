import io
import unittest

from vm16.assembler import assemble
from vm16.disasm import disassemble
from vm16.errors import MachineError
from vm16.vm import run_object


def run(source, stdin=""):
    out = io.StringIO()
    machine = run_object(assemble(source), stdin=io.StringIO(stdin), stdout=out)
    return out.getvalue(), machine.stack


class MachineTest(unittest.TestCase):
    def test_arithmetic(self):
        _, stack = run("push 7\npush 2\nsub\npush -7\npush 2\ndiv\npush -7\npush 2\nmod\nhalt\n")
        self.assertEqual(stack, [5, -3, -1])

    def test_wraparound(self):
        _, stack = run("push 0x7fffffff\npush 1\nadd\nhalt\n")
        self.assertEqual(stack, [-(2 ** 31)])

    def test_loop_and_print(self):
        out, _ = run("push 3\nl: dup\nsys PRINT_INT\npush 1\nsub\ndup\njnz l\nhalt\n")
        self.assertEqual(out, "321")

    def test_one_call(self):
        _, stack = run("main: push 2\npush 3\ncall add, 2\nhalt\nadd: lda 0\nlda 1\nadd\nret\n")
        self.assertEqual(stack[-1], 5)

    def test_memory(self):
        _, stack = run("main: push 99\npush cell\nstore\npush cell\nload\nhalt\ncell: .word 0\n")
        self.assertEqual(stack, [99])

    def test_read_int(self):
        out, _ = run("sys READ_INT\nsys READ_INT\nadd\nsys PRINT_INT\nhalt\n", stdin="20\n22\n")
        self.assertEqual(out, "42")

    def test_division_by_zero(self):
        with self.assertRaises(MachineError) as caught:
            run("push 1\npush 0\ndiv\n")
        self.assertEqual(caught.exception.pc, 4)

    def test_running_off_the_end(self):
        with self.assertRaises(MachineError):
            run("push 1\n")

    def test_arguments_outside_a_function(self):
        with self.assertRaises(MachineError):
            run("lda 0\n")

    def test_disassembly(self):
        lines = disassemble(assemble("main: push 300\nloop: jmp loop\n"))
        self.assertEqual(lines[1:], ["main:", "  0000: 02 2c 01 00 00  push 300", "loop:", "  0005: 30 05 00        jmp loop"])


if __name__ == "__main__":
    unittest.main()
