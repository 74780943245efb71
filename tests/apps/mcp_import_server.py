"""An MCP server written with the official `mcp` SDK (low-level `Server`), for the tests of
`atip import mcp` (tests/test_interop_mcp.py). Run as a real process:

    python tests/apps/mcp_import_server.py [--mode MODE] [--page-size N] [--http PORT]

Its tools stand for what an importer must get right: every ATIP type and what ATIP cannot
say (nested objects, arrays of objects, `$ref`s into `$defs`, constraints), required and
optional properties, defaults, enums of strings and of integers, every annotation and none
at all, an output schema, a tool that fails, and one that takes its time. `tools/list`
pages through them `--page-size` at a time (`nextCursor`).

`--mode` makes the server hostile in one way each: a recursive schema, a cursor that
never moves on, a listing that never ends, a server that never answers, one that dies at
once. (Names a command key cannot hold and two tools of one name are fed to the pure
`describe` directly.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

NAME = "notes-desk"
VERSION = "2.4.1"
INSTRUCTIONS = "Keep team notes: search, create and delete them.\nAsk before deleting."

TAGS = {"type": "array", "items": {"type": "string"}, "description": "Only notes with all tags"}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "search_notes",
        "title": "Search notes",
        "description": "Find notes whose text contains the query.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for"},
                "limit": {"type": "integer", "description": "At most this many", "default": 10},
                "tags": TAGS,
                "sort": {
                    "type": "string",
                    "enum": ["newest", "oldest"],
                    "default": "newest",
                    "description": "Order of the results",
                },
                "exact": {"type": "boolean", "description": "Match the whole phrase"},
                "min_score": {"type": "number", "description": "Relevance threshold"},
            },
            "required": ["query"],
        },
        "annotations": {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    },
    {
        "name": "create_note",
        "description": "Create a note.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1, "description": "The note's title"},
                "body": {"type": "string", "description": "Text of the note"},
                "priority": {"type": "integer", "enum": [1, 2, 3], "description": "1 is urgent"},
                "due": {
                    "type": "object",
                    "description": "When it is due",
                    "properties": {
                        "date": {"type": "string", "format": "date"},
                        "remind": {"type": "boolean", "default": False},
                    },
                    "required": ["date"],
                    "additionalProperties": False,
                },
                "attachments": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
                        "required": ["name"],
                    },
                },
                "color": {"type": ["string", "null"], "description": "A colour, or null"},
            },
            "required": ["title", "due"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
        "outputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
            "required": ["id", "title"],
        },
    },
    {
        "name": "delete_note",
        "description": "Delete a note for good.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "pattern": "^n[0-9]+$"}},
            "required": ["id"],
        },
        "annotations": {"destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    },
    {
        # no annotations at all: MCP's defaults apply (may destroy, not idempotent, open world)
        "name": "fetch_page",
        "description": "Fetch a web page into a note.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri", "description": "The page"},
                "timeout": {"type": "number", "default": 2.5, "description": "Seconds to wait"},
            },
            "required": ["url"],
        },
    },
    {
        "name": "stats",
        "description": "Count the notes.",
        "inputSchema": {"type": "object"},
        "annotations": {"title": "Statistics", "readOnlyHint": True},
        "outputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}},
    },
    {
        # what pydantic writes: $defs, $ref, titles
        "name": "label_notes",
        "description": "Put labels on notes.",
        "inputSchema": {
            "type": "object",
            "$defs": {
                "Label": {
                    "type": "object",
                    "title": "Label",
                    "properties": {
                        "name": {"type": "string", "title": "Name"},
                        "color": {"$ref": "#/$defs/Color"},
                    },
                    "required": ["name"],
                },
                "Color": {"type": "string", "enum": ["red", "green"], "title": "Color"},
            },
            "properties": {
                "labels": {"type": "array", "items": {"$ref": "#/$defs/Label"}, "title": "Labels"},
                "main": {"$ref": "#/$defs/Label", "description": "The label shown first"},
            },
            "required": ["labels"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
    },
    {
        "name": "echo",
        "description": "Say back the arguments.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "loud": {"type": "boolean"},
                "words": {"type": "array", "items": {"type": "string"}},
                "nested": {"type": "object"},
            },
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "fail",
        "description": "Always fails.",
        "inputSchema": {"type": "object", "properties": {"why": {"type": "string"}}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "slow",
        "description": "Wait, then answer.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
]

HOSTILE: dict[str, list[dict[str, Any]]] = {
    "recursive": [
        {"name": "fine", "inputSchema": {"type": "object"}},
        {
            "name": "tree",
            "inputSchema": {
                "type": "object",
                "$defs": {
                    "Node": {
                        "type": "object",
                        "properties": {
                            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                        },
                    }
                },
                "properties": {"root": {"$ref": "#/$defs/Node"}},
            },
        },
    ],
}


def build(mode: str, page_size: int) -> Server:
    tools = [types.Tool.model_validate(t) for t in HOSTILE.get(mode, TOOLS)]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        cursor = params.cursor if params else None
        if mode == "stuck-cursor":
            return types.ListToolsResult(tools=tools[:1], next_cursor="again")
        if mode == "endless":
            page = int(cursor or 0)
            one = types.Tool(name=f"t{page}", input_schema={"type": "object"})
            return types.ListToolsResult(tools=[one], next_cursor=str(page + 1))
        start = int(cursor or 0)
        end = start + page_size
        more = str(end) if end < len(tools) else None
        return types.ListToolsResult(tools=tools[start:end], next_cursor=more)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        name = params.name
        if name == "fail":
            text = f"it failed: {args.get('why', 'no reason')}"
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
        if name == "slow":
            await anyio.sleep(float(args.get("seconds", 1)))
            return types.CallToolResult(content=[types.TextContent(text="done")])
        if name == "stats":
            out = {"count": 2}
            return types.CallToolResult(
                content=[types.TextContent(text=json.dumps(out))], structured_content=out
            )
        if name == "create_note":
            out = {"id": "n3", "title": args["title"]}
            return types.CallToolResult(
                content=[types.TextContent(text=f"created {args['title']}")],
                structured_content=out,
            )
        said: dict[str, Any] = {"tool": name, "arguments": args}
        request = getattr(ctx, "request", None)  # the HTTP request, over streamable HTTP
        token = request.headers.get("x-notes-token") if request is not None else None
        if token or os.environ.get("NOTES_TOKEN"):
            said["token"] = token or os.environ["NOTES_TOKEN"]
            # which token came, told where no filter hides it (a digest is no secret)
            said["sha256"] = hashlib.sha256(said["token"].encode()).hexdigest()
        text = json.dumps(said, sort_keys=True)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=said)

    return Server(
        NAME,
        version=VERSION,
        title="Notes desk",
        description="Team notes over MCP",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(server: Server, port: int) -> None:
    import uvicorn

    web = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(web, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="normal")
    parser.add_argument("--page-size", type=int, default=3)
    parser.add_argument("--http", type=int, default=None)
    opts = parser.parse_args()
    if opts.mode == "silent":  # never answers; goes when its input closes
        sys.stdin.read()
        return
    if opts.mode == "dies":
        sys.stderr.write("notes-desk: cannot open the notes database\n")
        sys.exit(3)
    server = build(opts.mode, opts.page_size)
    if opts.http is not None:
        serve_http(server, opts.http)
    else:
        anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
