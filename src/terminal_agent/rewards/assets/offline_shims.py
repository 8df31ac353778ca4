"""Shims for the install steps of a network-installing ``tests/test.sh``, in the verifier runtime.

Started by the wrappers in ``VERIFIER_DIR/shims`` (offline: on PATH in front of the image's programs) or
``VERIFIER_DIR/masks`` (where the agent added a program of that name: in front of it) as
``PYTHON -I -S -B .../runtime/offline_shims.py TOOL ARGS``. ``$TA_VERIFIER_MODE`` is ``offline`` or
``network``. The real program is looked up on the standard PATH, skipping the files the agent added
(``untrusted`` in the manifest) and this runtime.

Offline:
* ``apt-get``/``apt`` ``update``: skipped. ``install PKG...``: a package the image has is fine; ``curl``,
  ``wget``, ``ca-certificates`` and ``python3-pip`` are skipped (the runtime stands in for the uv installer
  download and for ``pip install``); any other is a request the verifier cannot have offline (logged
  ``needs_network``, exit 100). Anything else
  goes to the real program.
* ``curl``/``wget`` of the uv installer (``astral.sh/.../install.sh``): a no-op installer script (uv and uvx
  are already on PATH). Any other URL goes to the real program; a failure to reach a host that is not
  loopback is logged ``needs_network``.
* ``pip``/``pip3 install``: what the runtime or the image provides is fine; anything else ``needs_network``.

With a network every call goes to the real program unchanged.
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import uv_standin  # noqa: E402 - the runtime's helpers (log, manifest, names)

STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
STANDS_IN = {"curl", "wget", "ca-certificates", "python3-pip"}
NETWORK_EXITS = {"curl": {5, 6, 7, 28, 35, 56}, "wget": {4, 5}}
NOOP_INSTALLER = (
    "#!/bin/sh\n"
    "echo 'terminal-agent verifier runtime: uv installer skipped (offline; uv and uvx are on PATH)'\n"
    "mkdir -p \"$HOME/.local/bin\" 2>/dev/null\n"
    "[ -f \"$HOME/.local/bin/env\" ] || : > \"$HOME/.local/bin/env\"\n"
    "exit 0\n"
)


def real_program(name, info):
    untrusted = set(info.get("untrusted", []))
    own = os.path.dirname(HERE)
    for directory in STANDARD_PATH:
        path = os.path.join(directory, name)
        if path in untrusted or path.startswith(own + "/"):
            continue
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def passthrough(name, args, info):
    program = real_program(name, info)
    if program is None:
        uv_standin.log(name, "missing", "%s is not in the image" % name)
        return 127
    return subprocess.call([program] + list(args))


def is_uv_installer(url):
    return bool(re.match(r"^https?://(www\.)?astral\.sh/uv/([^/]+/)?install\.sh", url))


def is_loopback(url):
    host = re.sub(r"^[a-z]+://", "", url).split("/", 1)[0].rsplit("@", 1)[-1]
    host = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return host in ("localhost", "[::1]", "0.0.0.0") or host.startswith("127.")


def fetch(name, args, info):
    urls = [a for a in args if "://" in a]
    if any(is_uv_installer(u) for u in urls):
        target = None
        for index, word in enumerate(args):
            if name == "curl" and word in ("-o", "--output") and index + 1 < len(args):
                target = args[index + 1]
            elif name == "wget":
                match = re.match(r"^-[a-zA-Z]*O(.*)$", word)
                if match:
                    target = match.group(1) or (args[index + 1] if index + 1 < len(args) else "-")
                elif word.startswith("--output-document="):
                    target = word.split("=", 1)[1]
        if name == "wget" and target is None:
            target = "install.sh"
        if target in (None, "-"):
            sys.stdout.write(NOOP_INSTALLER)
            sys.stdout.flush()
        else:
            with open(target, "w") as handle:
                handle.write(NOOP_INSTALLER)
        uv_standin.log(name, "skipped", "%s %s: the uv installer (the runtime provides uv and uvx)" % (name, urls[0]))
        return 0
    program = real_program(name, info)
    if program is None:
        if urls and all(is_loopback(u) for u in urls):
            uv_standin.log(name, "missing", "%s is not in the image (asked for %s)" % (name, " ".join(urls)))
        else:
            uv_standin.log(name, "needs_network", "%s %s: %s is not in the image and there is no network" % (name, " ".join(urls), name))
        return 127
    code = subprocess.call([program] + list(args))
    remote = [u for u in urls if not is_loopback(u)]
    if code in NETWORK_EXITS[name] and remote:
        uv_standin.log(name, "needs_network", "%s %s failed (exit %d): no network" % (name, " ".join(remote), code))
    return code


def apt(name, args, info):
    words = [a for a in args if not a.startswith("-")]
    command = words[0] if words else ""
    if command in ("update", "clean", "autoclean", "autoremove"):
        uv_standin.log(name, "skipped", "%s %s (offline)" % (name, command))
        return 0
    if command != "install":
        return passthrough(name, args, info)
    dpkg_query = real_program("dpkg-query", info)
    hard = []
    for package in words[1:]:
        package = re.split(r"[=:]", package, 1)[0]
        installed = False
        if dpkg_query:
            done = subprocess.run([dpkg_query, "-W", "-f=${Status}", package], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            installed = done.returncode == 0 and done.stdout.decode().strip().endswith("installed")
        if installed:
            continue
        if package in STANDS_IN:
            uv_standin.log(name, "skipped", "%s install %s (offline; the runtime stands in for what it fetches)" % (name, package))
        else:
            hard.append(package)
    if hard:
        uv_standin.log(name, "needs_network", "%s install %s: not in the image and there is no network" % (name, " ".join(hard)))
        return 100
    return 0


def requirement_lines(path):
    try:
        with open(path) as handle:
            return [line.split("#", 1)[0].strip() for line in handle if line.split("#", 1)[0].strip()]
    except OSError:
        return []


def pip(name, args, info):
    if "install" not in args:
        return passthrough(name, args, info)
    specs = []
    words = args[args.index("install") + 1:]
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-r", "--requirement") and index + 1 < len(words):
            specs += requirement_lines(words[index + 1])
            index += 2
            continue
        if word in ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "-t", "--target", "--prefix", "--root"):
            index += 2
            continue
        if not word.startswith("-"):
            specs.append(word)
        index += 1
    hard = []
    for spec in specs:
        requested = uv_standin.requirement_name(spec)
        if requested is None:
            continue
        if requested in info["provided"] or requested in info["bundled"]:
            uv_standin.log(name, "skipped", "%s install %s: served by the verifier runtime" % (name, spec))
        elif uv_standin.image_has(requested):
            continue
        else:
            hard.append(spec)
    if hard:
        uv_standin.log(name, "needs_network", "%s install %s: neither the runtime nor the image has it, and there is no network" % (name, " ".join(hard)))
        return 1
    return 0


def main(argv):
    name, args = os.path.basename(argv[1]), list(argv[2:])
    info = uv_standin.manifest()
    if os.environ.get("TA_VERIFIER_MODE") == "network":
        return passthrough(name, args, info)
    if name in ("curl", "wget"):
        return fetch(name, args, info)
    if name in ("apt-get", "apt"):
        return apt(name, args, info)
    if name in ("pip", "pip3"):
        return pip(name, args, info)
    return passthrough(name, args, info)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
