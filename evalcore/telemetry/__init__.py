"""Layer 3: OpenTelemetry tracing of behaviour runs (set-up in `setup`, span names and attributes in `spans`)."""
