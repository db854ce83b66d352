//! `/openapi.json`: generated from the tool table's schemars schemas (each
//! tool's params and reply, the State Object, the Action Object from the action
//! table, the storage state), so the HTTP description cannot drift from what
//! `dispatch` accepts and answers.

use serde_json::{json, Map, Value};
use sightline_api::TOOLS;

fn error_response(what: &str) -> Value {
    json!({ "description": what, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } })
}

fn session_param() -> Value {
    json!({ "name": "id", "in": "path", "required": true, "schema": { "type": "string" }, "description": "session_id from POST /v1/sessions" })
}

/// The OpenAPI 3.1 document.
pub fn document() -> Value {
    let mut paths = Map::new();
    let state = json!({ "$ref": "#/components/schemas/StateObject" });
    let mut storage_state = sightline_api::input_schema_of::<sightline_browser::StorageState>();
    if let Some(o) = storage_state.as_object_mut() {
        o.remove("$schema");
        o.insert("description".into(), json!("Playwright storageState JSON ({cookies, origins}) the session's context starts from, as save_storage_state returns it"));
    }
    paths.insert("/v1/sessions".into(), json!({
        "post": {
            "summary": "Create a session (its own browser context, or a browser from the Grid); with a url, load it.",
            "requestBody": { "required": false, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/NewSession" } } } },
            "responses": {
                "201": { "description": "created", "content": { "application/json": { "schema": {
                    "type": "object", "required": ["session_id"],
                    "properties": { "session_id": { "type": "string" }, "state": state, "grid_session": { "type": "string" } } } } } },
                "503": error_response("too_many_sessions, grid_full (with Retry-After), grid_refused, grid_unreachable, shutting_down"),
            }
        },
        "get": { "summary": "Ids of the caller's open sessions (those its bearer token created).", "responses": { "200": { "description": "ok" } } }
    }));
    paths.insert("/v1/sessions/{id}".into(), json!({
        "delete": { "summary": "End a session.", "parameters": [session_param()],
            "responses": { "204": { "description": "ended" }, "404": error_response("session_not_found, session_ended") } }
    }));
    paths.insert("/v1/sessions/{id}/act".into(), json!({
        "post": {
            "summary": "One Action Object → one State Object, exactly as `sightline env` answers (errors inside the state, HTTP 200).",
            "parameters": [session_param()],
            "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Action" } } } },
            "responses": { "200": { "description": "the next State Object", "content": { "application/json": { "schema": state } } },
                "404": error_response("session_not_found, session_ended, browser_crashed"), "429": error_response("busy") }
        }
    }));
    paths.insert("/v1/sessions/{id}/state".into(), json!({
        "get": {
            "summary": "The current State Object.",
            "parameters": [session_param(), { "name": "screenshot", "in": "query", "required": false, "schema": { "type": "boolean" } }],
            "responses": { "200": { "description": "State Object", "content": { "application/json": { "schema": state } } },
                "404": error_response("session_not_found, session_ended, browser_crashed") }
        }
    }));
    for t in TOOLS {
        let mut schema = (t.schema)();
        if let Some(p) = schema["properties"].as_object_mut() {
            p.remove("session");
        }
        if let Some(r) = schema["required"].as_array_mut() {
            r.retain(|f| !matches!(f.as_str(), Some("session" | "target_id" | "tab_id")));
        }
        paths.insert(format!("/v1/sessions/{{id}}/tools/{}", t.name), json!({
            "post": {
                "operationId": t.name,
                "summary": t.description,
                "description": "The session is the one in the path; target_id and tab_id default to its tab. The result is the tool's, as `sightline rpc` returns it.",
                "parameters": [session_param()],
                "requestBody": { "required": false, "content": { "application/json": { "schema": schema } } },
                "responses": { "200": { "description": "the tool's result (with an image, also image: {mime_type, data})",
                        "content": { "application/json": { "schema": (t.output_schema)() } } },
                    "400": error_response("invalid_params"), "404": error_response("session_not_found, session_ended"),
                    "422": error_response("the tool's own error codes (capability_expired, browser_action_unavailable, …)"),
                    "429": error_response("busy") }
            }
        }));
    }
    paths.insert(
        "/healthz".into(),
        json!({ "get": { "summary": "Liveness and session count.", "responses": { "200": { "description": "ok" } } } }),
    );
    paths.insert(
        "/metrics".into(),
        json!({ "get": { "summary": "Prometheus text.", "responses": { "200": { "description": "metrics" } } } }),
    );
    let ticket = json!([{ "name": "ticket", "in": "query", "required": false, "schema": { "type": "string" },
        "description": "The single-session ticket of request_human's live_url (instead of the bearer token)" }]);
    paths.insert("/live".into(), json!({ "get": { "summary": "The caller's sessions: url, title, state (running, idle, handed_over, handed_back).", "responses": { "200": { "description": "sessions" } } } }));
    paths.insert("/live/{id}".into(), json!({ "get": { "summary": "The live view: one self-contained HTML page.", "parameters": ticket, "responses": { "200": { "description": "text/html" } } } }));
    paths.insert("/live/{id}/status".into(), json!({ "get": { "summary": "Who holds the session, the reason, url, title, viewport, pages visited, recent actions.", "parameters": ticket, "responses": { "200": { "description": "status" } } } }));
    paths.insert("/live/{id}/frames".into(), json!({ "get": { "summary": "Server-sent events, one base64 JPEG of the viewport each, as the page paints (CDP screencast).", "parameters": ticket, "responses": { "200": { "description": "text/event-stream" } } } }));
    paths.insert("/live/{id}/frame".into(), json!({ "get": { "summary": "The viewport as a JPEG.", "parameters": ticket, "responses": { "200": { "description": "image/jpeg" } } } }));
    paths.insert("/live/{id}/input".into(), json!({ "post": { "summary": "A person's input while handed over: {type: click|wheel, x, y[, dx, dy]} in viewport CSS pixels, {type: text, text}, {type: key, key}.", "parameters": ticket, "responses": { "200": { "description": "ok" } } } }));
    paths.insert("/live/{id}/hand_back".into(), json!({ "post": { "summary": "Hand back to the agent, with an optional {note}; the ticket stops working.", "parameters": ticket, "responses": { "200": { "description": "ok" } } } }));
    paths.insert("/mcp".into(), json!({ "post": { "summary": "MCP Streamable HTTP (one MCP session = one Sightline session).", "responses": { "200": { "description": "JSON-RPC over SSE" } } } }));
    // An error's detail: one of its shapes, or null (not only an object, as a reply's root is).
    let mut detail = sightline_api::output_schema_of::<Option<sightline_api::ErrorDetail>>();
    if let Some(o) = detail.as_object_mut() {
        o.remove("type");
    }
    json!({
        "openapi": "3.1.0",
        "info": { "title": "Sightline", "version": env!("CARGO_PKG_VERSION"),
            "description": "A real browser for AI agents: the element-index protocol and the tool API over HTTP." },
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "schemas": {
                "Error": { "type": "object", "required": ["error"], "properties": { "error": { "type": "object",
                    "required": ["code", "message"],
                    "properties": { "code": { "type": "string" }, "message": { "type": "string" },
                        "detail": detail } } } },
                "NewSession": { "type": "object", "additionalProperties": false, "properties": {
                    "url": { "type": "string" }, "viewport": { "type": "string", "pattern": "^[0-9]+x[0-9]+$" },
                    "screenshot": { "type": "boolean", "default": true },
                    "storage_state": storage_state } },
                "Action": sightline_api::action_object_schema(),
                "StateObject": sightline_api::output_schema_of::<sightline_api::StateObject>(),
            }
        },
        "security": [{ "bearer": [] }],
        "paths": paths,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(r) = o.get("$ref").and_then(Value::as_str) {
                    out.push(r.to_string());
                }
                o.values().for_each(|x| refs(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }

    /// Every ref resolves in the document, and each tool answers its reply type's schema.
    #[test]
    fn the_document_is_self_contained_and_describes_every_reply() {
        let doc = document();
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(!all.is_empty());
        for r in &all {
            let name =
                r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("{r} points outside components"));
            assert!(doc["components"]["schemas"][name].is_object(), "{r} names no component");
        }
        for t in TOOLS {
            let op = &doc["paths"][format!("/v1/sessions/{{id}}/tools/{}", t.name)]["post"];
            let reply = &op["responses"]["200"]["content"]["application/json"]["schema"];
            assert_eq!(reply["type"], "object", "{}", t.name);
            assert!(
                reply.get("$defs").is_none() && (reply.get("properties").is_some() || reply.get("anyOf").is_some()),
                "{}",
                t.name
            );
        }
        let snapshot = &doc["paths"]["/v1/sessions/{id}/tools/get_browser_state"]["post"]["responses"]["200"];
        let shapes = snapshot["content"]["application/json"]["schema"]["anyOf"].as_array().unwrap();
        assert_eq!(shapes.len(), 2, "semantic_v2 and dom_refs_v1");
        assert_eq!(
            shapes[0]["properties"]["snapshot"]["properties"]["format"]["enum"],
            json!(["semantic_v2"]),
            "{}",
            shapes[0]
        );
        let actions = doc["components"]["schemas"]["Action"]["oneOf"].as_array().unwrap();
        assert_eq!(actions.len(), sightline_api::ACTION_TABLE.len());
        let cookie =
            &doc["components"]["schemas"]["NewSession"]["properties"]["storage_state"]["properties"]["cookies"];
        assert_eq!(cookie["items"]["required"], json!(["name", "value", "domain"]));
        let state = &doc["components"]["schemas"]["StateObject"];
        assert_eq!(state["required"], json!(["url", "page_content", "element_index", "screenshot", "state_hash"]));
    }
}
