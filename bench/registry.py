"""Looking shims up in a remote registry served by a real nginx on loopback.

    python bench/registry.py [--shims N] [--runs N] [--json]

A registry of N shims (default 5 000) is written to a temporary directory and served by
nginx (`apt-get install nginx`), then, in one run, side by side (medians, milliseconds):
- a cold lookup: manifest and shim fetched, checked (identity, schema) and cached;
- a cached lookup within the TTL: the cache file read and checked, no request;
- a revalidation after the TTL (`refresh`): a conditional request answered 304;
- for scale: reading and checking the same shim from a local file (`validate_file`), and
  one GET of it through atipkit's guarded `Fetcher` (size cap, deadline, redirect rules)
  next to a bare `httpx` GET;
- building a registry of the N shims (every shim validated, catalog, coverage, page),
  rebuilding it unchanged, publishing it to a local directory, and publishing it again
  when nothing changed, next to creating as many files with nothing else done (medians of
  `--build-runs`, seconds).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _synth import median_ms

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.servers import nginx

from atipkit._http import Fetcher
from atipkit.registry import RemoteRegistries, RemoteRegistry, Settings
from atipkit.validation import validate_file


def shim(index: int) -> tuple[str, dict]:
    hex_digits = f"{index:064x}"
    return hex_digits, {
        "atip": {"version": "0.6"},
        "binary": {"hash": f"sha256:{hex_digits}", "name": f"tool{index}", "version": "1.0"},
        "trust": {"source": "community"},
        "description": "A benchmark tool",
        "commands": {
            "": {
                "description": "Run it",
                "options": [
                    {
                        "name": f"opt{i}",
                        "flags": [f"--opt{i}"],
                        "type": "string",
                        "description": "An option",
                    }
                    for i in range(12)
                ],
                "effects": {"network": False, "filesystem": {"write": False}},
            }
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shims", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--build-runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
        root = Path(tmp) / "registry"
        folder = root / "shims" / "sha256"
        folder.mkdir(parents=True)
        hashes = []
        for index in range(args.shims):
            hex_digits, document = shim(index)
            (folder / f"{hex_digits}.json").write_text(json.dumps(document))
            hashes.append(hex_digits)
        with nginx(root, Path(tmp) / "nginx") as server:
            registry = RemoteRegistry(url=server.url, name="bench")
            settings = Settings(registries=[registry])
            cold_hashes = iter(hashes)
            with RemoteRegistries(settings, cache_dir=Path(tmp) / "cold") as remote:
                cold = median_ms(lambda: remote.lookup(next(cold_hashes)), args.runs)
            probe = hashes[0]
            with RemoteRegistries(settings, cache_dir=Path(tmp) / "cold") as remote:
                cached = median_ms(lambda: remote.lookup(probe), args.runs)
            with RemoteRegistries(settings, cache_dir=Path(tmp) / "cold", refresh=True) as r:
                revalidated = median_ms(lambda: r.lookup(probe), args.runs)
            local = median_ms(lambda: validate_file(folder / f"{probe}.json"), args.runs)
            import httpx

            url = f"{server.url}/shims/sha256/{probe}.json"
            with httpx.Client() as plain, Fetcher() as guarded:
                floor = median_ms(lambda: plain.get(url).content, args.runs)
                fetched = median_ms(lambda: guarded.get(url, max_bytes=1 << 24), args.runs)
        building = _building(root / "shims", Path(tmp), args.build_runs)
    figures = {
        "cold lookup (manifest cached, shim fetched, checked, cached)": cold,
        "cached lookup within the TTL (no request)": cached,
        "revalidation after the TTL (304 Not Modified)": revalidated,
        "reading and checking the same shim from a local file": local,
        "one GET through atipkit's guarded Fetcher, unchecked": fetched,
        "the floor: a bare httpx GET of the same shim, unchecked": floor,
    }
    if args.json:
        print(json.dumps({"shims": args.shims, "median_ms": figures, "median_s": building}))
        return
    print(
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"{args.shims} shims served by nginx on loopback, {args.runs} runs each"
    )
    for what, value in figures.items():
        print(f"  {what:62} {value:8.2f} ms")
    for what, value in building.items():
        print(f"  {what:62} {value:8.2f} s")


def _create_files(src: Path, into: Path) -> None:
    """What writing the files costs on this disk, with nothing else done."""
    into.mkdir()
    for path in (src / "sha256").iterdir():
        (into / path.name).write_bytes(path.read_bytes())


def _building(src: Path, tmp: Path, runs: int) -> dict[str, float]:
    """Medians of `runs` fresh builds and publishes, each into new directories."""
    from atipkit.registry.build import build_registry
    from atipkit.registry.publish import publish

    names = (
        "build a registry",
        "rebuild it, unchanged",
        "publish it to a directory",
        "publish it again, unchanged",
        "the floor: create as many files with open/write",
    )
    samples: dict[str, list[float]] = {name: [] for name in names}
    for run in range(runs):
        site, www = tmp / f"site{run}", str(tmp / f"www{run}")
        steps = (
            lambda site=site: build_registry(src, site),
            lambda site=site: build_registry(src, site),
            lambda site=site, www=www: publish(site, www),
            lambda site=site, www=www: publish(site, www),
            lambda run=run: _create_files(src, tmp / f"floor{run}"),
        )
        for name, step in zip(names, steps, strict=True):
            started = time.perf_counter()
            step()
            samples[name].append(time.perf_counter() - started)
    return {
        f"{name}, the same shims": statistics.median(values) for name, values in samples.items()
    }


if __name__ == "__main__":
    main()
