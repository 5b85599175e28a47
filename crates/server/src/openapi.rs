//! The OpenAPI description of the REST API (served at
//! `/api/v1/openapi.json`, checked in as `docs/openapi.json`) and the JSON
//! Schema of the WebSocket messages (`docs/protocol.schema.json`), both
//! generated from the code.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use spades_protocol::{ClientFrame, ClientMessage, ServerMessage, TableView};
use utoipa::OpenApi;

use crate::error::AppError;
use crate::{admin, people, rest};

/// The REST API, plus the WebSocket message types as components.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Spades table server",
        description = "REST API of the Spades table server. Play happens over the WebSocket at /ws: \
                       see docs/protocol.md and the ClientFrame / ServerMessage schemas below.",
        license(name = "MIT OR Apache-2.0")
    ),
    paths(
        rest::create_table,
        rest::list_tables,
        rest::table_status,
        rest::list_matches,
        rest::match_record,
        rest::healthz,
        rest::readyz,
        rest::metrics,
        people::guest,
        people::suggest_name,
        people::me,
        people::rename,
        people::sessions,
        people::issue_session,
        people::passkey_options,
        people::add_passkey,
        people::passkeys,
        people::remove_passkey,
        people::sign_in_options,
        people::passkey_sign_in,
        people::sign_in_methods,
        people::identities,
        people::export,
        people::set_password,
        people::remove_password,
        people::password_sign_in,
        people::oidc_start,
        people::oidc_callback,
        people::unlink_oidc,
        people::sign_out_everywhere,
        people::sign_out,
        people::blocks,
        people::block,
        people::unblock,
        people::report_message,
        people::report_seat,
        admin::find_accounts,
        admin::dossier,
        admin::add_sanction,
        admin::lift_sanction,
        admin::set_operator,
        admin::operators,
        admin::audit,
        admin::table_chat,
        admin::remove_chat,
        admin::close_table,
        admin::reports,
        admin::resolve_report,
    ),
    modifiers(&SessionSchemes),
    components(schemas(ClientFrame, ClientMessage, ServerMessage, TableView)),
    tags(
        (name = "tables", description = "Create, list and inspect tables"),
        (name = "matches", description = "Records of matches from the event log"),
        (name = "operations", description = "Health, readiness and metrics"),
        (name = "accounts", description = "Guest accounts, display names and sessions"),
        (name = "moderation", description = "Players' reports of a chat message or a player; for operators only (under /api/v1/admin): accounts, sanctions, the reports' queue and the audit log"),
    )
)]
struct ApiDoc;

/// The two ways a request presents its session: the `spades_session`
/// cookie (browsers) and `Authorization: Bearer` (native clients).
struct SessionSchemes;

impl utoipa::Modify for SessionSchemes {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "session_cookie",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                people::SESSION_COOKIE,
                "The session cookie set by POST /api/v1/accounts/guest (HttpOnly, SameSite=Lax)",
            ))),
        );
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A session token from POST /api/v1/accounts/guest with \"session\": \"bearer\"",
                    ))
                    .build(),
            ),
        );
    }
}

/// `GET /api/v1/openapi.json`: the document.
pub async fn json() -> Response {
    match document().to_json() {
        Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Err(_) => AppError::internal("the OpenAPI document could not be made").into_response(),
    }
}

/// The OpenAPI document: what utoipa derives from the handlers, plus what
/// the derive cannot say (see [`describe_limits`]).
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    let Ok(mut value) = serde_json::to_value(&doc) else { return doc };
    describe_limits(&mut value);
    serde_json::from_value(value).unwrap_or(doc)
}

/// What [`crate::text::clean_name`] accepts as a table name, as a regular
/// expression: white space at either end (trimmed), then 1 to 40
/// characters, none of them control characters or [`crate::text::is_spoofing`],
/// the first and last not white space.
const TABLE_NAME_PATTERN: &str = concat!(
    r"^[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*",
    r"(?:[^\x00-\x20\x7f-\xa0\u061c\u1680\u2000-\u200f\u2028-\u202f\u205f\u2060\u2066-\u2069\u3000\ufeff]",
    r"(?:[^\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]{0,38}",
    r"[^\x00-\x20\x7f-\xa0\u061c\u1680\u2000-\u200f\u2028-\u202f\u205f\u2060\u2066-\u2069\u3000\ufeff])?)",
    r"[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$",
);

/// What [`crate::moderation`] accepts as an operator's reason (besides its
/// length): no control character but the line break, and at least one
/// character that is neither a control character nor white space (Rust's
/// set, spelled out as in [`TABLE_NAME_PATTERN`]: `\s` differs between
/// regular expression dialects).
const REASON_PATTERN: &str = concat!(
    r"^[^\u0000-\u0009\u000b-\u001f\u007f-\u009f]*",
    r"[^\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]",
    r"[^\u0000-\u0009\u000b-\u001f\u007f-\u009f]*$",
);

/// A player's note (a report's text): any characters but control ones,
/// the line break aside; empty allowed.
const NOTE_PATTERN: &str = r"^[^\u0000-\u0009\u000b-\u001f\u007f-\u009f]*$";

/// Adds to the derived document what the server enforces but the derive
/// cannot say: `match_end` takes only the listed targets and hand counts
/// (and exactly one of the two), the body of `POST /api/v1/tables` may be
/// left out, and every `/api/v1` operation may be answered 429 and 503.
fn describe_limits(doc: &mut Value) {
    let targets: Vec<Value> = spades_engine::TARGET_CHOICES.iter().map(|t| json!(t)).collect();
    let hands: Vec<Value> = spades_engine::HANDS_CHOICES.iter().map(|h| json!(h)).collect();
    if let Some(ends) = doc.pointer_mut("/components/schemas/MatchEnd/oneOf").and_then(Value::as_array_mut) {
        for end in ends {
            let choices = if end.pointer("/properties/target").is_some() {
                ("target", targets.clone())
            } else {
                ("hands", hands.clone())
            };
            if let Some(field) = end.pointer_mut(&format!("/properties/{}", choices.0)) {
                field["enum"] = Value::Array(choices.1);
            }
            end["additionalProperties"] = json!(false);
        }
    }
    // A sanction is one of its kinds, each with its own fields only.
    if let Some(kinds) =
        doc.pointer_mut("/components/schemas/NewSanction/oneOf").and_then(Value::as_array_mut)
    {
        for kind in kinds {
            kind["additionalProperties"] = json!(false);
            kind["properties"]["reason"]["pattern"] = json!(REASON_PATTERN);
        }
    }
    // An operator's reason, wherever one is asked: one rule.
    for schema in ["LiftSanction", "OperatorChange", "RemoveChat", "ResolveReport", "CloseTable"] {
        if let Some(reason) = doc.pointer_mut(&format!("/components/schemas/{schema}/properties/reason")) {
            reason["pattern"] = json!(REASON_PATTERN);
        }
    }
    // A report's text: no control character but the line break; may be
    // empty or blank.
    if let Some(text) = doc.pointer_mut("/components/schemas/NewReport/properties/text") {
        text["pattern"] = json!(NOTE_PATTERN);
    }
    if let Some(name) = doc.pointer_mut("/components/schemas/CreateTable/properties/name") {
        name["pattern"] = json!(TABLE_NAME_PATTERN);
    }
    // A session's label: the table name's rule (at most 40 characters).
    if let Some(label) = doc.pointer_mut("/components/schemas/NewSession/properties/client") {
        label["pattern"] = json!(TABLE_NAME_PATTERN);
    }
    // A passkey's name: the same rule (at most 40 characters).
    if let Some(name) = doc.pointer_mut("/components/schemas/AddPasskey/properties/name") {
        name["pattern"] = json!(TABLE_NAME_PATTERN);
    }
    // A player's name: the same rule, at most PLAYER_NAME_MAX characters.
    let player = TABLE_NAME_PATTERN.replace("{0,38}", &format!("{{0,{}}}", crate::text::PLAYER_NAME_MAX - 2));
    for schema in ["GuestSignIn", "RenameAccount"] {
        if let Some(name) = doc.pointer_mut(&format!("/components/schemas/{schema}/properties/name")) {
            name["pattern"] = json!(player);
        }
    }
    if let Some(body) = doc.pointer_mut("/paths/~1api~1v1~1me~1sessions/post/requestBody") {
        body["required"] = json!(false);
    }
    if let Some(body) = doc.pointer_mut("/paths/~1api~1v1~1tables/post/requestBody") {
        body["required"] = json!(false);
        body["description"] = json!(
            "Name and options, every field optional; an empty body (no Content-Type needed) makes a table with every default"
        );
    }
    let error = json!({"application/json": {"schema": {"$ref": "#/components/schemas/ApiError"}}});
    let shared = [
        ("429", "Too many requests from this address (`rate_limited`; see `Retry-After`)"),
        (
            "503",
            "Too many requests at once (`capacity`, `Retry-After: 1`), the request took too long (`internal`) \
             or the event log does not answer (`storage_unavailable`)",
        ),
    ];
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            if !path.starts_with("/api/v1/") {
                continue;
            }
            let Some(item) = item.as_object_mut() else { continue };
            for op in item.values_mut() {
                let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                    continue;
                };
                for (status, description) in shared {
                    responses
                        .entry(status)
                        .or_insert_with(|| json!({"description": description, "content": error.clone()}));
                }
            }
        }
    }
}

/// A JSON Schema (2020-12) of the WebSocket messages: `client_message` is
/// what a client may send, `server_message` what the server sends.
pub fn protocol_schema() -> Value {
    let doc = document();
    let defs =
        doc.components.map(|c| serde_json::to_value(c.schemas).unwrap_or(Value::Null)).unwrap_or(Value::Null);
    // Components refer to each other as #/components/schemas/X.
    let text = serde_json::to_string(&defs).unwrap_or_default().replace("#/components/schemas/", "#/$defs/");
    let defs: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/spades-server/spades/docs/protocol.schema.json",
        "title": format!("Spades table protocol {} (WebSocket messages)", spades_protocol::PROTOCOL_VERSION),
        "description": "client_message: a frame a client sends; server_message: a frame the server sends. See docs/protocol.md.",
        "oneOf": [
            {"$ref": "#/$defs/ClientFrame"},
            {"$ref": "#/$defs/ServerMessage"}
        ],
        "properties": {},
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// docs/openapi.json and docs/protocol.schema.json are generated from
    /// the code; this fails when they are stale. `UPDATE_DOCS=1 cargo test
    /// -p spades-server openapi` rewrites them.
    #[test]
    fn checked_in_documents_are_current() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        let openapi = document().to_pretty_json().unwrap() + "\n";
        let schema = serde_json::to_string_pretty(&protocol_schema()).unwrap() + "\n";
        for (file, current) in [("openapi.json", openapi), ("protocol.schema.json", schema)] {
            let path = docs.join(file);
            if std::env::var_os("UPDATE_DOCS").is_some() {
                std::fs::write(&path, &current).unwrap();
            }
            let stored = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                stored == current,
                "docs/{file} is stale: run UPDATE_DOCS=1 cargo test -p spades-server openapi"
            );
        }
    }

    #[test]
    fn the_document_says_what_the_server_enforces() {
        let doc = serde_json::to_value(document()).unwrap();
        let ends = doc.pointer("/components/schemas/MatchEnd/oneOf").unwrap().as_array().unwrap();
        let choices: Vec<&Value> = ends
            .iter()
            .map(|e| {
                assert_eq!(e["additionalProperties"], json!(false));
                e.pointer("/properties/target/enum").or_else(|| e.pointer("/properties/hands/enum")).unwrap()
            })
            .collect();
        assert!(choices.contains(&&json!([200, 250, 300, 500])), "{choices:?}");
        assert!(choices.contains(&&json!([5, 9, 11])), "{choices:?}");
        assert_eq!(doc.pointer("/paths/~1api~1v1~1tables/post/requestBody/required"), Some(&json!(false)));
        let name = doc.pointer("/components/schemas/CreateTable/properties/name").unwrap();
        assert_eq!(name["pattern"], json!(TABLE_NAME_PATTERN));
        let player = doc.pointer("/components/schemas/RenameAccount/properties/name/pattern").unwrap();
        assert!(player.as_str().unwrap().contains("{0,22}"), "{player}");
        let limit = |path: &str| {
            let params = doc.pointer(&format!("/paths/{path}/get/parameters")).unwrap().as_array().unwrap();
            let limit = params.iter().find(|p| p["name"] == "limit").unwrap();
            (limit["schema"]["minimum"].clone(), limit["schema"]["maximum"].clone())
        };
        assert_eq!(limit("~1api~1v1~1tables"), (json!(1), json!(1000)));
        assert_eq!(limit("~1api~1v1~1matches"), (json!(1), json!(200)));
        for (path, item) in doc["paths"].as_object().unwrap() {
            if !path.starts_with("/api/v1/") {
                continue;
            }
            for (method, op) in item.as_object().unwrap() {
                for status in ["429", "503"] {
                    assert!(op["responses"][status].is_object(), "{method} {path} lacks {status}");
                }
            }
        }
        for status in ["400", "403", "413", "415"] {
            assert!(doc["paths"]["/api/v1/tables"]["post"]["responses"][status].is_object(), "{status}");
        }
        assert!(doc["paths"]["/api/v1/tables"]["get"]["responses"]["400"].is_object());
        assert!(doc["paths"]["/api/v1/matches"]["get"]["responses"]["400"].is_object());
    }

    #[test]
    fn every_path_and_message_is_described() {
        let doc = serde_json::to_value(document()).unwrap();
        for path in [
            "/api/v1/tables",
            "/api/v1/tables/{id}",
            "/api/v1/matches",
            "/api/v1/matches/{id}",
            "/healthz",
            "/api/v1/accounts/guest",
            "/api/v1/names/suggestion",
            "/api/v1/me",
            "/api/v1/me/sessions",
            "/api/v1/me/sessions/{session}",
        ] {
            assert!(doc["paths"][path].is_object(), "{path} missing");
        }
        let schema = protocol_schema();
        let text = schema.to_string();
        assert!(!text.contains("#/components/"), "dangling OpenAPI reference");
        // Every message type of both directions appears as a tag value.
        for tag in [
            "join",
            "resume",
            "watch",
            "start",
            "add_bots",
            "bid",
            "play",
            "take_over",
            "leave",
            "closing",
            "ping",
        ] {
            assert!(text.contains(&format!("\"{tag}\"")), "client message {tag} missing");
        }
        for tag in ["hello", "joined", "resumed", "watching", "ack", "error", "view", "pong"] {
            assert!(text.contains(&format!("\"{tag}\"")), "server message {tag} missing");
        }
        for code in spades_protocol::ErrorCode::ALL {
            assert!(text.contains(&format!("\"{}\"", code.as_str())), "error code {code} missing");
        }
        // Every $ref resolves.
        let defs = schema["$defs"].as_object().unwrap();
        for (i, _) in text.match_indices("#/$defs/") {
            let name: String = text[i + 8..].chars().take_while(|c| *c != '"').collect();
            assert!(defs.contains_key(&name), "unresolved $ref {name}");
        }
    }
}
