"""atip's own error codes, beside the framework's (E1001 usage, E1002 a bad value, E1009 a
configuration file that cannot be used, E2003 declined at the prompt, ...). Stable: agents
branch on them, and the README lists them."""

NO_EXECUTABLE = "E3001"
"""No executable of that name on PATH, and no shim for it."""
NO_METADATA = "E3011"
"""The executable exists, but nothing describes it (no `--agent`, no shim)."""
BAD_REGISTRY = "E1010"
"""registry.json, an override or a pattern file cannot be read as what it should be."""
COMPROMISED = "E2010"
"""A binary whose hash is not the one its metadata (or the shim's lookup key) names."""
NOT_VERIFIED = "E2011"
"""A signature or provenance that was required, or asked for, does not verify."""
DENIED = "E2012"
"""A policy denies the call."""
MISSING_EXTRA = "E4010"
"""An optional package the command needs is not installed (`pip install atipkit[...]`)."""
