"""Exact ATIP metadata from the objects that define a CLI (Click today; argparse and Typer
follow), for authors who want `--agent` without writing JSON by hand."""
