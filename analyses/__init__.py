"""Audit the numbers behind AI-training hardware claims: data, models, claim checks, CLI."""

__version__ = "0.1.0"
