; string utilities: length, reverse printing and a word count, over strings with escapes
main:
        push intro
        sys PRINT_STR
        push sample
        call strlen, 1
        sys PRINT_INT
        sys NEWLINE
        push sample
        call print_reversed, 1
        pop
        sys NEWLINE
        push sample
        call count_words, 1
        sys PRINT_INT
        sys NEWLINE
        push tail
        sys PRINT_STR
        halt

; strlen(addr): bytes before the NUL
strlen:
        enter 1
.next:
        lda 0
        ldl 0
        add
        loadb
        jz .done
        ldl 0
        push 1
        add
        stl 0
        jmp .next
.done:
        ldl 0
        ret

; print_reversed(addr): the bytes backwards (ASCII only)
print_reversed:
        enter 1
        lda 0
        call strlen, 1
        stl 0
.loop:
        ldl 0
        jz .done
        ldl 0
        push 1
        sub
        stl 0
        lda 0
        ldl 0
        add
        loadb
        sys PRINT_CHAR
        jmp .loop
.done:
        push 0
        ret

; count_words(addr): runs of non-space bytes
count_words:
        enter 3                 ; 0: index, 1: count, 2: in a word
.loop:
        lda 0
        ldl 0
        add
        loadb
        dup
        jz .end
        push ' '
        eq
        jnz .space
        ldl 2
        jnz .step
        ldl 1
        push 1
        add
        stl 1
        push 1
        stl 2
        jmp .step
.space:
        push 0
        stl 2
.step:
        ldl 0
        push 1
        add
        stl 0
        jmp .loop
.end:
        pop
        ldl 1
        ret

intro:  .string "strings:\t\"demo\"\n"
sample: .string "stack  machines are fun"
tail:   .string "done\\ok\n"
