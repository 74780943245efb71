"""Trust: digests of binaries and metadata, their signatures (minisign, ssh, sigstore),
SLSA provenance, and the trust level of a tool that puts them together. Names are loaded
on first use: the signature libraries only when a signature is checked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atipkit._exports import lazy_exports

if TYPE_CHECKING:
    from atipkit.trust.digest import BadHash as BadHash
    from atipkit.trust.digest import file_digest as file_digest
    from atipkit.trust.digest import hash_file as hash_file
    from atipkit.trust.digest import sha256_file as sha256_file
    from atipkit.trust.levels import Check as Check
    from atipkit.trust.levels import TrustReport as TrustReport
    from atipkit.trust.levels import verify_tool as verify_tool
    from atipkit.trust.signatures import SignatureResult as SignatureResult
    from atipkit.trust.signatures import SigningError as SigningError
    from atipkit.trust.signatures import minisign_sign as minisign_sign
    from atipkit.trust.signatures import minisign_verify as minisign_verify
    from atipkit.trust.signatures import sigstore_verify as sigstore_verify
    from atipkit.trust.signatures import ssh_sign as ssh_sign
    from atipkit.trust.signatures import ssh_verify as ssh_verify
    from atipkit.trust.slsa import ProvenanceResult as ProvenanceResult
    from atipkit.trust.slsa import verify_provenance as verify_provenance

__getattr__, __dir__ = lazy_exports(__name__, __file__)
