; read numbers until 0; for each print n, gcd with 360, and fib(n mod 20) (recursive)
.const MODULUS, 20
main:
.read:
        sys READ_INT
        dup
        jz .finish
        dup
        sys PRINT_INT
        push sep
        sys PRINT_STR
        dup
        push 360
        call gcd, 2
        sys PRINT_INT
        push sep
        sys PRINT_STR
        push MODULUS
        mod
        call fib, 1
        sys PRINT_INT
        sys NEWLINE
        jmp .read
.finish:
        pop
        push total_label
        sys PRINT_STR
        push calls
        load
        sys PRINT_INT
        sys NEWLINE
        halt

; gcd(a, b), Euclid, recursive
gcd:
        enter 1
        lda 1
        jnz .recurse
        lda 0
        ret
.recurse:
        lda 0
        lda 1
        mod
        stl 0
        lda 1
        ldl 0
        call gcd, 2
        ret

; fib(n), recursive, counting its calls in memory
fib:
        enter 2
        push calls
        load
        push 1
        add
        push calls
        store
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

sep:         .string " | "
total_label: .string "fib calls: "
calls:       .word 0
