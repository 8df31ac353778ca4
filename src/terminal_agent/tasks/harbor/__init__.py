"""The ``harbor`` task format: Harbor / Terminal-Bench 2 task directories (``task.toml``).

``format`` reads and writes one task directory (``read_harbor_task``, ``write_harbor_task``); ``task_toml`` says
what each ``task.toml`` key becomes on a Task, and ``task_toml_writer`` writes a Task back as one. The registry
entry is ``HarborFormat`` in ``format_plugin``. Importing this package imports none of them.
"""
