; factorial of the numbers 1..10, recursively
main:
        push 1
.loop:
        dup
        call fact, 1
        sys PRINT_INT
        sys NEWLINE
        push 1
        add
        dup
        push 11
        lt
        jnz .loop
        halt

; fact(n): n <= 1 ? 1 : n * fact(n - 1)
fact:
        enter 1
        lda 0
        stl 0
        ldl 0
        push 1
        le
        jz .recurse
        push 1
        ret
.recurse:
        ldl 0
        push 1
        sub
        call fact, 1
        ldl 0
        mul
        ret
