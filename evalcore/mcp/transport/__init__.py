"""Transport layer: Streamable HTTP (aiohttp) and stdio behind one interface (`base.Transport`)."""
