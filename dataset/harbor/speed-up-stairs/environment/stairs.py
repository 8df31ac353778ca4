import sys


def ways(n):
    """Number of ways to climb n stairs taking 1, 2 or 3 steps at a time."""
    if n < 0:
        return 0
    if n == 0:
        return 1
    return ways(n - 1) + ways(n - 2) + ways(n - 3)


print(ways(int(sys.argv[1])))
