"""A person in the loop over stdio MCP (`sightline mcp --live`), official `mcp` client.

Usage: python3 mcp_live.py SIGHTLINE_BINARY URL CDP_ENDPOINT
The client declares URL-mode elicitation (2025-11-25) and records what the server
asks it to show; the person's side is plain HTTP to the live link, as the live
page's script sends it. Prints one JSON object; the Rust test asserts on it.
"""
import asyncio
import json
import sys
import urllib.error
import urllib.request

import anyio

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def attr(obj, snake, camel):
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def structured(result):
    return attr(result, "structured_content", "structuredContent")


def person(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def endpoint(live, what):
    path, query = live.split("?", 1)
    return f"{path}/{what}?{query}"


async def main(binary, url, cdp):
    params = StdioServerParameters(command=binary, args=["mcp", "--live", "127.0.0.1:0", "--connect", cdp])
    out = {"elicited": []}
    shown = anyio.Event()

    async def on_elicit(context, p):
        out["elicited"].append(
            {"mode": p.mode, "url": getattr(p, "url", None), "message": p.message, "id": getattr(p, "elicitation_id", None)}
        )
        shown.set()
        return types.ElicitResult(action="accept")

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
            await session.initialize()
            bound = structured(await session.call_tool("bind_browser", {"session": "p1"}))
            addr = {"session": "p1", "target_id": bound["target_id"], "tab_id": bound["tabs"][0]["tab_id"]}
            await session.call_tool("browser_navigate", {**addr, "url": url})
            asked = await session.call_tool("request_human", {**addr, "reason": "confirm the device"})
            out["asked_error"] = attr(asked, "is_error", "isError")
            live = structured(asked).get("live_url")
            out["live_url"] = live
            if out["elicited"] == [] and not out["asked_error"]:
                # The elicitation is sent beside the tool's answer: wait for it (bounded).
                with anyio.move_on_after(20):
                    await shown.wait()
            refused = await session.call_tool("browser_scroll", {**addr, "direction": "down"})
            out["parked_code"] = structured(refused)["error"]["code"]
            if live:
                out["status"] = await anyio.to_thread.run_sync(person, "GET", endpoint(live, "status"))
                out["click"] = (await anyio.to_thread.run_sync(person, "POST", endpoint(live, "input"), {"type": "click", "x": 100, "y": 120}))[0]
                out["hand_back"] = (await anyio.to_thread.run_sync(person, "POST", endpoint(live, "hand_back"), {"note": "confirmed over MCP"}))[0]
            back = structured(await session.call_tool("wait_for_human", {"session": "p1", "timeout_s": 30, "screenshot": False}))
            out["note"] = back.get("note")
            out["confirmed"] = "Device confirmed by a person" in back.get("state", {}).get("page_content", "")
            if live:
                out["after"] = (await anyio.to_thread.run_sync(person, "GET", live))[0]
            await session.call_tool("end_session", {"session": "p1"})
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
