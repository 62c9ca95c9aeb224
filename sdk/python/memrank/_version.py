"""The package version, in one place (pyproject.toml repeats it; a test checks they agree)."""

__version__ = "0.1.0"
