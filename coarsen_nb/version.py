"""The package version, in a module of its own: the runtime (the generated module's header) and the
magic (its cache key) read it without importing the package ``__init__`` that imports them."""

__version__ = "0.1.0"
