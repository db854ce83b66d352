"""Two real MCP clients over Streamable HTTP against `sightline serve` (official `mcp` package).

Usage: python3 mcp_http_client.py MCP_URL FIXTURE_URL
Each MCP session is one Sightline session. Prints one JSON object with what it
saw; the Rust test asserts on it.
"""
import asyncio
import json
import sys

from gate import Gate
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def attr(obj, snake, camel):
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def structured(result):
    return attr(result, "structured_content", "structuredContent")


def is_error(result):
    return attr(result, "is_error", "isError")


async def main(mcp_url: str, url: str) -> None:
    out = {}
    async with streamable_http_client(mcp_url) as a_streams, streamable_http_client(mcp_url) as b_streams:
        async with ClientSession(a_streams[0], a_streams[1]) as a, ClientSession(b_streams[0], b_streams[1]) as b:
            init = await a.initialize()
            await b.initialize()
            out["server"] = attr(init, "server_info", "serverInfo").name
            out["protocol"] = attr(init, "protocol_version", "protocolVersion")
            tools = await a.list_tools()
            schemas = {t.name: attr(t, "input_schema", "inputSchema") for t in tools.tools}
            out["tools"] = sorted(schemas)
            # The MCP session is the Sightline session: no tool needs a session (one is a handle from session_open).
            out["session_required"] = sorted(n for n, s in schemas.items() if "session" in s.get("required", []))
            out["act_required"] = schemas["act"].get("required", [])
            out["destructive"] = sorted(
                t.name for t in tools.tools if t.annotations and attr(t.annotations, "destructive_hint", "destructiveHint")
            )

            # The session is already open: no bind_browser, no ids.
            first = structured(await a.call_tool("get_state", {}))
            out["first_url"] = first["url"]
            state = structured(await a.call_tool("act", {"action": {"action": "navigate", "url": url}}))
            out["act_page_content"] = state["page_content"]
            snap = structured(await a.call_tool("get_browser_state", {"snapshot_format": "semantic_v2"}))
            email = next(r for r in snap["refs"] if r["name"] == "Email Address")
            typed = await a.call_tool("browser_type", {"ref": email["ref"], "text": "a@example.com"})
            out["typed_error"] = is_error(typed)

            # Session B sees nothing of what A typed.
            await b.call_tool("browser_navigate", {"url": url})
            b_state = structured(await b.call_tool("get_state", {}))
            out["b_email_value"] = b_state["element_index"]["1"]["attributes"]["value"]
            a_state = structured(await a.call_tool("get_state", {}))
            out["a_email_value"] = a_state["element_index"]["1"]["attributes"]["value"]

            # Progress notifications over SSE, while the call runs: its page is held
            # until three have arrived.
            notes = []
            gate = Gate()

            async def on_progress(progress, total, message):
                notes.append(message)
                if len(notes) >= 3:
                    gate.release()

            await a.call_tool("browser_navigate", {"url": gate.url("p")}, progress_callback=on_progress)
            out["progress_notes"] = len(notes)

            # end_session ends B's Sightline session; later calls are typed errors.
            await b.call_tool("end_session", {})
            after = await b.call_tool("get_state", {})
            out["after_end_is_error"] = is_error(after)
            out["after_end_code"] = structured(after)["error"]["code"]
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
