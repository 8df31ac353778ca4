#!/usr/bin/env python3
"""In-sandbox helper of the search and file-metadata tools.

Usage: python3 tool_helper.py REQUEST.json
The request (written through the Engine API, never through a shell) names the operation and its
parameters; the result is printed on stdout as one JSON object. Paths and patterns are
plain data here, so quotes, newlines or ``$(...)`` in them have no effect.
Kept compatible with Python 3.6+ (task images ship older interpreters).
"""

import fnmatch
import json
import os
import re
import stat
import sys
import time

SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache"}
SKIP_ROOTS = {"/proc", "/sys", "/dev"}
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_LINE_CHARS = 240


def walk_files(root, deadline):
    if os.path.isfile(root):
        yield root
        return
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and os.path.join(directory, d) not in SKIP_ROOTS
            and not os.path.islink(os.path.join(directory, d))
        )
        for name in sorted(filenames):
            yield os.path.join(directory, name)
        if time.time() > deadline:
            raise TimeoutError("search took too long; narrow path or include")


def include_matches(path, root, include):
    if not include:
        return True
    relative = os.path.relpath(path, root) if os.path.isdir(root) else os.path.basename(path)
    name = os.path.basename(path)
    for pattern in expand_braces(include):
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern):
            return True
        if pattern.startswith("**/") and fnmatch.fnmatch(relative, pattern[3:]):
            return True
    return False


def expand_braces(pattern):
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    out = []
    for option in match.group(1).split(","):
        out.extend(expand_braces(pattern[: match.start()] + option + pattern[match.end():]))
    return out


def op_grep(req):
    try:
        regex = re.compile(req["pattern"])
    except re.error as exc:
        return {"ok": False, "error": "invalid regular expression: %s" % exc}
    root = req["path"]
    if not os.path.exists(root):
        return {"ok": False, "error": "no such file or directory: %s" % root}
    deadline = time.time() + req.get("time_budget", 20)
    hits = []
    files_searched = 0
    for path in walk_files(root, deadline):
        if not include_matches(path, root, req.get("include")):
            continue
        try:
            if not os.path.isfile(path) or os.path.getsize(path) > MAX_FILE_BYTES:
                continue
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if b"\x00" in data[:8192]:
            continue
        files_searched += 1
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if regex.search(line):
                if len(line) > MAX_LINE_CHARS:
                    line = line[:MAX_LINE_CHARS] + "..."
                hits.append([path, number, line])
    hits.sort(key=lambda hit: (hit[0], hit[1]))
    limit = req["max_results"]
    return {"ok": True, "results": hits[:limit], "total": len(hits), "files_searched": files_searched}


def op_glob(req):
    import glob as globmod

    root = req["path"]
    if not os.path.isdir(root):
        return {"ok": False, "error": "not a directory: %s" % root}
    found = set()
    for pattern in expand_braces(req["pattern"]):
        full = pattern if pattern.startswith("/") else os.path.join(root, pattern)
        for path in globmod.glob(full, recursive=True):
            found.add(path)
    results = sorted(found)
    limit = req["max_results"]
    return {"ok": True, "results": results[:limit], "total": len(results)}


def op_ls(req):
    root = req["path"]
    if not os.path.isdir(root):
        return {"ok": False, "error": "not a directory: %s" % root}
    ignore = req.get("ignore") or []
    depth = req.get("depth", 1)
    limit = req["max_results"]
    entries = []
    total = [0]
    deadline = time.time() + req.get("time_budget", 20)

    def visit(directory, level, prefix):
        if time.time() > deadline:
            raise TimeoutError("listing took too long; lower depth or list a smaller directory")
        try:
            names = sorted(os.listdir(directory))
        except OSError as exc:
            entries.append(prefix + "[cannot list: %s]" % exc.strerror)
            return
        for name in names:
            if any(fnmatch.fnmatch(name, pattern) for pattern in ignore):
                continue
            path = os.path.join(directory, name)
            is_dir = os.path.isdir(path) and not os.path.islink(path)
            total[0] += 1
            if len(entries) < limit:
                if is_dir:
                    entries.append(prefix + name + "/")
                else:
                    try:
                        size = os.lstat(path).st_size
                    except OSError:
                        size = 0
                    suffix = " -> " + os.readlink(path) if os.path.islink(path) else ""
                    entries.append("%s%s  (%d bytes)%s" % (prefix, name, size, suffix))
            if is_dir and level < depth:
                visit(path, level + 1, prefix + "  ")

    visit(root, 1, "")
    return {"ok": True, "results": entries, "total": total[0]}


def describe(path):
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {"path": path, "exists": False}
    except OSError as exc:
        return {"path": path, "exists": False, "error": exc.strerror}
    mode = info.st_mode
    kind = "directory" if stat.S_ISDIR(mode) else "symlink" if stat.S_ISLNK(mode) else "file" if stat.S_ISREG(mode) else "other"
    out = {
        "path": path,
        "exists": True,
        "type": kind,
        "size": info.st_size,
        "mode": "%04o" % stat.S_IMODE(mode),
        "uid": info.st_uid,
        "gid": info.st_gid,
        "mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(info.st_mtime)),
    }
    try:
        import pwd

        out["owner"] = pwd.getpwuid(info.st_uid).pw_name
    except (ImportError, KeyError):
        out["owner"] = str(info.st_uid)
    if kind == "symlink":
        out["target"] = os.readlink(path)
    if kind == "file" and info.st_size <= MAX_FILE_BYTES:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            out["binary"] = b"\x00" in data[:8192]
            if not out["binary"]:
                out["lines"] = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        except OSError as exc:
            out["error"] = exc.strerror
    if kind == "directory":
        try:
            out["entries"] = len(os.listdir(path))
        except OSError as exc:
            out["error"] = exc.strerror
    return out


def op_metadata(req):
    return {"ok": True, "results": [describe(path) for path in req["paths"]]}


OPERATIONS = {"grep": op_grep, "glob": op_glob, "ls": op_ls, "metadata": op_metadata}


def main():
    with open(sys.argv[1], "r", encoding="utf-8") as handle:
        req = json.load(handle)
    try:
        response = OPERATIONS[req["op"]](req)
    except TimeoutError as exc:
        response = {"ok": False, "error": str(exc)}
    except Exception as exc:  # reported to the model as the tool's error
        response = {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}
    sys.stdout.write(json.dumps(response))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
