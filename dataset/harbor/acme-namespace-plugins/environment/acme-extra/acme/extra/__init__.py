"""Extra acme plugins."""
