"""Trust: digests of binaries and metadata (signatures, provenance and trust levels follow)."""
