"""Inferred metadata: help text and man pages when a tool does not speak ATIP."""
