"""Pure logic: scoring attempts against golden cases and reducing scores to metrics (Layer 1)."""
