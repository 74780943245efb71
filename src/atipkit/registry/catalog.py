"""The catalog (RFC 0.6 §4.4.4) and the coverage metrics (§4.10.5) of a static registry,
computed from the shims it holds.

Pure functions over `ShimInfo`: the same shims give the same dicts, keys in the same order,
so a rebuilt registry is byte-identical and publishing it uploads nothing. Tools are
ordered by name, versions oldest first in natural order (`8.10` after `8.9`), platforms
and hashes by name.

Two rules the RFC leaves open:

- A shim without `binary.platform` describes a binary that is not tied to one (a script,
  say); it is listed under the platform key `"any"`, and a tool that has one misses no
  platform in the coverage.
- One name, version and platform with two shims (two builds of one release) cannot both
  be listed: the catalog names the smaller hash and the build reports a `Duplicate`. Both
  shims are still served by hash; `totalShims` counts every shim in the registry.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from atipkit.model import Tool

ANY_PLATFORM = "any"
"""The catalog's platform key for a shim whose binary names no platform."""
UNKNOWN_SOURCE = "unknown"
"""The coverage's `by_source` key for a tool whose shim names no `trust.source`."""

_NUMBERS = re.compile(r"([0-9]+)")


class ShimInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What the catalog and the coverage need to know of one shim."""

    hash: str
    name: str
    version: str
    platform: str = ANY_PLATFORM
    description: str = ""
    homepage: str = ""
    source: str = UNKNOWN_SOURCE

    @classmethod
    def of(cls, tool: Tool) -> ShimInfo:
        """The facts of a validated shim; `binary` wins over the root fields, as it is
        what the shim's hash names."""
        if not tool.binary:
            raise ValueError(f"{tool.name} is not a shim: it has no binary block")
        binary = tool.binary
        return cls(
            hash=binary.hash,
            name=binary.name,
            version=binary.version or tool.version,
            platform=binary.platform or ANY_PLATFORM,
            description=tool.description,
            homepage=tool.homepage or "",
            source=(tool.trust.source if tool.trust else None) or UNKNOWN_SOURCE,
        )


class Duplicate(msgspec.Struct, frozen=True, kw_only=True):
    """Several shims for one name, version and platform: the catalog lists `listed`."""

    name: str
    version: str
    platform: str
    listed: str
    unlisted: list[str]

    def message(self) -> str:
        return (
            f"{self.name} {self.version} ({self.platform}) has {len(self.unlisted) + 1} shims; "
            f"the catalog lists {self.listed}, not {', '.join(self.unlisted)} "
            "(all are served by hash)"
        )


def version_key(version: str) -> tuple[Any, ...]:
    """Natural order: digit runs compare as numbers, so `1.10` follows `1.9`. The text
    itself breaks ties (`01` and `1`), so the order is total and stable."""
    parts = tuple(
        (0, int(part), "") if part.isascii() and part.isdigit() else (1, 0, part)
        for part in _NUMBERS.split(version)
    )
    return (parts, version)


def _by_name(shims: Iterable[ShimInfo]) -> dict[str, list[ShimInfo]]:
    tools: dict[str, list[ShimInfo]] = defaultdict(list)
    for shim in shims:
        tools[shim.name].append(shim)
    return {name: tools[name] for name in sorted(tools)}


def _lead(shims: Sequence[ShimInfo]) -> ShimInfo:
    """The shim that speaks for its tool: newest version, then first platform and hash."""
    newest = max(version_key(s.version) for s in shims)
    return min(
        (s for s in shims if version_key(s.version) == newest),
        key=lambda s: (s.platform, s.hash),
    )


def build_catalog(
    shims: Sequence[ShimInfo], *, updated: str
) -> tuple[dict[str, Any], list[Duplicate]]:
    """`shims/index.json`: name → {description, homepage, versions: version → platform →
    hash}, and the duplicates it could not list."""
    tools: dict[str, Any] = {}
    duplicates: list[Duplicate] = []
    for name, own in _by_name(shims).items():
        lead = _lead(own)
        versions: dict[str, dict[str, str]] = {}
        for version in sorted({s.version for s in own}, key=version_key):
            platforms: dict[str, str] = {}
            for platform in sorted({s.platform for s in own if s.version == version}):
                hashes = sorted(
                    {s.hash for s in own if s.version == version and s.platform == platform}
                )
                platforms[platform] = hashes[0]
                if len(hashes) > 1:
                    duplicates.append(
                        Duplicate(
                            name=name,
                            version=version,
                            platform=platform,
                            listed=hashes[0],
                            unlisted=hashes[1:],
                        )
                    )
            versions[version] = platforms
        entry: dict[str, Any] = {"description": lead.description}
        newest_first = sorted(own, key=lambda s: version_key(s.version), reverse=True)
        homepage = lead.homepage or next((s.homepage for s in newest_first if s.homepage), "")
        if homepage:
            entry["homepage"] = homepage
        entry["versions"] = versions
        tools[name] = entry
    catalog = {"version": "1", "updated": updated, "tools": tools, "totalShims": len(shims)}
    return catalog, duplicates


def build_coverage(shims: Sequence[ShimInfo], platforms: Iterable[str] = ()) -> dict[str, Any]:
    """`coverage.json` in the shape of §4.10.5. `platforms` (counted per tool, any version)
    and `by_source` (the source of the tool's newest shim) count tools, as the RFC's
    figures do; `missing` lists, per tool, the platforms asked for (or, when none are
    given, every platform some shim names) for which no version has a shim."""
    tools = _by_name(shims)
    per_platform: Counter[str] = Counter()
    by_source: Counter[str] = Counter()
    covered: dict[str, set[str]] = {}
    for name, own in tools.items():
        covered[name] = {s.platform for s in own}
        per_platform.update(covered[name])
        by_source[_lead(own).source] += 1
    wanted = sorted(set(platforms)) or sorted(set(per_platform) - {ANY_PLATFORM})
    missing = [
        {"name": name, "platforms": gaps}
        for name, have in covered.items()
        if ANY_PLATFORM not in have and (gaps := [p for p in wanted if p not in have])
    ]
    return {
        "coverage": {
            "tracked_tools": len(tools),
            "total_shims": len(shims),
            "platforms": dict(sorted(per_platform.items())),
            "by_source": dict(sorted(by_source.items())),
            "missing": missing,
        }
    }
