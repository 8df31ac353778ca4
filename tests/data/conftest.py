"""Fixture task directories live here; their pytest files are task tests, not ours."""

collect_ignore_glob = ["*"]
