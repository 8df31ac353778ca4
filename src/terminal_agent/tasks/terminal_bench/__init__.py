"""The ``tb`` task format: terminal-bench v1 task directories (``task.yaml``).

``format`` reads and writes one task directory (``read_tb_task``, ``write_tb_task``); ``compose`` reads its
``docker-compose.yaml`` as one container; ``test_requirements`` the packages its ``run-tests.sh`` installs for
the tests. The registry entry is ``TerminalBenchFormat`` in ``format_plugin``. Importing this
package imports none of them.
"""
