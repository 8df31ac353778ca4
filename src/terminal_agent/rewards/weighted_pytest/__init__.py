"""The ``weighted_pytest`` grading mode: the task's pytest tests, each with its weight, on the grader's own pytest.

``grader`` holds the grader (``Grader``) and the grading-mode table's entry (``weighted_pytest_grader``);
``junit_scoring`` reads the JUnit report back and scores it; ``requirements`` provides the tests' own requirements
offline. What every mode shares is in :mod:`terminal_agent.rewards.grading`. Importing this package imports none
of them.
"""
