from terminal_agent.cli import main

main()
