#!/usr/bin/env python3
"""Print the mean and the maximum of the numbers in a file, one number per line."""
import sys


def read_numbers(path):
    numbers = []
    with open(path) as handle:
        lines = handle.readlines()
    for line in lines[1:]:
        numbers.append(float(line))
    return numbers


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/app/numbers.txt"
    numbers = read_numbers(path)
    mean = sum(numbers) / len(numbers)
    print(f"mean={mean:.2f}")
    print(f"max={max(numbers):.2f}")


if __name__ == "__main__":
    main()
