"""Packaged training presets (YAML data files, one per preset)."""
