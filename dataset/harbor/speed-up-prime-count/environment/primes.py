import sys


def is_prime(n):
    if n < 2:
        return False
    for d in range(2, n):
        if n % d == 0:
            return False
    return True


limit = int(sys.argv[1])
print(sum(1 for n in range(limit) if is_prime(n)))
