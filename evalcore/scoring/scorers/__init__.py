"""Pure logic: the registered attempt scorers, one module each (see `evalcore.scoring.registry`).

Every public module here is imported by the registry, which orders the scorers
by what they read (`after=`): nothing keeps a list of them.
"""
