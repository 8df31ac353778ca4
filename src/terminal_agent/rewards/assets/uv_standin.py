"""``uv`` / ``uvx`` / ``pytest`` stand-ins of the terminal-agent verifier runtime.

Started by the wrappers in ``VERIFIER_DIR/bin`` as ``PYTHON -I -S -B .../runtime/uv_standin.py TOOL ARGS``
(the image's own interpreter, isolated: no PYTHON* variables, no user site, no ``.pth`` files). The host
put in ``runtime/``: ``manifest.json`` (what it provides), ``bundle.zip`` (its pytest stack) and
``wheels/`` (the wheels of the tools the test scripts name). Nothing is installed: pure-Python wheels go
on ``sys.path`` as they are (zipimport), compiled ones (``numpy``, fetched for this interpreter, which the grader
asked) as the ``NAME.whl.d`` folder the host unpacked, and only where this interpreter and platform match their tags;
all in front of the standard library, with the image's package dirs LAST (a fallback for what the host
could not provide).

* ``uvx [-p X] [-w PKG ...] [--from PKG] TOOL ARGS`` (and ``uv tool run``): ``pytest`` runs in this process
  with the requested wheels; another tool runs from a provided wheel's console script.
* ``uv run [--with PKG] CMD``: ``pytest``, ``python -m pytest``, ``python SCRIPT`` likewise; other commands
  are executed as they are.
* ``uv venv [DIR]``: a stand-in venv at DIR (default ``.venv``) whose ``bin/activate`` puts its ``bin/`` first on
  PATH and whose ``python``, ``python3``, ``pytest`` are the runtime's (terminal-bench v1's run-tests.sh activates
  ``.tbench-testing`` and runs ``python -m pytest`` or ``uv run pytest`` there).
* ``uv pip install`` / ``uv add`` / ``uv init`` / ``uv python ...`` / ``uv --version``: nothing to do (logged).
* ``pytest ARGS``: pytest with every provided wheel.
* ``python -m pytest ARGS`` (``VERIFIER_DIR/bin/python`` and ``python3``): pytest with every provided wheel; any
  other ``python`` command line runs the image's interpreter as it is.

``sys.path[0]`` is what Python itself would put there: the working directory for ``python -m pytest`` (Harbor runs
test.sh in the task's WORKDIR, so a test imports a module shipped there), the script's directory for ``python
SCRIPT``, nothing for the console ``pytest``. That entry serves only names that neither the runtime (its wheels,
its pytest bundle, the session gate), the standard library nor the test paths' directories provide: a ``pytest.py``,
``_pytest/``, ``pluggy.py`` or ``json.py`` planted there is never imported in their place (whatever finder asks,
pytest's assertion rewriter included: the entry's path finder refuses them), and each refusal is logged.

pytest always runs with plugin autoload off (``-p`` for the provided wheels' ``pytest11`` plugins), so no
plugin the agent installed in the image loads; when the test paths' directory has no pytest
configuration of its own, ``-c runtime/pytest.ini --rootdir DIR`` keeps a planted ``/pytest.ini`` out;
``--confcutdir DIR`` keeps conftest files above it out. Every substitution and every request it cannot
serve goes to ``$TA_VERIFIER_LOG`` (JSON lines) for the grader.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INI_NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
UV_VALUE_OPTIONS = {
    "-p", "--python", "--from", "--index-url", "-i", "--extra-index-url", "--index", "--default-index",
    "--find-links", "-f", "--cache-dir", "--with-editable", "--with-requirements", "--constraints", "-c",
    "--overrides", "--directory", "--project", "--env-file", "--python-preference", "--color", "--config-file",
    "--resolution", "--prerelease", "--exclude-newer", "--index-strategy", "--keyring-provider", "--link-mode",
    "--group", "--extra", "--package",
}


def log(tool, kind, message):
    """One line for the grader: kind is substituted | skipped | needs_network | missing | unsupported."""
    path = os.environ.get("TA_VERIFIER_LOG")
    if not path:
        return
    try:
        with open(path, "a") as handle:
            handle.write(json.dumps({"tool": tool, "kind": kind, "message": message}) + "\n")
    except OSError:
        pass


def manifest():
    with open(os.path.join(HERE, "manifest.json")) as handle:
        info = json.load(handle)
    drop_unfit_wheels(info)
    return info


def _glibc():
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()
        return tuple(int(part) for part in version.split(".")[:2]) if name == "glibc" else None
    except (AttributeError, ValueError, OSError):
        return None


def wheel_fits(filename):
    """Why a compiled wheel cannot run here (its python, ABI or platform tags), or None when it can."""
    import platform

    parts = filename[:-4].split("-")
    pythons, abis, platforms = parts[-3].split("."), parts[-2].split("."), parts[-1].split(".")
    here = "cp%d%d" % sys.version_info[:2]
    abi3 = "abi3" in abis and any(p.startswith("cp3") and p[2:].isdigit() and int(p[3:] or 0) <= sys.version_info[1]
                                  for p in pythons)
    if sys.implementation.name != "cpython" or not (here in pythons or abi3):
        return "built for %s, this is python %s" % (".".join(pythons), sys.version.split()[0])
    machine, libc = platform.machine(), _glibc()
    for tag in platforms:
        if tag == "linux_" + machine:
            return None
        bits = tag.split("_")
        if tag.startswith("manylinux") and tag.endswith("_" + machine) and libc is not None:
            if bits[0] == "manylinux1" or bits[0] == "manylinux2010" or bits[0] == "manylinux2014":
                return None if libc >= {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}[bits[0]] else "needs a newer glibc"
            if len(bits) >= 3 and bits[1].isdigit() and bits[2].isdigit() and libc >= (int(bits[1]), int(bits[2])):
                return None
    return "built for %s, this is %s with glibc %s" % (".".join(platforms), machine, ".".join(map(str, libc or ())) or "?")


def drop_unfit_wheels(info):
    """Distributions whose compiled wheels cannot run on this interpreter become unavailable (with the reason)."""
    unfit = {}
    for filename, entry in info["wheels"].items():
        if entry.get("compiled"):
            why = wheel_fits(filename)
            if why:
                unfit[filename] = why
    if not unfit:
        return
    for name, filenames in list(info["provided"].items()):
        bad = [f for f in filenames if f in unfit]
        if bad:
            del info["provided"][name]
            info["unavailable"][name] = "%s: %s" % (bad[0], unfit[bad[0]])


def canonical(name):
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec):
    import re

    match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec.replace("@", "=="))
    return canonical(match.group(1)) if match else None


def system_package_dirs():
    import site  # with -S, importing site runs nothing: no .pth processing

    dirs = []
    for path in site.getsitepackages():
        if os.path.isdir(path) and path not in dirs:
            dirs.append(path)
    return dirs


def image_has(name):
    """Whether the image's own package dirs hold the distribution ``name``."""
    import importlib.metadata

    for dist in importlib.metadata.distributions(path=system_package_dirs()):
        if canonical(dist.metadata.get("Name") or "") == name:
            return True
    return False


def selected_wheels(info, names):
    """Wheel filenames for the distributions ``names`` (all provided ones when ``names`` is None)."""
    chosen = []
    wanted = info["provided"] if names is None else {n: info["provided"][n] for n in names if n in info["provided"]}
    for filenames in wanted.values():
        for filename in filenames:
            if filename not in chosen:
                chosen.append(filename)
    return chosen


def check_requested(tool, info, names):
    """Log every requested distribution that neither the runtime nor the image provides."""
    for name in names:
        if name in info["provided"] or name in info["bundled"] or name in ("pytest", "python"):
            continue
        if image_has(name):
            log(tool, "substituted", "%s -> the image's own copy (%s)" % (name, info["unavailable"].get(name, "not fetched")))
        else:
            why = info["unavailable"].get(name, "not named where the host looks")
            log(tool, "missing", "%s is neither in the verifier runtime nor in the image: %s" % (name, why))


def set_runtime_path(wheels, first=None, protect=()):
    """sys.path = the wheels, the bundle, the stdlib, the image's package dirs LAST; then ``first`` (the directory
    Python itself puts there: the working directory for ``-m``, the script's for a script) in front, guarded so that
    it serves no name that the runtime's own entries, the standard library or the dirs ``protect`` provide."""
    stdlib = [p for p in sys.path if p and not p.endswith(("site-packages", "dist-packages")) and p != HERE]
    entries = [os.path.join(HERE, "wheels", w + ".d" if info_compiled(w) else w) for w in wheels]
    runtime = entries + [os.path.join(HERE, "bundle.zip")] + stdlib
    sys.path[:] = runtime + system_package_dirs()
    if first is not None:
        first = os.path.abspath(first)
        protected = [p for p in list(protect) + runtime if os.path.abspath(p) != first]
        sys.path_importer_cache[first] = guarded_finder(first, protected)
        sys.path.insert(0, first)


def guarded_finder(path, protected):
    """A path-entry finder for ``path`` that refuses every top-level name one of the ``protected`` entries (or a
    later addition, as the session gate) provides: Python's own lookup in any other case."""
    import importlib.machinery as machinery

    loaders = [(machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
               (machinery.SourceFileLoader, machinery.SOURCE_SUFFIXES),
               (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES)]

    class GuardedFileFinder(machinery.FileFinder):
        refused = set()

        def find_spec(self, fullname, target=None):
            if "." not in fullname:
                owner = machinery.PathFinder.find_spec(fullname, protected + GUARDED_EXTRA)
                if owner is not None:
                    spec = super().find_spec(fullname, target)
                    if spec is not None and fullname not in self.refused:
                        self.refused.add(fullname)
                        log("python", "substituted", "%s in %s is not imported as %r: the runtime's, the standard "
                            "library's and the tests' modules are never shadowed by it (%s is used)"
                            % (spec.origin or fullname, path, fullname, owner.origin or fullname))
                    return None
            return super().find_spec(fullname, target)

    return GuardedFileFinder(path, *loaders)


GUARDED_EXTRA = []
"""Entries the runtime adds after the path is set (the session gate's dir): protected as well."""


def info_compiled(filename):
    parts = filename[:-4].split("-")
    return not (parts[-1] == "any" and parts[-2] == "none")


def note_python(tool, requested):
    if requested:
        actual = "%d.%d" % sys.version_info[:2]
        if not (actual == requested or actual.startswith(requested + ".") or requested.startswith(actual)):
            log(tool, "substituted", "python %s -> the image's python %s (%s)" % (requested, sys.version.split()[0], sys.executable))


def _test_dirs(args):
    dirs = []
    for arg in args:
        if arg.startswith("-"):
            continue
        path = arg.split("::", 1)[0]
        if os.path.exists(path):
            dirs.append(os.path.dirname(os.path.abspath(path)) if os.path.isfile(path) else os.path.abspath(path))
    return dirs


def run_pytest(tool, args, wheels, info, first=None):
    """pytest in this process; ``first``: the directory Python puts at ``sys.path[0]`` (None for the console
    ``pytest``, the working directory for ``python -m pytest``)."""
    set_runtime_path(wheels, first, _test_dirs(args))
    for key in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        os.environ.pop(key, None)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    plugin_args = []
    for filename in wheels:
        for module in info["wheels"][filename]["pytest_plugins"]:
            plugin_args += ["-p", module]
    gate = os.environ.get("TA_GATE_PLUGIN_DIR")
    if gate and os.path.isfile(os.path.join(gate, "ta_session_gate.py")):
        # the agent's processes run beside the tests: the session gate freezes them when the tests are over;
        # no pytest cache is written beside the tests (see harbor_runner._gate_environment)
        sys.path.insert(0, gate)
        GUARDED_EXTRA.append(gate)
        plugin_args += ["-p", "ta_session_gate", "-p", "no:cacheprovider"]
    guard = []
    given = set(a.split("=", 1)[0] for a in args)
    dirs = _test_dirs(args)
    if dirs:
        base = os.path.commonpath(dirs)
        if not ({"-c", "--config-file", "--rootdir"} & given) and not any(os.path.exists(os.path.join(base, n)) for n in INI_NAMES):
            guard += ["-c", os.path.join(HERE, "pytest.ini"), "--rootdir", base]
        if "--confcutdir" not in given:
            guard += ["--confcutdir", base]
    import pytest

    return int(pytest.main(plugin_args + guard + list(args)))


def run_console_script(tool, name, args, wheels, info):
    for filename in wheels:
        for script, target in info["wheels"][filename]["console_scripts"]:
            if script == name:
                set_runtime_path(wheels)
                module_name, _, function = target.partition(":")
                import importlib

                module = importlib.import_module(module_name)
                entry = module
                for part in function.split("."):
                    entry = getattr(entry, part)
                sys.argv = [name] + list(args)
                result = entry()
                return result if isinstance(result, int) else 0
    log(tool, "missing", "%s: no such tool in the verifier runtime (the host provides pure-Python tools only)" % name)
    return 127


PYTHON_FLAGS = set("bBdEhiIOPqsSuvVx")
"""Interpreter options without a value (``-m``, ``-c``, ``-W``, ``-X`` are read apart)."""


def split_interpreter_options(args):
    """(options, rest) of a ``python`` command line: ``-B -W error -m pytest -q`` -> (``-B -W error``, ``-m pytest
    -q``); rest starts at ``-m``, ``-c``, ``-`` or the script (None when an option is not one Python has)."""
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-W", "-X"):
            index += 2
            continue
        if word.startswith(("-W", "-X")) or word == "-OO":
            index += 1
            continue
        if word.startswith("-m") or word.startswith("-c") or word == "-" or not word.startswith("-"):
            return args[:index], args[index:]
        if word == "--" or not set(word[1:]) <= PYTHON_FLAGS:
            return None, args
        index += 1
    return args, []


def python_first_entry(options):
    """What Python puts at sys.path[0] for ``-m``: the working directory, unless ``-P``/``-I`` (or PYTHONSAFEPATH
    without ``-E``) say nothing."""
    flags = "".join(o[1:] for o in options if not o.startswith(("-W", "-X")) and o not in ("-OO",))
    if "P" in flags or "I" in flags or (os.environ.get("PYTHONSAFEPATH") and "E" not in flags):
        return None
    try:
        return os.getcwd()
    except OSError:  # a working directory removed under us: Python itself then adds nothing either
        return None


def apply_warning_options(options):
    """``-W ARG`` of the command line, as the interpreter would have read them."""
    import warnings

    values = []
    for index, option in enumerate(options):
        if option == "-W" and index + 1 < len(options):
            values.append(options[index + 1])
        elif option.startswith("-W") and len(option) > 2:
            values.append(option[2:])
    sys.warnoptions.extend(values)
    process = getattr(warnings, "_processoptions", None)
    if values and process is not None:
        process(values)


def pytest_module(rest):
    """Whether ``rest`` (after the interpreter's options) runs pytest as a module: ``-m pytest`` / ``-mpytest``."""
    if rest[:1] in (["-mpytest"], ["-mpy.test"]):
        return True
    return rest[:2] in (["-m", "pytest"], ["-m", "py.test"])


def run_python(tool, args, wheels, info):
    """``python ...`` inside the runtime: ``-m pytest`` and scripts; anything else runs the plain interpreter."""
    options, rest = split_interpreter_options(list(args))
    if options is not None and pytest_module(rest):
        apply_warning_options(options)
        return run_pytest(tool, rest[1 if rest[0].startswith("-mp") else 2:], wheels, info, python_first_entry(options))
    if not args or args[0].startswith("-"):
        os.execv(sys.executable, [sys.executable] + list(args))
    import runpy

    # as Python: the script's directory first
    set_runtime_path(wheels, os.path.dirname(os.path.abspath(args[0])))
    sys.argv = list(args)
    runpy.run_path(args[0], run_name="__main__")
    return 0


def python_command(args, info):
    """``python ARGS`` on the verifier's PATH: ``-m pytest`` / ``-m py.test`` (after any interpreter options) is the
    runtime's pytest with the working directory first on sys.path, as Python puts it (the image has none: a v1
    run-tests.sh's ``python -m pytest`` after ``uv pip install pytest``); anything else is the image's interpreter,
    exactly as if it had been called."""
    options, rest = split_interpreter_options(list(args))
    if options is not None and pytest_module(rest):
        apply_warning_options(options)
        return run_pytest("python -m pytest", rest[1 if rest[0].startswith("-mp") else 2:],
                          selected_wheels(info, None), info, python_first_entry(options))
    os.execv(sys.executable, [sys.executable] + list(args))


VENV_ACTIVATE = """# terminal-agent offline verifier runtime: a stand-in for a venv made by uv venv; python and pytest are the runtime's
VIRTUAL_ENV=%s
export VIRTUAL_ENV
PATH="$VIRTUAL_ENV/bin:$PATH"
export PATH
deactivate () { :; }
"""


def make_venv(args):
    """``uv venv [OPTIONS] [DIR]``: DIR (default ``.venv``) with ``bin/activate`` and ``bin/python``, ``python3``,
    ``pytest``, ``py.test`` that are the runtime's; an existing DIR is reused as uv does with ``--allow-existing``."""
    rest = []
    index = 0
    while index < len(args):
        word = args[index]
        if word in UV_VALUE_OPTIONS or word in ("--prompt", "--seed-version"):
            index += 2
            continue
        if not word.startswith("-"):
            rest.append(word)
        index += 1
    target = os.path.abspath(rest[0] if rest else ".venv")
    runtime_bin = os.path.join(os.path.dirname(HERE), "bin")
    bin_dir = os.path.join(target, "bin")
    try:
        os.makedirs(bin_dir, exist_ok=True)
        with open(os.path.join(bin_dir, "activate"), "w") as handle:
            handle.write(VENV_ACTIVATE % target)
        for name, runtime_name in (("python", "python"), ("python3", "python3"), ("pytest", "pytest"),
                                   ("py.test", "py.test")):
            link = os.path.join(bin_dir, name)
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(os.path.join(runtime_bin, runtime_name), link)
    except OSError as exc:
        log("uv venv", "unsupported", "uv venv %s: %s" % (target, exc))
        return 1
    log("uv", "substituted", "uv venv %s: a stand-in venv whose python and pytest are the verifier runtime's" % target)
    return 0


def parse_uv_options(args):
    """(python, with-names, from-name, rest) of ``uvx``-style arguments."""
    python, withs, source = None, [], None
    index = 0
    while index < len(args):
        word = args[index]
        value = None
        if word in ("-w", "--with") and index + 1 < len(args):
            value, index = args[index + 1], index + 2
        elif word.startswith("--with="):
            value, index = word.split("=", 1)[1], index + 1
        elif word.startswith("-w") and len(word) > 2:
            value, index = word[2:], index + 1
        elif word in ("-p", "--python") and index + 1 < len(args):
            python, index = args[index + 1], index + 2
            continue
        elif word.startswith("--python="):
            python, index = word.split("=", 1)[1], index + 1
            continue
        elif word == "--from" and index + 1 < len(args):
            source, index = requirement_name(args[index + 1]), index + 2
            continue
        elif word == "--":
            return python, withs, source, args[index + 1:]
        elif word in UV_VALUE_OPTIONS:
            index += 2
            continue
        elif word.startswith("-"):
            index += 1
            continue
        else:
            return python, withs, source, args[index:]
        for part in (value or "").split(","):
            name = requirement_name(part)
            if name:
                withs.append(name)
    return python, withs, source, []


def uvx(tool, args, info):
    python, withs, source, rest = parse_uv_options(args)
    note_python(tool, python)
    if not rest:
        log(tool, "unsupported", "%s without a tool to run" % tool)
        return 2
    target = requirement_name(rest[0]) or rest[0]
    command = rest[0].split("==")[0].split("@")[0]
    names = list(dict.fromkeys(withs + [n for n in (source, target) if n]))
    check_requested(tool, info, names)
    wheels = selected_wheels(info, names)
    if command in ("pytest", "py.test"):
        return run_pytest(tool, rest[1:], wheels, info)
    if command in ("python", "python3"):
        return run_python(tool, rest[1:], wheels, info)
    return run_console_script(tool, command, rest[1:], wheels, info)


def uv(args, info):
    if not args or args[0] in ("--version", "-V", "version"):
        print("uv 0.0.0 (terminal-agent offline verifier stand-in)")
        return 0
    if args[:2] == ["tool", "run"]:
        return uvx("uv tool run", args[2:], info)
    if args[0] == "run":
        python, withs, _, rest = parse_uv_options(args[1:])
        note_python("uv run", python)
        check_requested("uv run", info, withs)
        wheels = selected_wheels(info, withs) if withs else selected_wheels(info, None)
        if not rest:
            log("uv run", "unsupported", "uv run without a command")
            return 2
        if rest[0] in ("pytest", "py.test"):
            return run_pytest("uv run", rest[1:], wheels, info)
        if os.path.basename(rest[0]).startswith("python"):
            return run_python("uv run", rest[1:], wheels, info)
        os.execvp(rest[0], rest)
    if args[:2] == ["pip", "install"] or args[0] == "add":
        names = [requirement_name(a) for a in args[2:] if not a.startswith("-")]
        check_requested("uv pip install", info, [n for n in names if n])
        log("uv", "skipped", "uv %s: served by the verifier runtime" % " ".join(args[:2]))
        return 0
    if args[0] == "venv":
        return make_venv(args[1:])
    if args[0] in ("init", "python", "cache", "self", "sync", "lock", "tool", "pip"):
        log("uv", "skipped", "uv %s: nothing to do in the verifier runtime" % " ".join(args[:2]))
        return 0
    log("uv", "unsupported", "uv %s: not supported by the offline stand-in" % " ".join(args[:3]))
    return 2


def main(argv):
    tool, args = argv[1], list(argv[2:])
    info = manifest()
    if tool == "uvx":
        return uvx("uvx", args, info)
    if tool == "uv":
        return uv(args, info)
    if tool in ("pytest", "py.test"):
        return run_pytest(tool, args, selected_wheels(info, None), info)
    if tool == "python":
        return python_command(args, info)
    log(tool, "unsupported", "unknown stand-in %s" % tool)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
