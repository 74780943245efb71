"""Shared by the benchmarks: a synthesized kubectl-sized document and a median timer."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

TYPES = ["string", "integer", "boolean", "file", "enum", "url", "number", "directory"]


def synthesize(commands: int = 300, seed: int = 6) -> dict[str, Any]:
    """A kubectl-sized document: groups of subcommands, each with arguments, 6-10 options
    and effects; deterministic for a given seed."""
    rng = random.Random(seed)
    doc: dict[str, Any] = {
        "atip": {"version": "0.6", "features": ["partial-discovery", "interactive-effects"]},
        "name": "kube",
        "version": "1.31.0",
        "description": "Control a synthetic cluster",
        "globalOptions": [
            {
                "name": "namespace",
                "flags": ["-n", "--namespace"],
                "type": "string",
                "description": "Namespace",
            },
            {
                "name": "context",
                "flags": ["--context"],
                "type": "string",
                "description": "Cluster context",
            },
        ],
        "effects": {"network": True},
        "commands": {},
    }
    groups = commands // 10
    for g in range(groups):
        children: dict[str, Any] = {}
        for c in range(9):
            options = []
            for o in range(rng.randint(6, 10)):
                kind = rng.choice(TYPES)
                option: dict[str, Any] = {
                    "name": f"opt-{o}",
                    "flags": [f"--opt-{o}"],
                    "type": kind,
                    "description": f"Option {o} of command {g}.{c}, which controls a thing",
                }
                if kind == "enum":
                    option["enum"] = ["json", "yaml", "wide", "name"]
                    option["default"] = "json"
                options.append(option)
            children[f"cmd{c}"] = {
                "description": f"Do operation {c} on resource group {g}",
                "arguments": [{"name": "resource", "type": "string", "description": "Name"}],
                "options": options,
                "effects": {
                    "idempotent": rng.random() < 0.5,
                    "destructive": c == 8,
                    "filesystem": {"write": False},
                },
                "examples": [f"kube group{g} cmd{c} web --opt-0 x"],
            }
        doc["commands"][f"group{g}"] = {"description": f"Resource group {g}", "commands": children}
    return doc


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    fn()  # warm: compiled validators, caches, page faults
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)
