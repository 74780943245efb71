"""ATIP tools → ATDF descriptors: one per invocable command, named as `atip compile`
names it (the bridge's flattening and name table, SPEC-NOTES 16).

Basic descriptors (`atdf_schema.json`) allow no field beyond ATDF's own, so safety can
only travel as text: the safety suffix in `description` (SPEC-NOTES 17) and the effects
in sentences in `when_to_use`. Enhanced descriptors (`enhanced_atdf_schema.json`,
`schema_version` 2.0.0) add metadata, prerequisites from authentication, examples parsed
from the command's own, input schemas, and the `x-atip` extension from which import
restores the ATIP document exactly. Every descriptor is checked against its schema
before it is returned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from atipkit.bridge.flatten import FlatTool, ParamRef, Target, flatten
from atipkit.bridge.safety import flags
from atipkit.errors import AtipError
from atipkit.execute.argv import example_call
from atipkit.interop.atdf import extension, wording
from atipkit.interop.atdf.datatypes import atdf_type, input_schema
from atipkit.interop.atdf.schemas import BASIC_VERSION, ENHANCED_VERSION, require_valid
from atipkit.model import Argument, Command, Option, Tool, get_command, to_dict

FOREIGN = "x-atdf"
"""Where an imported descriptor kept what ATIP cannot say; exporting, it comes back."""


class SameNameError(AtipError, ValueError):
    """Two tools of one name in one export: their commands would get one ATDF id."""


def export_atdf(tools: Tool | Iterable[Tool], *, enhanced: bool = False) -> list[dict[str, Any]]:
    """One ATDF descriptor per invocable command of `tools` (hidden ones left out, as
    `atip compile` leaves them out), in document order. Raises `SameNameError` (a
    `ValueError`) for two tools of one name, and `AtdfError` should a descriptor fail
    its schema."""
    batch = [tools] if isinstance(tools, Tool) else list(tools)
    by_name: dict[str, Tool] = {}
    for tool in batch:
        if by_name.setdefault(tool.name, tool) is not tool:
            raise SameNameError(f"two tools are named {tool.name!r}; export them separately")
    documents: dict[str, dict[str, Any]] = {}
    out = []
    for flat in flatten(batch):
        target = flat.binding.targets[""]
        tool = by_name[target.tool]
        if enhanced and tool.name not in documents:
            documents[tool.name] = to_dict(tool)
        descriptor = _descriptor(flat, target, tool, documents.get(tool.name), enhanced)
        require_valid(
            descriptor, "enhanced" if enhanced else "basic", f"ATDF export of {flat.name}"
        )
        out.append(descriptor)
    return out


def _descriptor(
    flat: FlatTool, target: Target, tool: Tool, document: dict[str, Any] | None, enhanced: bool
) -> dict[str, Any]:
    command = get_command(tool, target.path)
    foreign = command.extensions.get(FOREIGN)
    foreign = foreign if isinstance(foreign, dict) else {}
    auth = wording.authentication(tool, command)
    specs = {key: _spec(tool, command, ref) for key, ref in target.params.items()}
    inputs = [_input(key, spec, key in target.required, enhanced) for key, spec in specs.items()]
    when = foreign.get("when_to_use")
    outputs = foreign.get("outputs")
    if not isinstance(outputs, dict):
        outputs = {
            "success": wording.success(flat.effects),
            "failure": wording.failures(tool, flat.effects, bool(inputs)),
        }
    descriptor: dict[str, Any] = {
        "schema_version": ENHANCED_VERSION if enhanced else BASIC_VERSION,
        "tool_id": flat.name,
        "description": wording.description(command, flat.safety),
        "when_to_use": when
        if isinstance(when, str) and when
        else wording.when_to_use(tool, flat.title, command, flat.effects, auth),
    }
    if enhanced:
        success = outputs.get("success") if isinstance(outputs.get("success"), str) else ""
        descriptor["metadata"] = {
            "version": tool.version,
            "tags": wording.tags(tool, target.path, flags(flat.effects)),
            "category": " ".join((tool.name, *target.path[:-1])),
        }
        descriptor["prerequisites"] = wording.prerequisites(tool, auth)
        examples = _examples(tool, command, target, success or wording.success(flat.effects))
        if examples:
            descriptor["examples"] = examples
        for key, value in foreign.items():  # what an earlier import kept, back in place
            if key not in ("when_to_use", "outputs", "schema_version", extension.KEY):
                descriptor[key] = value
    descriptor["how_to_use"] = {"inputs": inputs, "outputs": outputs}
    if enhanced:
        assert document is not None
        descriptor[extension.KEY] = extension.encode(document, target.path, target.params)
    return descriptor


def _spec(tool: Tool, command: Command, ref: ParamRef) -> Argument | Option:
    pools: dict[str, Sequence[Argument | Option]] = {
        "argument": command.arguments,
        "option": command.options,
        "global": tool.global_options,
    }
    return next(p for p in pools[ref.kind] if p.name == ref.name)


def _input(key: str, spec: Argument | Option, required: bool, enhanced: bool) -> dict[str, Any]:
    foreign = spec.extensions.get(FOREIGN)
    foreign = foreign if isinstance(foreign, dict) else {}
    declared = foreign.get("type")
    out: dict[str, Any] = {
        "name": key,
        "type": declared if isinstance(declared, str) and declared else atdf_type(spec),
    }
    text = wording.input_description(spec, required, basic=not enhanced)
    if text:
        out["description"] = text
    if enhanced:
        kept = foreign.get("schema")
        if isinstance(kept, dict):
            out["schema"] = kept
        elif "type" not in foreign:
            schema = input_schema(spec)
            if set(schema) - {"type"}:  # more than the type the input states already
                out["schema"] = schema
        out["required"] = required
    return out


def _examples(tool: Tool, command: Command, target: Target, expected: str) -> list[dict[str, Any]]:
    """The command's examples that read back as a call of this command with these
    inputs (the executor's own command-line reader); any other is left out."""
    out = []
    for line in command.examples:
        call = example_call(tool, target, line)
        if call is not None:
            out.append(
                {
                    "goal": wording.example_goal(command, line),
                    "input_values": call,
                    "expected_result": expected,
                }
            )
    return out
