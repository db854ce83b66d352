"""The official MCP Python client against `npx sightline mcp`, run in an npm prefix.

Usage: python3 check_npm_mcp.py PREFIX URL
(PREFIX holds node_modules/ with the sightline packages; URL is a fixture page.)
Prints one JSON object with what it saw; tests/dist.rs asserts on it.
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def attr(obj, snake, camel):
    """mcp 2.x uses snake_case attributes, 1.x camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


async def main(prefix: str, url: str) -> None:
    # --offline: npx runs the prefix's node_modules/.bin/sightline and asks no registry.
    params = StdioServerParameters(command="npx", args=["--offline", "sightline", "mcp"], cwd=prefix)
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = attr(init, "server_info", "serverInfo").name
            tools = await session.list_tools()
            out["tools"] = sorted(t.name for t in tools.tools)
            bound = attr(await session.call_tool("bind_browser", {"session": "npx"}), "structured_content", "structuredContent")
            addr = {"session": "npx", "target_id": bound["target_id"], "tab_id": bound["tabs"][0]["tab_id"]}
            await session.call_tool("browser_navigate", {**addr, "url": url})
            snap = attr(
                await session.call_tool("get_browser_state", {**addr, "snapshot_format": "semantic_v2"}),
                "structured_content",
                "structuredContent",
            )
            out["outline"] = snap["outline"]
            await session.call_tool("end_session", {"session": "npx"})
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
