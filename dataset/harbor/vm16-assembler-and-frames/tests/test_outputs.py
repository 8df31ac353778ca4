import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/docs/ISA.md': 'c23efacadba7c36990ab648b0ce1eb3d97a8da72f197538250eded4f1c85fa12', '/app/examples/fact.s': '8d34ade8de71ad55590ff4770147a9ee9e05cd018ad241f48c7f99af4f46f8ea', '/app/examples/hello.s': '39ec7559a00d9b8325ced6424b90452be7a5a81821f3e28e013e3f9fc91ec467', '/app/unit_tests/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/unit_tests/test_assembler.py': '030e34971e77bbe6fd930d73b014223486bf44b5bcf4d67cf177f3e9ce3a3b5c', '/app/unit_tests/test_isa_and_source.py': '74d29c649d8c95e1ac00ad084b0d960325aeb103be9a9aa106ea479ba65c4997', '/app/unit_tests/test_machine.py': '9327fab8533d890cf2e5c3acfd9adcce67bc89bbe731f1bfa8294b4f9217d6f1', '/app/vm16/__init__.py': '274b4e35d52ded7d41a744fe6b1918513b2271fb04d3ecd9d83e7b14ea2f8c39', '/app/vm16/__main__.py': 'aa535f031d660caaafca993450afd756d187488a05eff58c7876ed867d5e8d16', '/app/vm16/asm.py': '3100b096398791db9826358bcdec4afe571212279ae4a894cbda3f19c46b76ce', '/app/vm16/assembler.py': '0368b3a51b864eb6baa07c2e811b3e155ab94cd6de6c1cc70a9225ba90c69739', '/app/vm16/directives.py': 'b4ff3586b3c791ef77c913ef8062c241e6502f920e3d649e8c5c6d6cafe62ae4', '/app/vm16/disasm.py': '9bfb4028435a3eff3f4863d6b7f0435bdae3d3b15e8f95b5c6eed18bd54395ce', '/app/vm16/errors.py': '46b62efc47cde70cf49ea8a2ebab29a0d9381b347c507dd289be51a17260eef2', '/app/vm16/expressions.py': 'acf6acd480850f95c418ed3b36337f1938c05412eeb15d96df87b74659bad9be', '/app/vm16/isa.py': '0f85b21a7bd3d029c1d4583f90a0e2304bce0d3ca4a8a751a5e0eb3cd6ed7abd', '/app/vm16/objfile.py': '3075bdbf1e6ba67813dfb09980fdf374df0eaa3aa56559362fbfc83b8ce4fed9', '/app/vm16/run.py': 'e00a20e1a55ffa23cacdd9d7070030041ca532ddc8879555a6f631c44f4f90cd', '/app/vm16/source.py': '9a0c686bf2cd90e727e2f4e7940ffbb2587a0fb7ae317b148ce3f4b55f3afb8c', '/app/vm16/vm.py': 'ee0cd1fa38b988a38f438f486f63cafa46dd29b6ed6f9de0353f0deb1609f4d3'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import tempfile

APP = "/app"
HERE = Path(__file__).parent
SHIPPED = ["/app/unit_tests/__init__.py", "/app/unit_tests/test_isa_and_source.py", "/app/unit_tests/test_assembler.py",
           "/app/unit_tests/test_machine.py", "/app/docs/ISA.md", "/app/vm16/isa.py"]


def _source_file(source):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False, encoding="utf-8") as handle:
        handle.write(source)
    return handle.name


def vm16(source, *options, stdin=""):
    """Assemble and run a program with `python3 -m vm16`; (status, stdout, stderr)."""
    path = _source_file(source)
    result = run("python3", "-m", "vm16", path, *options, input=stdin, cwd=APP, timeout=120)
    os.unlink(path)
    return result.returncode, result.stdout, result.stderr


def output(source, *options, stdin=""):
    status, out, err = vm16(source, *options, stdin=stdin)
    assert status == 0, f"exit {status}: {err}"
    return out


def test_forward_references_to_nearby_labels():
    source = '''
main:
        push message        ; defined below, at a small address
        sys PRINT_STR
        push counter
        load
        push 5
        add
        dup
        push counter
        store
        sys PRINT_INT
        sys NEWLINE
        push counter+4
        load
        sys PRINT_INT
        sys NEWLINE
        push after - message
        sys PRINT_INT
        sys NEWLINE
        halt
message: .string "forward"
counter: .word 37, -2
after:
'''
    assert output(source) == "forward42\n-2\n16\n"


def test_labels_after_escaped_and_unicode_strings():
    source = '''
        jmp main
first:  .string "tab:\\t|quote:\\"|slash:\\\\|\\x41\\n"
second: .string "café ☕\\n", "x"
table:  .word 1234, 99
last:   .byte 'Z', 0
main:
        push first
        sys PRINT_STR
        push second
        sys PRINT_STR
        push table
        load
        sys PRINT_INT
        push table+4
        load
        sys PRINT_INT
        push last
        sys PRINT_STR
        push last - second
        sys PRINT_INT
        sys NEWLINE
        halt
'''
    assert output(source) == 'tab:\t|quote:"|slash:\\|A\ncafé ☕\n123499Z21\n'


def test_symbol_table_of_a_mixed_program():
    source = '''
.const BIG, 1000
main:
        push 3
        push later
        push BIG
        push msg
        jmp end
msg:    .string "a\\tb\\\\c\\n"
later:
.loop:  push msg
        push .loop
        nop
end:    halt
data:   .string "é"
tail:   .word 7
'''
    path = _source_file(source)
    result = run("python3", "-m", "vm16.asm", path, "-o", path + ".vmo", "--symbols", cwd=APP)
    os.unlink(path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n") == ["0000 main", "0014 msg", "001b later", "001b later.loop",
                                         "0020 end", "0021 data", "0024 tail", ""]
    code = Path(path + ".vmo").read_bytes()
    assert code[9:9 + 0x28].hex() == ("0303" "021b000000" "02e8030000" "0214000000" "302000"
                                      "6109625c630a00" "0314" "031b" "00" "01" "c3a900" "07000000")


def test_recursive_functions_with_locals():
    source = '''
main:
        push 10
        call fib, 1
        sys PRINT_INT
        sys NEWLINE
        push 3
        push 4
        call power, 2
        sys PRINT_INT
        sys NEWLINE
        push 7
        call tri, 1
        sys PRINT_INT
        sys NEWLINE
        halt
fib:                        ; fib(n) with both halves kept in locals
        enter 2
        lda 0
        push 2
        lt
        jz .more
        lda 0
        ret
.more:
        lda 0
        push 1
        sub
        call fib, 1
        stl 0
        lda 0
        push 2
        sub
        call fib, 1
        stl 1
        ldl 0
        ldl 1
        add
        ret
power:                      ; power(base, exponent), the result kept in a local across the call
        enter 1
        lda 1
        jnz .step
        push 1
        ret
.step:
        lda 0
        lda 1
        push 1
        sub
        call power, 2
        stl 0
        ldl 0
        lda 0
        mul
        ret
tri:                        ; tri(n) = n + tri(n - 1), n read again after the call
        enter 0
        lda 0
        jz .zero
        lda 0
        push 1
        sub
        call tri, 1
        lda 0
        add
        ret
.zero:
        push 0
        ret
'''
    assert output(source) == "55\n81\n28\n"


def test_arguments_are_dropped_on_return():
    source = '''
main:
        push 10
        push 3
        push 4
        call add, 2
        sub
        push 100
        push 1
        push 2
        push 3
        call sum3, 3
        push 5
        call twice, 1
        halt
add:    lda 0
        lda 1
        add
        ret
sum3:   enter 1
        lda 0
        lda 1
        add
        lda 2
        add
        stl 0
        push 77
        push 88
        ldl 0
        ret
twice:  lda 0
        push 2
        mul
        ret
'''
    assert output(source, "--stack") == "stack: 3 100 6 10\n"


def test_reference_object_files_run():
    for name in ("numbers", "strings"):
        code = bytes.fromhex((HERE / f"{name}.vmo.hex").read_text().strip())
        with tempfile.NamedTemporaryFile("wb", suffix=".vmo", delete=False) as handle:
            handle.write(code)
        stdin = (HERE / f"{name}.in").read_text() if (HERE / f"{name}.in").exists() else ""
        result = run("python3", "-m", "vm16.run", handle.name, input=stdin, cwd=APP)
        os.unlink(handle.name)
        assert result.returncode == 0, (name, result.stderr)
        assert result.stdout == (HERE / f"{name}.out").read_text(), name


def test_sample_programs():
    for name in ("numbers", "strings"):
        source = (HERE / f"{name}.s").read_text()
        stdin = (HERE / f"{name}.in").read_text() if (HERE / f"{name}.in").exists() else ""
        assert output(source, stdin=stdin) == (HERE / f"{name}.out").read_text(), name
    # and the separate assembler and runner agree with the one-step command
    path = _source_file((HERE / "strings.s").read_text())
    assembled = run("python3", "-m", "vm16.asm", path, "-o", path + ".vmo", cwd=APP)
    assert assembled.returncode == 0, assembled.stderr
    ran = run("python3", "-m", "vm16.run", path + ".vmo", cwd=APP)
    assert ran.stdout == (HERE / "strings.out").read_text()


def test_guard_shipped_tests_docs_and_table_unchanged_and_passing():
    for path in SHIPPED:
        assert unchanged(path), f"{path} was changed"
    result = run("python3", "-m", "unittest", "discover", "-s", "unit_tests", "-t", ".", cwd=APP, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_guard_the_tools_share_the_instruction_table():
    code = (
        "import vm16.isa, vm16.assembler, vm16.vm, vm16.disasm\n"
        "from vm16.assembler import assemble\n"
        "from vm16.disasm import disassemble\n"
        "obj = assemble('main: push 300\\nhalt\\n')\n"
        "assert obj.code == bytes([0x02, 0x2c, 0x01, 0, 0, 0x01]), obj.code\n"
        "assert disassemble(obj)[2].split()[-2:] == ['push', '300']\n"
        "assert vm16.assembler.isa is vm16.isa and vm16.vm.isa is vm16.isa\n"
        "print('ok')\n"
    )
    result = run("python3", "-c", code, cwd=APP)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    status, _, err = vm16("main: fly 3\n")
    assert status == 1 and ":1: unknown instruction" in err
