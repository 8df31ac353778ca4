"""patchkit: line diffs, unified patches, a fuzzy patch applier and a three-way merge, in plain Python.

The modules, lowest first: ``lines`` (text as lines), ``myers`` (the shortest edit script), ``hunks`` (edits
grouped with context), ``format`` (writing unified diffs), ``parse`` (reading them), ``apply`` (applying hunks
with offsets and fuzz), ``merge3`` (three-way merge with conflict markers) and ``cli`` (``python3 -m patchkit``).
"""

__version__ = "0.9.2"
