"""Models: litellm calls (any provider string), the offline `sim/` provider, tool formats, prices."""
