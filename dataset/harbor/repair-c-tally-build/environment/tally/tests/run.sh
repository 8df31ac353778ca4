#!/bin/sh
# The project's test suite: every tests/cases/NAME.in must give tests/cases/NAME.out.
cd "$(dirname "$0")/.." || exit 1
failed=0
for input in tests/cases/*.in; do
    expected="${input%.in}.out"
    if ./tally < "$input" | cmp -s - "$expected"; then
        echo "ok   $input"
    else
        echo "FAIL $input"
        failed=1
    fi
done
exit $failed
