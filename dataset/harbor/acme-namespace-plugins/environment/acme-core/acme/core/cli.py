import sys
from importlib.metadata import entry_points


def plugins():
    return {point.name: point for point in entry_points(group="acme.plugins")}


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    found = plugins()
    if args == ["--list"]:
        for name in sorted(found):
            print(name)
        return 0
    if len(args) != 2 or args[0] not in found:
        print(f"usage: acme-run --list | acme-run NAME TEXT (plugins: {', '.join(sorted(found)) or 'none'})",
              file=sys.stderr)
        return 2
    print(found[args[0]].load()(args[1]))
    return 0
