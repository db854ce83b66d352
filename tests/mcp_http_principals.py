"""Two principals' MCP clients over Streamable HTTP against one `sightline serve` (official `mcp` package).

Usage: python3 mcp_http_principals.py BASE_URL FIXTURE_URL TOKEN_A TOKEN_B
Client A (token A) and client B (token B) each open an MCP session with the
official client. Then B tries A's MCP session id by hand (POST, GET, DELETE),
beside an id the server never issued, and A checks its session is untouched.
Prints one JSON object with what it saw; the Rust test asserts on it.
"""
import asyncio
import json
import sys
import uuid

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def attr(obj, snake, camel):
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def structured(result):
    return attr(result, "structured_content", "structuredContent")


def client_for(token, seen):
    """An HTTP client with the principal's token that records the MCP session id it is given."""
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})

    async def on_response(response):
        sid = response.headers.get("mcp-session-id")
        if sid:
            seen.setdefault("ids", []).append(sid)

    client.event_hooks["response"].append(on_response)
    return client


async def raw(client, method, url, session_id, protocol, body=None):
    """One hand-made request on an MCP session id: (status, body text)."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-session-id": session_id,
        "mcp-protocol-version": protocol,
    }
    if body is not None:
        headers["content-type"] = "application/json"
        r = await client.request(method, url, headers=headers, content=json.dumps(body), timeout=20)
    else:
        r = await client.request(method, url, headers=headers, timeout=20)
    return [r.status_code, r.text]


async def main(base, url, token_a, token_b):
    mcp_url = base + "/mcp"
    out = {}
    seen_a, seen_b = {}, {}
    async with client_for(token_a, seen_a) as http_a, client_for(token_b, seen_b) as http_b:
        async with streamable_http_client(mcp_url, http_client=http_a) as a_streams, streamable_http_client(
            mcp_url, http_client=http_b
        ) as b_streams:
            async with ClientSession(a_streams[0], a_streams[1]) as a, ClientSession(b_streams[0], b_streams[1]) as b:
                init = await a.initialize()
                await b.initialize()
                protocol = str(attr(init, "protocol_version", "protocolVersion"))
                a_id, b_id = seen_a["ids"][0], seen_b["ids"][0]
                out["distinct_mcp_sessions"] = a_id != b_id

                # A works in its session.
                await a.call_tool("act", {"action": {"action": "navigate", "url": url}})
                snap = structured(await a.call_tool("get_browser_state", {"snapshot_format": "semantic_v2"}))
                email = next(r for r in snap["refs"] if r["name"] == "Email Address")
                await a.call_tool("browser_type", {"ref": email["ref"], "text": "a@example.com"})

                # Each principal lists only its own Sightline session (the one its MCP session holds).
                lists = {}
                for who, client in (("a", http_a), ("b", http_b)):
                    r = await client.get(base + "/v1/sessions")
                    lists[who] = r.json()["sessions"]
                out["lists"] = lists

                # B on A's MCP session id, beside an id nobody was given: the same answers.
                never = str(uuid.uuid4())
                call = {
                    "jsonrpc": "2.0",
                    "id": 7,
                    "method": "tools/call",
                    "params": {"name": "get_state", "arguments": {}},
                }
                for name, method, body in (("post", "POST", call), ("get", "GET", None), ("delete", "DELETE", None)):
                    out[f"foreign_{name}"] = await raw(http_b, method, mcp_url, a_id, protocol, body)
                    out[f"unknown_{name}"] = await raw(http_b, method, mcp_url, never, protocol, body)
                # And B over HTTP on A's Sightline session id, beside one that never existed.
                a_session = lists["a"][0]
                r = await http_b.get(f"{base}/v1/sessions/{a_session}/state")
                out["foreign_http_state"] = [r.status_code, r.json()]

                # A's session is untouched: the same tab, what A typed still there.
                state = structured(await a.call_tool("get_state", {}))
                out["a_email_value"] = state["element_index"]["1"]["attributes"]["value"]
                # B's own session works, and is not A's page.
                b_state = structured(await b.call_tool("get_state", {}))
                out["b_url"] = b_state["url"]
    print(json.dumps(out))


async def bounded(*args):
    # A session a foreign request broke makes the client wait for answers that never come: fail instead.
    await asyncio.wait_for(main(*args), timeout=120)


if __name__ == "__main__":
    asyncio.run(bounded(*sys.argv[1:5]))
