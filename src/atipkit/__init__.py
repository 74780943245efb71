"""atipkit: the Agent Tool Introspection Protocol (ATIP) for Python.

The public API is re-exported here and loaded on first use, so `import atipkit` costs
almost nothing (bench/validate.py measures it):

    >>> import atipkit
    >>> tool = atipkit.loads('{"atip": "0.1", "name": "t", "version": "1", "description": "d"}')
    >>> tool.atip.version, tool.name
    ('0.1', 't')

An agent starts from here alone: `scan` and `get_tool` find tools, `compile_tools` and
`parse_tool_calls` speak a provider's format, `Executor` runs calls under a `Policy`
(examples/agent_loop.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from atipkit._exports import lazy_exports
from atipkit._version import __version__ as __version__

# The exports, each once: type checkers read them here, `lazy_exports` reads these lines.
if TYPE_CHECKING:
    from atipkit._scan import ScanReport as ScanReport
    from atipkit._scan import discover as discover
    from atipkit._scan import scan as scan
    from atipkit.bridge import ToolCall as ToolCall
    from atipkit.bridge import compile_tools as compile_tools
    from atipkit.bridge import parse_tool_calls as parse_tool_calls
    from atipkit.bridge import safety_prompt as safety_prompt
    from atipkit.bridge import tool_result_messages as tool_result_messages
    from atipkit.errors import AtipError as AtipError
    from atipkit.errors import DocumentError as DocumentError
    from atipkit.errors import DocumentTooLarge as DocumentTooLarge
    from atipkit.errors import InvalidDocument as InvalidDocument
    from atipkit.errors import MalformedJSON as MalformedJSON
    from atipkit.errors import UnsupportedVersion as UnsupportedVersion
    from atipkit.execute import Executor as Executor
    from atipkit.execute import Outcome as Outcome
    from atipkit.model import UNSET as UNSET
    from atipkit.model import Argument as Argument
    from atipkit.model import AtipVersion as AtipVersion
    from atipkit.model import Binary as Binary
    from atipkit.model import Command as Command
    from atipkit.model import Effects as Effects
    from atipkit.model import Option as Option
    from atipkit.model import Tool as Tool
    from atipkit.model import Trust as Trust
    from atipkit.model import count_commands as count_commands
    from atipkit.model import dumps as dumps
    from atipkit.model import effective_effects as effective_effects
    from atipkit.model import from_dict as from_dict
    from atipkit.model import get_command as get_command
    from atipkit.model import iter_commands as iter_commands
    from atipkit.model import load as load
    from atipkit.model import loads as loads
    from atipkit.model import merge_effects as merge_effects
    from atipkit.model import to_dict as to_dict
    from atipkit.model import walk_commands as walk_commands
    from atipkit.policy import Decision as Decision
    from atipkit.policy import Policy as Policy
    from atipkit.problems import Problem as Problem
    from atipkit.problems import Severity as Severity
    from atipkit.protocol import PROTOCOL_VERSION as PROTOCOL_VERSION
    from atipkit.registry.remote import Lookup as Lookup
    from atipkit.registry.remote import lookup_shim as lookup_shim
    from atipkit.resolve import NoMetadata as NoMetadata
    from atipkit.resolve import Resolved as Resolved
    from atipkit.resolve import ToolNotFound as ToolNotFound
    from atipkit.resolve import get_tool as get_tool
    from atipkit.resolve import resolve_tool as resolve_tool
    from atipkit.validation import ValidationReport as ValidationReport
    from atipkit.validation import validate as validate
    from atipkit.validation import validate_file as validate_file

__getattr__, __dir__ = lazy_exports(__name__, __file__, "__version__")
