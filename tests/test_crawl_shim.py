"""Assembling a crawled shim: the template over inference (options by name or flag,
arguments by name or position, `null` deletes), the manifest and the crawler over both."""

from __future__ import annotations

from atipkit.crawl.shim import assemble, merge_template, template_problems
from atipkit.crawl.sources import Artifact
from atipkit.validation import validate

HASH = "sha256:" + "ab" * 32
ARTIFACT = Artifact(
    source="github",
    platform="linux-arm64",
    version="8.5.0",
    url="https://example.com/curl.tar.gz",
    origin="github:curl/curl@curl-8_5_0/curl-linux-aarch64.tar.gz",
)

INFERRED = {
    "atip": {"version": "0.6"},
    "name": "curl",
    "version": "8.5.0-DEV",
    "description": "Usage: curl [options...] <url>",
    "binary": {"hash": "sha256:" + "cd" * 32, "name": "curl"},
    "trust": {"source": "inferred", "verified": False},
    "commands": {
        "": {
            "description": "Usage: curl [options...] <url>",
            "arguments": [{"name": "url", "type": "string", "description": "url"}],
            "options": [
                {"name": "request", "flags": ["-X", "--request"], "type": "string"},
                {"name": "silent", "flags": ["-s", "--silent"], "type": "boolean"},
                {"name": "X-2", "flags": ["--request-target"], "type": "string"},
                {"name": "output", "flags": ["-o"], "type": "file", "default": "-"},
            ],
        }
    },
    "_generation": {"method": "help-parsing+man", "confidence": "medium", "sources": ["--help"]},
}


def test_the_template_wins_option_by_option():
    template = {
        "commands": {
            "": {
                "description": "Transfer a URL",
                "arguments": [{"name": "target", "type": "url", "variadic": True}],
                "options": [
                    {"name": "method", "flags": ["-X"], "type": "enum", "enum": ["GET", "POST"]},
                    {"name": "output", "flags": ["-o", "--output"], "default": None},
                    {"name": "header", "flags": ["-H"], "type": "string", "variadic": True},
                ],
            }
        }
    }
    merged = merge_template(INFERRED, template)["commands"][""]
    assert merged["description"] == "Transfer a URL"
    options = {o["name"]: o for o in merged["options"]}
    assert list(options) == ["method", "silent", "X-2", "output", "header"]
    assert options["method"] == {
        "name": "method",
        "flags": ["-X"],
        "type": "enum",
        "enum": ["GET", "POST"],
    }  # the shared flag made it one
    assert options["output"] == {"name": "output", "flags": ["-o", "--output"], "type": "file"}
    assert merged["arguments"] == [
        {"name": "target", "type": "url", "description": "url", "variadic": True}
    ]  # same position, no inferred argument of that name
    assert INFERRED["commands"][""]["options"][0]["name"] == "request"  # untouched


def test_an_argument_the_template_names_is_not_paired_by_position():
    inferred = {
        "commands": {
            "": {
                "description": "d",
                "arguments": [{"name": "src", "type": "file"}, {"name": "dst", "type": "file"}],
            }
        }
    }
    template = {
        "commands": {
            "": {
                "arguments": [
                    {"name": "dst", "type": "directory"},
                    {"name": "mode", "type": "string"},
                ]
            }
        }
    }
    merged = merge_template(inferred, template)["commands"][""]["arguments"]
    assert [(a["name"], a["type"]) for a in merged] == [
        ("src", "file"),
        ("dst", "directory"),
        ("mode", "string"),
    ]


def test_assembled_shim_is_valid_and_the_crawler_owns_binary_and_trust():
    template = {"commands": {"": {"description": "Transfer a URL", "effects": {"network": True}}}}
    doc = assemble(
        name="curl",
        description="Transfer data from or to a server",
        homepage="https://curl.se",
        template=template,
        inferred=INFERRED,
        artifact=ARTIFACT,
        hash_=HASH,
        timestamp="2026-01-15T00:00:00Z",
    )
    report = validate(doc, source=f"{HASH[7:]}.json")
    assert report.ok, [p.format() for p in report.problems]
    assert doc["binary"] == {
        "hash": HASH,
        "name": "curl",
        "version": "8.5.0",
        "platform": "linux-arm64",
    }
    assert (doc["name"], doc["version"]) == ("curl", "8.5.0")  # not the inferred 8.5.0-DEV
    assert doc["description"] == "Transfer data from or to a server"
    assert doc["homepage"] == "https://curl.se"
    assert doc["trust"] == {"source": "community", "verified": False}
    assert doc["_generation"] == {
        "method": "template+help-parsing+man",
        "timestamp": "2026-01-15T00:00:00Z",
        "source": ARTIFACT.origin,
        "confidence": "medium",
        "inputs": ["--help"],
    }


def test_without_template_it_is_inferred_and_without_inference_the_template_alone():
    inferred_only = assemble(
        name="curl",
        description=None,
        homepage=None,
        template=None,
        inferred=INFERRED,
        artifact=ARTIFACT,
        hash_=HASH,
        timestamp="t",
    )
    assert inferred_only["trust"]["source"] == "inferred"
    assert inferred_only["description"] == "Usage: curl [options...] <url>"
    assert inferred_only["_generation"]["confidence"] == "medium"
    template = {"commands": {"": {"description": "Transfer a URL"}}}
    template_only = assemble(
        name="curl",
        description=None,
        homepage=None,
        template=template,
        inferred=None,
        artifact=ARTIFACT,
        hash_=HASH,
        timestamp="t",
    )
    assert template_only["commands"] == template["commands"]
    assert template_only["description"] == "curl"
    assert template_only["_generation"]["method"] == "template"
    assert template_only["_generation"]["confidence"] == "high"
    assert validate(template_only).ok


def test_template_problems_are_located_in_the_template():
    assert template_problems({"commands": {"": {"description": "d"}}}, "t") == []
    problems = template_problems({"commands": {"": {"effects": {"network": "yes"}}}}, "t")
    assert {(p.location, p.code) for p in problems} == {
        ('$.commands[""]', "schema.required"),  # no description
        ('$.commands[""].effects.network', "schema.type"),
    }
