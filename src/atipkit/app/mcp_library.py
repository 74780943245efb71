"""An app's resources and prompts, as the handlers of its MCP server (PRD §11.2).

`handlers(app)` gives the low-level server the five handlers (`resources/list`,
`resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get`) for what
the app defines, and none for what it does not, so a server without resources does not
claim the capability. Every definition is read when the server is built: a resource
or prompt that cannot be served fails at start, not at a client's first read.

A read or a get runs the function in a worker thread (it is synchronous and may block)
and answers the app's errors as the protocol's (`protocol_error`): INVALID_PARAMS for
what the request got wrong (exit 2 or 10: an unknown URI or prompt, a bad argument), with
the app's error object as `data`; INTERNAL_ERROR for the app's own bugs.
"""

from __future__ import annotations

import base64
import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atipkit.app.errors import ExitCode, InputError, NotFoundError, Suggestion, ToolError

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

    from atipkit.app.app import App
    from atipkit.app.resources import Content, ResourceSpec

__all__ = ["handlers", "protocol_error"]


def protocol_error(error: ToolError) -> MCPError:
    """The app's error as the protocol's: INVALID_PARAMS for what the request got wrong
    (a usage error or a missing resource), INTERNAL_ERROR for anything else."""
    import mcp.types as types
    from mcp.shared.exceptions import MCPError

    wrong = error.exit_code in (ExitCode.USAGE, ExitCode.NOT_FOUND)
    code = types.INVALID_PARAMS if wrong else types.INTERNAL_ERROR
    return MCPError(code, error.message, error.to_dict())


def handlers(app: App) -> dict[str, Any]:
    """The `Server(...)` keyword arguments that serve `app`'s resources and prompts."""
    out: dict[str, Any] = {}
    if app.resources:
        out.update(_resource_handlers(app))
    if app.prompts:
        out.update(_prompt_handlers(app))
    return out


async def _in_thread(work: Callable[[], Any]) -> Any:
    """`work()` in a worker thread; whatever it raises comes back as the app's error."""
    import anyio

    from atipkit.app.errors import from_exception

    def guarded() -> Any:
        try:
            return work()
        except Exception as exc:
            return from_exception(exc)

    value = await anyio.to_thread.run_sync(guarded)
    if isinstance(value, ToolError):
        raise protocol_error(value)
    return value


# Resources ------------------------------------------------------------------------------


def _resource_handlers(app: App) -> dict[str, Callable[..., Any]]:
    import mcp.types as types

    specs = list(app.resources.values())
    for spec in specs:
        _ = spec.signature  # a definition that cannot be served fails now
        if spec.is_template:
            _ = spec.template
    fixed = [
        types.Resource(
            uri=spec.uri,
            name=spec.name,
            title=spec.title,
            description=spec.description or None,
            mime_type=spec.mime_type,
        )
        for spec in specs
        if not spec.is_template
    ]
    templates = [
        types.ResourceTemplate(
            uri_template=spec.uri,
            name=spec.name,
            title=spec.title,
            description=spec.description or None,
            mime_type=spec.mime_type,
        )
        for spec in specs
        if spec.is_template
    ]

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=fixed)

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        spec, variables = _find(specs, uri)
        content: Content = await _in_thread(lambda: spec.read(uri, variables))
        return types.ReadResourceResult(contents=[_contents(content)])

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": read_resource,
    }


def _find(specs: list[ResourceSpec], uri: str) -> tuple[ResourceSpec, dict[str, str]]:
    """The resource serving `uri` (a fixed URI before a template) and its variables."""
    for spec in sorted(specs, key=lambda s: s.is_template):
        variables = spec.match(uri)
        if variables is not None:
            return spec, variables
    known = [s.uri for s in specs]
    close = difflib.get_close_matches(uri, known, n=3)
    raise protocol_error(
        NotFoundError(
            f"no resource at {uri}",
            suggestion=Suggestion(
                "resources/list and resources/templates/list say what can be read.",
                example=close[0] if close else None,
            ),
            details={"uri": uri, "did_you_mean": close},
        )
    )


def _contents(content: Content) -> Any:
    import mcp.types as types

    if isinstance(content.data, bytes):
        return types.BlobResourceContents(
            uri=content.uri,
            mime_type=content.mime_type,
            blob=base64.b64encode(content.data).decode("ascii"),
        )
    return types.TextResourceContents(
        uri=content.uri, mime_type=content.mime_type, text=content.data
    )


# Prompts --------------------------------------------------------------------------------


def _prompt_handlers(app: App) -> dict[str, Callable[..., Any]]:
    import mcp.types as types

    specs = app.prompts
    listing = types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name=spec.name,
                title=spec.title,
                description=spec.description or None,
                arguments=[types.PromptArgument(**a) for a in spec.arguments()],
            )
            for spec in specs.values()
        ]
    )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return listing

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        spec = specs.get(params.name)
        if spec is None:
            close = difflib.get_close_matches(params.name, list(specs), n=3)
            raise protocol_error(
                InputError(
                    f"no prompt {params.name!r}",
                    suggestion="prompts/list names them."
                    + (f" Did you mean {' or '.join(close)}?" if close else ""),
                    details={"name": params.name, "did_you_mean": close},
                )
            )
        messages = await _in_thread(lambda: spec.render(params.arguments))
        return types.GetPromptResult(
            description=spec.description or None,
            messages=[
                types.PromptMessage(role=role, content=types.TextContent(text=text))
                for role, text in messages
            ],
        )

    return {"on_list_prompts": list_prompts, "on_get_prompt": get_prompt}
