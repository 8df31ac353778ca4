import sys


def main():
    print(sys.argv)


main()
