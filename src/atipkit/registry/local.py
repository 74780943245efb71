"""The local registry (RFC 0.6 §4.2-4.3, SPEC-NOTES 10-13).

`registry.json` maps tool names to binary hashes; metadata lives content-addressed beside
it: native metadata in `tools/sha256-<hex>.json`, shims in `shims/sha256/<hex>.json`,
user overrides in the config directory's `overrides/sha256/<hex>.json`.

Readers never lock. Writers take `registry.json.lock`, read the current file, change it,
bump its counter and replace it atomically, so concurrent scans lose nothing and a writer
killed mid-write leaves the previous file intact. The 0.1 form and the "version 1" list
form of other implementations are read, never written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from atipkit import _jsontext, paths
from atipkit._atomic import write_atomic
from atipkit._clock import timestamp, utcnow
from atipkit.errors import AtipError, DocumentError
from atipkit.model import Tool, dumps, load
from atipkit.trust.digest import sha256_hex

Source = Literal["native", "shim", "inferred", "manual"]
MAX_AGE = dt.timedelta(days=7)
MAX_INDEX_BYTES = 32 * 1024 * 1024
"""The largest registry.json read: ~110 000 tools at ~300 bytes each (45 times a machine
with 2 450 executables), parsed in 0.2 s and 80 MB. A larger file is refused before it is
read (decision 233): a 245 MB one made `atip list` use 1.3 GB."""


class RegistryError(AtipError):
    """registry.json exists but cannot be read as any known form."""


class Entry(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """What the registry knows of one tool. `size`, `mtimeNs` and `inode` fingerprint the
    binary, so a rescan knows it is unchanged without hashing it again."""

    path: str
    hash: str | None = None
    source: Source = "native"
    version: str | None = None
    last_checked: str | None = None
    shim_registry: str | None = None
    size: int | None = None
    mtime_ns: int | None = None
    inode: int | None = None

    def fresh(self, now: dt.datetime | None = None) -> bool:
        """Checked within `MAX_AGE` (RFC 0.1 §3.5.1: 7 days)."""
        if not self.last_checked:
            return False
        checked = dt.datetime.fromisoformat(self.last_checked.replace("Z", "+00:00"))
        return (now or utcnow()) - checked < MAX_AGE


class RegistryFile(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    version: str  # always written: it tells the readers of other implementations the form
    updated: str | None = None
    counter: int = 0
    agent: dict[str, Any] | None = None
    tools: dict[str, Entry] = {}


class LocalRegistry:
    """The registry under a data directory (default `$XDG_DATA_HOME/agent-tools`)."""

    def __init__(self, data_dir: Path | None = None, config_dir: Path | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir else paths.data_dir()
        self.config_dir = Path(config_dir) if config_dir else paths.config_dir()

    @property
    def index_path(self) -> Path:
        return self.data_dir / "registry.json"

    def read(self) -> RegistryFile:
        """The current index, lock-free; empty when there is none yet."""
        try:
            raw = _jsontext.read_bytes(self.index_path, max_bytes=MAX_INDEX_BYTES)
        except FileNotFoundError:
            return RegistryFile(version="2")
        except DocumentError as exc:  # too large: refused before reading
            raise RegistryError(f"{self.index_path}: {exc.problems[0].message}") from None
        except OSError as exc:
            raise RegistryError(f"{self.index_path}: cannot be read: {exc.strerror}") from None
        try:
            return parse_index(_jsontext.decode(raw, str(self.index_path)))
        except (DocumentError, msgspec.ValidationError, ValueError) as exc:
            raise RegistryError(f"{self.index_path}: cannot be read: {exc}") from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[RegistryFile]:
        """Lock, read the latest index, let the caller change it, write it atomically."""
        from filelock import FileLock

        self.data_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.index_path) + ".lock"):
            # under the lock nobody else is writing: temp files are a killed writer's
            for stale in self.data_dir.glob(f".{self.index_path.name}.*.tmp"):
                stale.unlink(missing_ok=True)
            index = self.read()
            yield index
            index.version = "2"
            index.counter += 1
            index.updated = timestamp()
            write_atomic(self.index_path, encode_index(index))

    # -- content-addressed files -------------------------------------------------------

    def metadata_path(self, hash_: str) -> Path:
        return self.data_dir / "tools" / f"sha256-{sha256_hex(hash_)}.json"

    def shim_path(self, hash_: str) -> Path:
        return self.data_dir / "shims" / "sha256" / f"{sha256_hex(hash_)}.json"

    def override_path(self, hash_: str) -> Path:
        return self.config_dir / "overrides" / "sha256" / f"{sha256_hex(hash_)}.json"

    def store_metadata(self, hash_: str, tool: Tool) -> Path:
        path = self.metadata_path(hash_)
        write_atomic(path, dumps(tool))
        return path

    def load_metadata(self, hash_: str) -> Tool | None:
        """Cached native metadata for a binary; None if absent or no longer loadable."""
        try:  # probed output was capped at the same size: a larger file is not ours
            return load(self.metadata_path(hash_))
        except (FileNotFoundError, DocumentError):
            return None


def encode_index(index: RegistryFile) -> bytes:
    """registry.json as written: defaults left out, but every entry says its `source`,
    "native" included, because the RFC's own lookup reads `entry["source"]` (§4.3)."""
    data = msgspec.to_builtins(index)
    order = Entry.__struct_encode_fields__  # path, hash, source, ...: the RFC's order
    for name, written in data.get("tools", {}).items():
        written["source"] = index.tools[name].source
        data["tools"][name] = {key: written[key] for key in order if key in written}
    return msgspec.json.format(msgspec.json.encode(data))


def parse_index(data: Any) -> RegistryFile:
    """registry.json in any known form → the version 2 form."""
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    version = str(data.get("version", ""))
    if version == "2":
        return msgspec.convert(data, RegistryFile)
    if version == "0.1":  # RFC 0.1 §3.3.2: no hashes; entries are refreshed on first use
        tools = {
            name: Entry(
                path=entry.get("path", ""),
                source=entry["source"]
                if entry.get("source") in ("native", "shim", "inferred", "manual")
                else "native",
                version=entry.get("version"),
                last_checked=entry.get("lastChecked"),
            )
            for name, entry in (data.get("tools") or {}).items()
            if isinstance(entry, dict)
        }
        return RegistryFile(version="2", updated=data.get("updated"), tools=tools)
    if version == "1":  # other implementations: a list of entries, camelCase or snake_case
        tools = {}
        for entry in data.get("tools") or data.get("entries") or []:
            if not isinstance(entry, dict) or "name" not in entry:
                continue

            def get(*names: str, e: dict[str, Any] = entry) -> Any:
                return next((e[n] for n in names if e.get(n) is not None), None)

            hash_ = get("hash", "binaryHash", "binary_hash", "sha256")
            if hash_ and not str(hash_).startswith("sha256:"):
                hash_ = f"sha256:{hash_}"
            source = get("source")
            tools[entry["name"]] = Entry(
                path=get("path", "binaryPath", "binary_path") or "",
                hash=hash_,
                source=source if source in ("native", "shim", "inferred", "manual") else "native",
                version=get("version"),
                last_checked=get("lastChecked", "last_checked"),
            )
        return RegistryFile(version="2", updated=data.get("updated"), tools=tools)
    raise ValueError(f"unknown registry version {version!r}")
