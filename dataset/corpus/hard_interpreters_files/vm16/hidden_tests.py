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
