"""`evalcore compare`: did a change to a server (or to what models see of it) help? Two arms, exact tests, a verdict."""
