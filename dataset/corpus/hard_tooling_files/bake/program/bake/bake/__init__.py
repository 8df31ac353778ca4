"""bake: a small make-like incremental build tool.

``parser`` reads a Bakefile into rules and variables, ``variables`` expands ``$(NAME)`` references and the
automatic variables, ``graph`` resolves the goals into a dependency graph (explicit and pattern rules),
``filestat`` and ``state`` hold what is known about files (modification times, content hashes, the recorded
signature of each build), ``staleness`` decides what is out of date, ``executor`` runs the recipes (in parallel
with ``-j``) and ``cli`` is ``python3 -m bake``.
"""

__version__ = "1.4.0"
