"""One module per tool; each is registered by one line of :data:`terminal_agent.actions.base.TOOLS`
(``TOOLS.register_path("NAME", "terminal_agent.actions.tools.NAME:NameTool")``) and imported on first use."""
