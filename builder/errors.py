"""The package's errors: one home for every exception the tools raise on purpose."""

from __future__ import annotations

__all__ = ["BuildError"]


class BuildError(ValueError):
    """Inputs or settings that cannot make a tiny dataset (mismatched ids, missing columns...)."""
