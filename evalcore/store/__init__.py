"""I/O layer: the DuckDB results store. All SQL of evalcore lives in this package."""
