"""Placeholder: filled in by issue 10."""
