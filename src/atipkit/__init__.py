"""atipkit: the Agent Tool Introspection Protocol (ATIP) for Python.

The public API is re-exported here and loaded on first use, so `import atipkit` costs
almost nothing (bench/validate.py measures it):

    >>> import atipkit
    >>> tool = atipkit.loads('{"atip": "0.1", "name": "t", "version": "1", "description": "d"}')
    >>> tool.atip.version, tool.name
    ('0.1', 't')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from atipkit._exports import lazy_exports
from atipkit._version import __version__

if TYPE_CHECKING:
    from atipkit.errors import (
        AtipError,
        DocumentError,
        DocumentTooLarge,
        InvalidDocument,
        MalformedJSON,
        UnsupportedVersion,
    )
    from atipkit.model import (
        UNSET,
        Argument,
        AtipVersion,
        Binary,
        Command,
        Effects,
        Option,
        Tool,
        Trust,
        count_commands,
        dumps,
        effective_effects,
        from_dict,
        get_command,
        iter_commands,
        load,
        loads,
        merge_effects,
        to_dict,
        walk_commands,
    )
    from atipkit.problems import Problem, Severity
    from atipkit.protocol import PROTOCOL_VERSION
    from atipkit.registry.remote import Lookup, lookup_shim
    from atipkit.resolve import NoMetadata, Resolved, ToolNotFound, get_tool, resolve_tool
    from atipkit.scan import ScanReport, discover
    from atipkit.validation import ValidationReport, validate, validate_file

_EXPORTS = {
    "atipkit.errors": [
        "AtipError",
        "DocumentError",
        "DocumentTooLarge",
        "InvalidDocument",
        "MalformedJSON",
        "UnsupportedVersion",
    ],
    "atipkit.model": [
        "UNSET",
        "Argument",
        "AtipVersion",
        "Binary",
        "Command",
        "Effects",
        "Option",
        "Tool",
        "Trust",
        "count_commands",
        "dumps",
        "effective_effects",
        "from_dict",
        "get_command",
        "iter_commands",
        "load",
        "loads",
        "merge_effects",
        "to_dict",
        "walk_commands",
    ],
    "atipkit.problems": ["Problem", "Severity"],
    "atipkit.protocol": ["PROTOCOL_VERSION"],
    "atipkit.registry.remote": ["Lookup", "lookup_shim"],
    "atipkit.resolve": ["NoMetadata", "Resolved", "ToolNotFound", "get_tool", "resolve_tool"],
    "atipkit.scan": ["ScanReport", "discover"],
    "atipkit.validation": ["ValidationReport", "validate", "validate_file"],
}

__all__ = [
    "PROTOCOL_VERSION",
    "UNSET",
    "Argument",
    "AtipError",
    "AtipVersion",
    "Binary",
    "Command",
    "DocumentError",
    "DocumentTooLarge",
    "Effects",
    "InvalidDocument",
    "Lookup",
    "MalformedJSON",
    "NoMetadata",
    "Option",
    "Problem",
    "Resolved",
    "ScanReport",
    "Severity",
    "Tool",
    "ToolNotFound",
    "Trust",
    "UnsupportedVersion",
    "ValidationReport",
    "__version__",
    "count_commands",
    "discover",
    "dumps",
    "effective_effects",
    "from_dict",
    "get_command",
    "get_tool",
    "iter_commands",
    "load",
    "loads",
    "lookup_shim",
    "merge_effects",
    "resolve_tool",
    "to_dict",
    "validate",
    "validate_file",
    "walk_commands",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
