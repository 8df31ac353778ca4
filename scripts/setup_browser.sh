#!/usr/bin/env bash
# Headless Chromium for looking at the viewer in a real browser (tests/test_harbor_viewer_browser.py,
# scripts/screenshot_viewer.py): Debian's `chromium` package, driven by playwright (PyPI) through its
# executable_path. Never `playwright install`: that downloads browsers of its own.
#
#   bash scripts/setup_browser.sh        prints the Chromium executable on stdout
#
# As root with apt-get it installs what is missing (chromium: about 2 min and ~300 MB once; playwright: ~20 s).
# Exit 3: Chromium cannot be installed on this machine (not root, no apt-get, no package); the reason is on stderr.
# Idempotent: when both are there it only checks (a fraction of a second).
#
# Environment: PYTHON (the interpreter playwright goes into, default python3), CHROMIUM (an executable to use
# instead of Debian's), PLAYWRIGHT_VERSION (default 1.65.2).
set -euo pipefail
PYTHON=${PYTHON:-$(command -v python3 || command -v python)}
PLAYWRIGHT_VERSION=${PLAYWRIGHT_VERSION:-1.65.2}
CANNOT=3
log() { printf '[browser] %s\n' "$*" >&2; }

find_chromium() {
    local candidate
    for candidate in "${CHROMIUM:-}" chromium chromium-browser; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1; then command -v "$candidate"; return; fi
    done
    return 1
}

install_chromium() {
    if ! command -v apt-get >/dev/null 2>&1; then log "no apt-get to install Debian's chromium"; exit $CANNOT; fi
    if [ "$(id -u)" -ne 0 ]; then log "installing chromium needs root (apt-get install chromium)"; exit $CANNOT; fi
    log "apt-get install chromium (about 2 min once) ..."
    # a fresh machine's package lists may be empty or stale: update only when the first try fails
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; then
        apt-get update -q >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
            || { log "apt-get install chromium failed (apt-cache policy chromium says what is offered)"; exit $CANNOT; }
    fi
}

if ! chromium=$(find_chromium); then
    install_chromium
    chromium=$(find_chromium) || { log "chromium installed but not on PATH"; exit $CANNOT; }
    "$chromium" --version >/dev/null 2>&1 || { log "$chromium does not start (--version failed)"; exit $CANNOT; }
fi

have=$("$PYTHON" -c 'import importlib.metadata as m
try: print(m.version("playwright"))
except m.PackageNotFoundError: print("")' 2>/dev/null || true)
if [ "$have" != "$PLAYWRIGHT_VERSION" ]; then
    log "pip install playwright==$PLAYWRIGHT_VERSION (the Python driver only; the browser is Debian's) ..."
    "$PYTHON" -m pip install -q --disable-pip-version-check "playwright==$PLAYWRIGHT_VERSION" 2>&1 \
        | grep -v -e "^WARNING: Location" -e "^WARNING: Running pip as" >&2 || true
    "$PYTHON" -c "import playwright.sync_api" || { log "playwright does not import"; exit $CANNOT; }
fi
echo "$chromium"
