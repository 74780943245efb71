"""Translating ATIP tools for models and back (RFC 0.6 §7-8, Appendix A).

compiled = compile_tools(tool, "anthropic", strict=True)
response = client.messages.create(..., tools=compiled.payload())
for call in parse_tool_calls("anthropic", response, compiled): ...
"""

from atipkit.bridge.compile import PROVIDERS, Compiled, Provider, compile_tools
from atipkit.bridge.flatten import Binding, FlatTool, ParamRef, Strategy, Target
from atipkit.bridge.safety import safety_prompt

__all__ = [
    "PROVIDERS",
    "Binding",
    "Compiled",
    "FlatTool",
    "ParamRef",
    "Provider",
    "Strategy",
    "Target",
    "compile_tools",
    "safety_prompt",
]
