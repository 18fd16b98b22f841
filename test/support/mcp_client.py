"""A harness written with the Python MCP SDK (`mcp` on PyPI), calling one effectd tool over
Streamable HTTP with a bearer token and the effect's identity in the request's `_meta`.

    python mcp_client.py URL TOKEN TOOL ARGS_JSON META_JSON

prints one JSON line: {"isError": …, "structuredContent": …, "text": …, "protocolVersion": …}.
Each run is a new session and a new JSON-RPC request: a re-issued call, as the spec tells clients
to send one after a broken stream, with the same `_meta` identity.
"""
import asyncio
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str, tool: str, arguments: dict, meta: dict) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                # The effect's identity: set by the harness in params._meta, never by the model.
                result = await session.call_tool(tool, arguments, meta=meta)
                text = next((c.text for c in result.content if getattr(c, "type", None) == "text"), None)
                print(json.dumps({
                    "isError": bool(result.is_error),
                    "structuredContent": result.structured_content,
                    "text": text,
                    "protocolVersion": getattr(init, "protocol_version", None),
                }), flush=True)


if __name__ == "__main__":
    url, token, tool, args_json, meta_json = sys.argv[1:6]
    asyncio.run(main(url, token, tool, json.loads(args_json), json.loads(meta_json)))
