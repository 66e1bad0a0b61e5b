"""Layer 1: golden-set runs through models with the server's tools, scored, repeated and stored."""
