#!/usr/bin/env bash
# Make sure a Docker daemon answers. As root on a machine without Docker it installs Debian's
# docker.io (and debootstrap, for the offline base image) and starts dockerd in the background.
#
#   bash scripts/ensure_docker.sh        (or: source it, then call ensure_docker / apt_install)
#
# Environment: DOCKERD_LOG (default /var/log/dockerd.log), DOCKERD_WAIT_S (default 90).
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/dockerd.log}
DOCKERD_WAIT_S=${DOCKERD_WAIT_S:-90}

log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null 2>&1 || die "apt-get is not available to install: $*; install them yourself and rerun"
    is_root || die "installing $* needs root; rerun as root or install them yourself"
    if [ "$APT_UPDATED" -eq 0 ]; then
        log "apt-get update ..."
        apt-get update -q >/dev/null || die "apt-get update failed"
        APT_UPDATED=1
    fi
    log "apt-get install $* ..."
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null || die "apt-get install $* failed"
}

docker_answers() { timeout 20 docker info >/dev/null 2>&1; }

dockerd_running() {  # a live dockerd owns the pid file (a stale file after a kill does not count)
    local pid
    pid=$(cat /var/run/docker.pid 2>/dev/null) || return 1
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]
}

start_dockerd() {
    local pid=""
    if dockerd_running; then
        log "dockerd is already starting (pid $(cat /var/run/docker.pid)); waiting for it"
    else
        log "starting dockerd in the background (log: $DOCKERD_LOG) ..."
        mkdir -p "$(dirname "$DOCKERD_LOG")"
        # setsid + nohup: the daemon outlives this script and its terminal.
        if command -v setsid >/dev/null 2>&1; then
            nohup setsid dockerd >"$DOCKERD_LOG" 2>&1 </dev/null &
        else
            nohup dockerd >"$DOCKERD_LOG" 2>&1 </dev/null &
        fi
        pid=$!
    fi
    local waited=0
    until docker_answers; do
        local problem=""
        if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
            problem="dockerd exited after ${waited}s"
        elif [ "$waited" -ge "$DOCKERD_WAIT_S" ]; then
            problem="dockerd did not answer within ${DOCKERD_WAIT_S}s"
        fi
        if [ -n "$problem" ]; then
            log "last lines of $DOCKERD_LOG:"
            tail -n 30 "$DOCKERD_LOG" >&2 || true
            die "$problem (see $DOCKERD_LOG)"
        fi
        sleep 1
        waited=$((waited + 1))
    done
    log "dockerd answers (after ${waited}s)"
}

ensure_docker() {
    docker_answers && return 0
    if ! is_root; then
        die "no Docker daemon answers ('docker info' fails). Start Docker (e.g. 'sudo systemctl start docker'),
       make sure your user may use it (the docker group), or run this script as root to install and start docker.io."
    fi
    if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
        apt_install docker.io debootstrap
    fi
    start_dockerd
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    ensure_docker
fi
