"""pgq-audit for Python workers: the runtime checkout guard (`pgq_audit.guard`)."""

__version__ = "0.1.0"
