"""acme core: the plugin runner."""
