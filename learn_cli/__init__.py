"""learn: a local, cross-project learning engine for coding agents."""

__version__ = "0.1.0"
