"""Session handles through the official MCP client (`mcp` package), in the mode asked.

Usage:
    python3 mcp_handles.py stdio MODE FIXTURE_URL SIGHTLINE_BINARY [ARGS...]
    python3 mcp_handles.py http MODE FIXTURE_URL MCP_URL TOKEN_A TOKEN_B

MODE is the client's: `auto` (server/discover, then 2026-07-28 if the server
offers it) or `legacy` (the initialize handshake). One connection opens two
sessions with session_open, acts in each, and checks each sees only its own
page; then the errors: no handle, a handle of the other session's ref, an
unknown handle, a closed one. Over HTTP a second principal (TOKEN_B) tries the
first one's handle. Prints one JSON object with what it saw; the Rust test
(tests/mcp_stateless.rs) asserts on it.
"""
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


def result(r):
    """(is_error, structured content) of a tool result."""
    return bool(r.is_error), r.structured_content


def error_of(r):
    is_error, sc = result(r)
    return {"is_error": is_error, "code": (sc or {}).get("error", {}).get("code"), "message": (sc or {}).get("error", {}).get("message"), "detail": (sc or {}).get("error", {}).get("detail")}


def email_value(state):
    for d in state["element_index"].values():
        if d["attributes"].get("name") == "email" or d.get("role") == "textbox":
            return d["attributes"].get("value")
    return None


async def exercise(client, url, out):
    s = client.session
    out["protocol"] = s.protocol_version
    out["discovered"] = s.discover_result is not None
    out["server"] = s.server_info.name if s.server_info else None
    tools = (await client.list_tools()).tools
    names = [t.name for t in tools]
    out["tools"] = names
    schemas = {t.name: t.input_schema for t in tools}
    out["click_required"] = schemas["browser_click"].get("required", [])
    out["list_tabs_required"] = schemas["list_tabs"].get("required", [])

    # Two sessions in one connection.
    opened_a = await client.call_tool("session_open", {"url": url, "viewport": "1024x700"})
    a_err, a = result(opened_a)
    out["open_a_error"] = a_err
    out["open_a_keys"] = sorted(a.keys())
    out["open_a_state_url"] = a["state"]["url"]
    out["open_a_image"] = any(c.type == "image" for c in opened_a.content)
    b_err, b = result(await client.call_tool("session_open", {"screenshot": False}))
    out["open_b_error"] = b_err
    out["distinct"] = a["session"] != b["session"]
    A, B = a["session"], b["session"]

    # Act in A: type into the email field through a semantic_v2 ref.
    _, snap_a = result(await client.call_tool("get_browser_state", {"session": A, "snapshot_format": "semantic_v2"}))
    email = next(r for r in snap_a["refs"] if r["name"] == "Email Address")
    typed_err, _ = result(await client.call_tool("browser_type", {"session": A, "ref": email["ref"], "text": "a@example.com"}))
    out["typed_error"] = typed_err

    # Act in B: load the same page, type something else with an element-index action.
    nav_err, _ = result(await client.call_tool("browser_navigate", {"session": B, "url": url}))
    out["b_navigate_error"] = nav_err
    _, b_state = result(await client.call_tool("get_state", {"session": B}))
    box = next(k for k, d in b_state["element_index"].items() if d["attributes"].get("type") == "email")
    _, b_after = result(
        await client.call_tool(
            "act", {"session": B, "action": {"action": "input_text", "element_index": int(box), "text": "b@example.com"}}
        )
    )
    out["b_act_error"] = b_after.get("error")

    # Each sees only its own page.
    _, a_state = result(await client.call_tool("get_state", {"session": A}))
    _, b_state = result(await client.call_tool("get_state", {"session": B}))
    out["a_email"] = email_value(a_state)
    out["b_email"] = email_value(b_state)
    out["b_screenshot"] = b_state["screenshot"]

    # A's ref is A's: in B it is no ref at all.
    out["foreign_ref"] = error_of(await client.call_tool("browser_click", {"session": B, "ref": email["ref"]}))
    # No handle.
    out["no_handle"] = error_of(await client.call_tool("list_tabs", {}))
    # A handle never issued.
    out["unknown_handle"] = error_of(
        await client.call_tool("get_blocked_requests", {"session": "s-00000000000000000000000000000000"})
    )
    # The list, then close A: its handle is gone, B goes on.
    _, listed = result(await client.call_tool("session_list", {}))
    out["listed"] = sorted(listed["sessions"])
    out["a_b"] = sorted([A, B])
    close_err, _ = result(await client.call_tool("session_close", {"session": A}))
    out["close_error"] = close_err
    out["after_close"] = error_of(await client.call_tool("get_state", {"session": A}))
    out["close_again"] = error_of(await client.call_tool("session_close", {"session": A}))
    _, b_tabs = result(await client.call_tool("list_tabs", {"session": B}))
    out["b_tabs_after"] = len(b_tabs["tabs"])
    # A table tool the 2026-07-28 vocabulary leaves out.
    try:
        r = await client.call_tool("bind_browser", {"session": "named-1"})
        out["bind_browser"] = {"is_error": bool(r.is_error), "code": (r.structured_content or {}).get("error", {}).get("code")}
        if not r.is_error:
            await client.call_tool("end_session", {"session": "named-1"})
    except MCPError as e:
        out["bind_browser"] = {"protocol_error": e.error.code}
    return B


async def main(argv):
    transport, mode, url = argv[0], argv[1], argv[2]
    out = {"mode": mode, "transport": transport}
    if transport == "stdio":
        params = StdioServerParameters(command=argv[3], args=["mcp", *argv[4:]])
        async with Client(params, mode=mode) as client:
            b = await exercise(client, url, out)
            await client.call_tool("session_close", {"session": b})
    else:
        mcp_url, token_a, token_b = argv[3], argv[4], argv[5]
        http_a = create_mcp_http_client(headers={"Authorization": f"Bearer {token_a}"})
        http_b = create_mcp_http_client(headers={"Authorization": f"Bearer {token_b}"})
        async with http_a, http_b:
            async with Client(streamable_http_client(mcp_url, http_client=http_a), mode=mode) as client:
                b = await exercise(client, url, out)
                # Another principal: the first one's handle answers as one never issued, and its list is its own.
                async with Client(streamable_http_client(mcp_url, http_client=http_b), mode=mode) as other:
                    out["other_protocol"] = other.session.protocol_version
                    out["other_on_b"] = error_of(await other.call_tool("get_state", {"session": b}))
                    out["other_close_b"] = error_of(await other.call_tool("session_close", {"session": b}))
                    _, listed = result(await other.call_tool("session_list", {}))
                    out["other_listed"] = listed["sessions"]
                # B is untouched by that.
                _, b_state = result(await client.call_tool("get_state", {"session": b}))
                out["b_email_after_other"] = email_value(b_state)
                await client.call_tool("session_close", {"session": b})
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1:]), timeout=180))
