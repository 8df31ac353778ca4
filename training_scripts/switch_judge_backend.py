"""Change the judge of a running training job, or show the current one.

    python training_scripts/switch_judge_backend.py litellm openai/gpt-4o-mini --weight 0.35 --check
    python training_scripts/switch_judge_backend.py claude-cli --model sonnet
    python training_scripts/switch_judge_backend.py none
    python training_scripts/switch_judge_backend.py show

The control file is ``--control-file`` or ``$TERMINAL_AGENT_JUDGE_CONTROL`` (an absolute path the
job reads; on a shared filesystem every node sees the switch). Same as ``terminal-agent judge switch|show``.
"""

import sys

from terminal_agent.cli import main

if __name__ == "__main__":
    arguments = sys.argv[1:]
    command = ["show", *arguments[1:]] if arguments[:1] == ["show"] else ["switch", *arguments]
    sys.argv = [sys.argv[0], "judge", *command]
    main()
