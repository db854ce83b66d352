"""A real MCP client session against `sightline mcp` (official `mcp` package).

Usage: python3 mcp_client.py SIGHTLINE_BINARY URL
Prints one JSON object with what it saw; the Rust test asserts on it.
"""
import asyncio
import json
import sys

import anyio
from gate import Gate

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def attr(obj, snake, camel):
    """mcp 2.x uses snake_case attributes, 1.x camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def structured(result):
    return attr(result, "structured_content", "structuredContent")


def is_error(result):
    return attr(result, "is_error", "isError")


async def main(binary: str, url: str) -> None:
    params = StdioServerParameters(command=binary, args=["mcp"])
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = attr(init, "server_info", "serverInfo").name
            tools = await session.list_tools()
            out["tools"] = sorted(t.name for t in tools.tools)
            out["schemas_ok"] = all(attr(t, "input_schema", "inputSchema").get("type") == "object" for t in tools.tools)
            out["read_only"] = sorted(
                t.name for t in tools.tools if t.annotations and attr(t.annotations, "read_only_hint", "readOnlyHint")
            )
            out["destructive"] = sorted(
                t.name
                for t in tools.tools
                if t.annotations and attr(t.annotations, "destructive_hint", "destructiveHint")
            )

            bound = structured(await session.call_tool("bind_browser", {"session": "mcp-1"}))
            addr = {"session": "mcp-1", "target_id": bound["target_id"], "tab_id": bound["tabs"][0]["tab_id"]}
            await session.call_tool("browser_navigate", {**addr, "url": url})
            snap = structured(await session.call_tool("get_browser_state", {**addr, "snapshot_format": "semantic_v2"}))
            out["outline"] = snap["outline"]
            email = next(r for r in snap["refs"] if r["name"] == "Email Address")
            typed = await session.call_tool("browser_type", {**addr, "ref": email["ref"], "text": "mcp@example.com"})
            out["typed_error"] = is_error(typed)
            button = next(r for r in snap["refs"] if r["name"] == "Sign In")
            clicked = structured(await session.call_tool("browser_click", {**addr, "ref": button["ref"]}))
            out["navigated"] = clicked["navigated"]
            stale = await session.call_tool("browser_click", {**addr, "ref": button["ref"]})
            out["stale_is_error"] = is_error(stale)
            out["stale_code"] = structured(stale)["error"]["code"]
            out["stale_rule"] = structured(stale)["error"]["detail"]["rule"]
            shot = await session.call_tool("browser_screenshot", {**addr, "marks": True})
            images = [c for c in shot.content if c.type == "image"]
            out["image_mime"] = attr(images[0], "mime_type", "mimeType") if images else None
            out["image_bytes"] = len(images[0].data) if images else 0
            state = structured(await session.call_tool("get_state", {**addr}))
            out["state_url"] = state["url"]
            # `run` over MCP: a script reads the filled field back through the sandbox's browser.
            ran = structured(
                await session.call_tool(
                    "run",
                    {
                        **addr,
                        "result": "none",
                        "code": "return (await browser.state()).url",
                    },
                )
            )
            out["run_value"] = ran["value"]
            limited = await session.call_tool("run", {**addr, "code": "for (;;) {}", "timeout_s": 0.5})
            out["run_limit_code"] = structured(limited)["error"]["code"] if is_error(limited) else None
            await session.call_tool("end_session", {"session": "mcp-1"})

            # Concurrency, proved by order: session A's page is held by the gate while
            # session B navigates; B answers while A's page is still held.
            gate = Gate()
            addrs = []
            for name in ("mcp-a", "mcp-b"):
                b = structured(await session.call_tool("bind_browser", {"session": name}))
                addrs.append({"session": name, "target_id": b["target_id"], "tab_id": b["tabs"][0]["tab_id"]})
            first = asyncio.create_task(session.call_tool("browser_navigate", {**addrs[0], "url": gate.url("a")}))
            await anyio.to_thread.run_sync(gate.wait_seen, "a")
            await session.call_tool("browser_navigate", {**addrs[1], "url": url})
            out["second_answered_while_first_pending"] = gate.held("a") and not first.done()

            # Progress: a call with a progress token gets notifications while it runs
            # (its page is held until three have arrived).
            notes = []
            progress_gate = Gate()

            async def on_progress(progress, total, message):
                notes.append(message)
                if len(notes) >= 3:
                    progress_gate.release()

            await session.call_tool(
                "browser_navigate", {**addrs[1], "url": progress_gate.url("p")}, progress_callback=on_progress
            )
            out["progress_notes"] = len(notes)
            gate.release()
            await first

            # Cancellation: abandon a navigation whose page is held (the client sends
            # notifications/cancelled); the driver session's lock is free while the page
            # is still held (bind_browser without reconnect takes that lock and touches no page).
            cancel_gate = Gate()
            scope = anyio.CancelScope()

            async def held_navigation():
                with scope:
                    await session.call_tool("browser_navigate", {**addrs[0], "url": cancel_gate.url("c")})

            async with anyio.create_task_group() as tg:
                tg.start_soon(held_navigation)
                await anyio.to_thread.run_sync(cancel_gate.wait_seen, "c")
                scope.cancel()
            await session.call_tool("bind_browser", {"session": "mcp-a"})
            out["lock_free_while_page_held"] = cancel_gate.held("c")
            cancel_gate.release()
            for a in addrs:
                await session.call_tool("end_session", {"session": a["session"]})
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
