"""Files over the shell server's channel (Docker backend): what an archive did, kept exactly.

The self-check suite (``test_self_check.py``) already runs every file check through this path;
these are the properties that the archive gave for free and a direct write must keep.
"""

from __future__ import annotations

import os

import pytest

from terminal_agent.sandbox.docker.archive_files import CHANNEL_FILE_MAX_BYTES, server_has_file_ops

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not server_has_file_ops(), reason="this shell server has no read_file/write_file ops"),
]


def test_files_travel_over_the_channel_when_the_server_is_root(small_sandbox):
    assert small_sandbox.server_info["uid"] == 0
    data = bytes(range(256)) * 16  # every byte value, 4 KiB
    small_sandbox.write_file("/tmp/channel/every-byte.bin", data, mode=0o640)
    assert small_sandbox.read_file("/tmp/channel/every-byte.bin") == data
    assert small_sandbox.exec("stat -c '%a %u %g' /tmp/channel/every-byte.bin", 10).output == "640 0 0\n"


def test_a_write_replaces_a_symlink_not_its_target(small_sandbox):
    assert small_sandbox.exec("echo keep > /tmp/target.txt && ln -sfn /tmp/target.txt /tmp/link.txt", 10).ok
    small_sandbox.write_file("/tmp/link.txt", b"new")
    assert small_sandbox.exec("cat /tmp/target.txt; test -L /tmp/link.txt || echo plain", 10).output == "keep\nplain\n"
    assert small_sandbox.read_file("/tmp/link.txt") == b"new"


def test_a_write_under_a_restrictive_umask_gets_the_mode_asked_for(small_sandbox):
    small_sandbox.write_file("/tmp/modes/script.sh", b"#!/bin/sh\n", mode=0o4755)
    small_sandbox.write_file("/tmp/modes/secret", b"s", mode=0o600)
    listing = small_sandbox.exec("stat -c '%a' /tmp/modes/script.sh /tmp/modes/secret", 10).output.split()
    assert listing == ["4755", "600"]


def test_a_file_above_the_channel_limit_still_round_trips(small_sandbox):
    data = os.urandom(CHANNEL_FILE_MAX_BYTES + 4096)  # written through an archive
    small_sandbox.write_file("/tmp/big.bin", data)
    assert small_sandbox.exec("stat -c %s /tmp/big.bin", 10).output.strip() == str(len(data))
    assert small_sandbox.read_file("/tmp/big.bin") == data
    assert small_sandbox.exec("rm /tmp/big.bin", 10).ok
