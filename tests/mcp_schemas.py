"""The MCP tools' published schemas, read by the official MCP client, and real replies checked against them.

Usage: python3 mcp_schemas.py SIGHTLINE_BINARY LONG_PAGE_URL SIGNIN_PAGE_URL
Prints one JSON object with what it saw; tests/transports.rs asserts on it.

The client itself validates every successful call's structured content against
the tool's output schema (it raises otherwise); each reply is also validated
here with `jsonschema` (Draft 2020-12, as the schemas say), and a few broken
copies of real replies must be refused, so a schema that accepts anything fails.
"""
import asyncio
import copy
import json
import sys

from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def attr(obj, snake, camel):
    """mcp 2.x uses snake_case attributes, 1.x camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def structured(result):
    if attr(result, "is_error", "isError"):
        raise RuntimeError(f"tool error: {attr(result, 'structured_content', 'structuredContent')}")
    return attr(result, "structured_content", "structuredContent")


async def main(binary: str, long_url: str, signin_url: str) -> None:
    params = StdioServerParameters(command=binary, args=["mcp"])
    out = {"checked": {}, "refused": {}}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            outputs = {n: attr(t, "output_schema", "outputSchema") for n, t in tools.items()}
            out["with_output_schema"] = sorted(n for n, s in outputs.items() if s)
            out["output_roots"] = sorted({s.get("type") for s in outputs.values() if s})
            for name, schema in outputs.items():
                if schema:
                    Draft202012Validator.check_schema(schema)
            action = attr(tools["act"], "input_schema", "inputSchema")["properties"]["action"]
            out["act_actions"] = {a["properties"]["action"]["const"]: a.get("required", []) for a in action["oneOf"]}
            out["act_closed"] = all(a.get("additionalProperties") is False for a in action["oneOf"])
            act_validator = Draft202012Validator(action)
            out["act_accepts"] = act_validator.is_valid({"action": "click_element", "element_index": 3})
            out["act_refuses"] = [
                act_validator.is_valid(a)
                for a in [
                    {"action": "click_element"},
                    {"action": "click_element", "element_index": 3, "text": "x"},
                    {"action": "no_such_action"},
                ]
            ]

            def check(label, tool, value):
                errors = [e.message for e in Draft202012Validator(outputs[tool]).iter_errors(value)]
                out["checked"][label] = errors[:3]
                return value

            def refuse(label, tool, value):
                out["refused"][label] = not Draft202012Validator(outputs[tool]).is_valid(value)

            async def call(label, tool, args):
                return check(label, tool, structured(await session.call_tool(tool, args)))

            bound = await call("bind_browser", "bind_browser", {"session": "schemas"})
            addr = {"session": "schemas", "target_id": bound["target_id"], "tab_id": bound["tabs"][0]["tab_id"]}
            await call("browser_navigate", "browser_navigate", {**addr, "url": long_url})
            tabs = await call("list_tabs", "list_tabs", {"session": "schemas", "target_id": addr["target_id"]})
            out["tab_titles"] = [t["title"] for t in tabs["tabs"]]
            whole = await call(
                "snapshot_full_because",
                "get_browser_state",
                {**addr, "snapshot_format": "semantic_v2", "changes": True},
            )
            out["full_because"] = [whole["snapshot"]["full_because"], whole["changes"]]
            snap = await call("snapshot", "get_browser_state", {**addr, "snapshot_format": "semantic_v2"})
            out["snapshot_refs"] = len(snap["refs"])
            scrolled = await call("browser_scroll", "browser_scroll", {**addr, "direction": "down"})
            out["page_scroll"] = scrolled["page_scroll"]
            changes = await call(
                "snapshot_changes", "get_browser_state", {**addr, "snapshot_format": "semantic_v2", "changes": True}
            )
            out["changes_keys"] = sorted(changes["changes"].keys())
            first = await call(
                "snapshot_budget", "get_browser_state", {**addr, "snapshot_format": "semantic_v2", "node_budget": 2}
            )
            token = first["snapshot"]["continuation"]
            out["continued"] = token is not None
            if token:
                await call(
                    "snapshot_continuation",
                    "get_browser_state",
                    {**addr, "snapshot_format": "semantic_v2", "continuation": token},
                )
            await call("snapshot_dom_refs", "get_browser_state", {**addr, "snapshot_format": "dom_refs_v1"})
            await call("get_state", "get_state", {**addr, "screenshot": False})
            await call("act", "act", {**addr, "action": {"action": "scroll", "direction": "up"}})
            target = {k: addr[k] for k in ("session", "target_id")}
            opened = await call("open_tab", "open_tab", {**target, "url": signin_url})
            await call("list_tabs_two", "list_tabs", target)
            await call("close_tab", "close_tab", {**addr, "tab_id": opened["tab_id"]})
            saved = await call("save_storage_state", "save_storage_state", {"session": "schemas"})
            # The storage state bind_browser takes has the schema of the one save_storage_state answers
            # (the fields the parser defaults optional).
            bind_input = Draft202012Validator(attr(tools["bind_browser"], "input_schema", "inputSchema"))
            cookie = {"name": "n", "value": "v", "domain": "example.com"}
            out["storage_input"] = [
                bind_input.is_valid({"session": "x", "storage_state": s})
                for s in [saved, {"cookies": [cookie]}, {"cookies": [{"value": "v", "domain": "x"}]}, {"cookies": 1}]
            ]
            await call("get_script", "get_script", {"session": "schemas"})

            # Broken copies of real replies: each must be refused.
            bad = copy.deepcopy(snap)
            bad["refs"][0]["ref"] = 7
            refuse("ref_not_a_string", "get_browser_state", bad)
            bad = copy.deepcopy(snap)
            del bad["snapshot"]["omitted"]
            refuse("omitted_missing", "get_browser_state", bad)
            bad = copy.deepcopy(snap)
            bad["snapshot"]["format"] = "semantic_v9"
            refuse("unknown_format", "get_browser_state", bad)
            bad = copy.deepcopy(tabs)
            bad["tabs"][0]["url"] = 42
            refuse("tab_url_a_number", "list_tabs", bad)
            bad = copy.deepcopy(scrolled)
            bad["page_scroll"] = [0]
            refuse("scroll_one_number", "browser_scroll", bad)
            await session.call_tool("end_session", {"session": "schemas"})
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
