; greet, then count down
.const START, 3
main:
        push greeting
        sys PRINT_STR
        push START
.count:
        dup
        sys PRINT_INT
        push ' '
        sys PRINT_CHAR
        push 1
        sub
        dup
        jnz .count
        pop
        push done
        sys PRINT_STR
        halt

greeting: .string "hello, \"world\"\n"
done:     .string "liftoff\n"
