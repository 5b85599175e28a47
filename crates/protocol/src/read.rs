//! Reading a client's text frame: every refusal is a typed [`Refusal`]
//! with the request id when it could be read and a plain sentence naming
//! the field, in the words of [`ClientMessage::FIELDS`].

use serde::Deserialize;
use serde_json::Value;
use spades_engine::{Card, ClientSeed, Commitment, Seat};
use uuid::Uuid;

use crate::{ClientFrame, ClientMessage, ErrorCode, PROTOCOL_VERSION};

impl ClientFrame {
    /// Reads a client's text frame. The request id is read from the raw
    /// JSON first, so a refusal echoes it even when the rest of the frame
    /// is wrong; a bid number outside 0..=13, however large, negative or
    /// written (`1e9`), is `bid_out_of_range`; every other problem is
    /// `bad_message` with a plain sentence naming the field and what it
    /// must be.
    ///
    /// # Errors
    /// The [`Refusal`] to send back.
    pub fn read(text: &str) -> Result<ClientFrame, Refusal> {
        read_frame(text)
    }
}

/// Why a text frame is not a [`ClientFrame`]: its request id when that
/// could be read, a code and a plain-English reason.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The request id, when it could be read.
    pub req: Option<u32>,
    /// `bad_message`, or `bid_out_of_range` for a bid number outside 0..=13.
    pub code: ErrorCode,
    /// What is wrong, in a plain sentence naming the field.
    pub message: String,
}

/// The highest bid.
const MAX_BID: i64 = 13;

/// A field of a message: its name, whether it is required, and what it
/// must be (the words of the refusal when it is missing or malformed).
pub type Field = (&'static str, bool, &'static str);

impl ClientMessage {
    /// Each message type with its fields, in the order they are checked.
    /// A test holds it to the message's own definition (its JSON Schema):
    /// a variant, or a field, without its entry here fails it.
    pub const FIELDS: &'static [(&'static str, &'static [Field])] = &[
        (
            "join",
            &[
                ("protocol", false, PROTOCOL),
                ("table", true, TABLE_ID),
                ("name", false, TEXT),
                ("seat", false, SEAT),
                ("invite", false, TEXT),
            ],
        ),
        ("resume", &[("protocol", false, PROTOCOL), ("table", true, TABLE_ID), ("token", false, TEXT)]),
        ("watch", &[("protocol", false, PROTOCOL), ("table", true, TABLE_ID)]),
        ("sync", &[]),
        ("start", &[("owner_token", false, TEXT)]),
        ("add_bots", &[("owner_token", false, TEXT)]),
        ("remove_bot", &[("owner_token", false, TEXT), ("seat", true, SEAT)]),
        ("move_seat", &[("owner_token", false, TEXT), ("from", true, SEAT), ("to", true, SEAT)]),
        ("invite", &[("owner_token", false, TEXT), ("seat", true, SEAT)]),
        ("bid", &[("bid", true, "a whole number from 0 to 13"), ("seq", false, SEQ)]),
        (
            "play",
            &[
                (
                    "card",
                    true,
                    "a card such as \"QH\" or \"TS\": a rank 2-9, T, J, Q, K or A, then a suit C, D, H or S",
                ),
                ("seq", false, SEQ),
            ],
        ),
        ("seed", &[("seed", true, "64 hexadecimal digits (32 random bytes)")]),
        ("commit_seed", &[("commitment", true, "64 hexadecimal digits (a SHA-256)")]),
        ("take_over", &[]),
        ("leave", &[]),
        ("closing", &[]),
        ("ping", &[]),
        ("chat", &[("text", true, TEXT)]),
        ("rematch", &[("ready", false, "true or false")]),
        ("start_rematch", &[("owner_token", false, TEXT)]),
    ];

    /// One valid message of each type in [`ClientMessage::FIELDS`], with
    /// every field given: for tests of everything that handles messages
    /// (a test fails when a type has no example).
    pub fn examples() -> Vec<ClientMessage> {
        Self::FIELDS
            .iter()
            .filter_map(|(kind, fields)| {
                let mut frame = serde_json::Map::new();
                frame.insert("type".into(), Value::from(*kind));
                for (field, ..) in *fields {
                    frame.insert((*field).to_owned(), example_value(field)?);
                }
                serde_json::from_value(Value::Object(frame)).ok()
            })
            .collect()
    }
}

/// A valid value of each field, by name.
fn example_value(field: &str) -> Option<Value> {
    let hex = || Value::from("ab".repeat(32));
    Some(match field {
        "protocol" => Value::from(PROTOCOL_VERSION),
        "table" => Value::from("67e55044-10b1-426f-9247-bb680e5fe0c8"),
        "name" => Value::from("Ann"),
        "seat" | "from" => Value::from("north"),
        "to" => Value::from("east"),
        "invite" | "token" | "owner_token" => Value::from("secret"),
        "bid" => Value::from(4),
        "seq" => Value::from(12),
        "card" => Value::from("QH"),
        "seed" | "commitment" => hex(),
        "text" => Value::from("gg"),
        "ready" => Value::from(false),
        _ => return None,
    })
}

const PROTOCOL: &str = "the protocol version, a whole number (this server speaks 2)";
const TABLE_ID: &str = "a table id (a UUID such as \"67e55044-10b1-426f-9247-bb680e5fe0c8\")";
const TEXT: &str = "a string";
const SEQ: &str = "the seq of the frame the move was chosen from, a whole number";
const SEAT: &str = "one of \"north\", \"east\", \"south\" or \"west\"";

/// A client's text quoted back in a refusal, without control characters
/// (the frame limit bounds its length).
fn quoted(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// Reads a client frame. The request id is read from the raw JSON first,
/// so a refusal echoes it even when the rest of the frame is wrong; a bid
/// number outside 0..=13, however large, negative or written (`1e9`), is
/// `bid_out_of_range`; every other problem is `bad_message` with a plain
/// sentence naming the field and what it must be.
fn read_frame(text: &str) -> Result<ClientFrame, Refusal> {
    let bad = |req: Option<u32>, message: String| Refusal { req, code: ErrorCode::BadMessage, message };
    let mut value: Value = serde_json::from_str(text).map_err(|_| {
        bad(None, "this is not JSON: a message is a JSON object such as {\"type\":\"ping\"}".to_owned())
    })?;
    // A whole bid written as a float (`1e1`, `3.0`) is that bid.
    if let Some(bid) = value.get_mut("bid")
        && let Some(f) = bid.as_f64().filter(|f| bid.is_f64() && f.fract() == 0.0 && (0.0..=13.0).contains(f))
    {
        // In range and whole, so the conversion is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let whole = f as u64;
        *bid = Value::from(whole);
    }
    // `protocol` is a number: 2 (or 2.0) is the one spoken; any other
    // number is a version this server does not speak (`unsupported_protocol`,
    // as for none), not a malformed frame.
    if let Some(protocol) = value.get_mut("protocol")
        && let Some(n) = protocol.as_f64()
    {
        *protocol = Value::from(if n == f64::from(PROTOCOL_VERSION) { PROTOCOL_VERSION } else { 0 });
    }
    let Value::Object(fields) = &value else {
        return Err(bad(
            None,
            "a message is a JSON object with a \"type\", such as {\"type\":\"ping\"}".to_owned(),
        ));
    };
    let req = match fields.get("req") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) => Some(n),
            None => {
                return Err(bad(None, format!("\"req\" must be a whole number from 0 to {}", u32::MAX)));
            }
        },
    };
    let types = || ClientMessage::FIELDS.iter().map(|(t, _)| *t).collect::<Vec<_>>().join(", ");
    let kind = match fields.get("type") {
        None => return Err(bad(req, format!("the message has no \"type\": it is one of {}", types()))),
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => return Err(bad(req, format!("\"type\" must be a string, one of {}", types()))),
    };
    let Some((kind, expected)) = ClientMessage::FIELDS.iter().find(|(t, _)| *t == kind) else {
        return Err(bad(req, format!("unknown message type \"{}\": it is one of {}", quoted(kind), types())));
    };
    if *kind == "bid"
        && let Some(Value::Number(n)) = fields.get("bid")
        && let Some(out) = bid_out_of_range(n)
    {
        return Err(Refusal { req, code: ErrorCode::BidOutOfRange, message: out });
    }
    for (field, required, what) in *expected {
        let ok = match fields.get(*field) {
            None => !required,
            Some(v) => match *field {
                "table" => Uuid::deserialize(v).is_ok(),
                "seat" | "from" | "to" if *required => Seat::deserialize(v).is_ok(),
                "seat" => Option::<Seat>::deserialize(v).is_ok(),
                "seq" => u64::deserialize(v).is_ok(),
                "bid" => u8::deserialize(v).is_ok(),
                "card" => Card::deserialize(v).is_ok(),
                "seed" => ClientSeed::deserialize(v).is_ok(),
                "commitment" => Commitment::deserialize(v).is_ok(),
                "ready" => v.is_boolean(),
                "protocol" => Option::<u32>::deserialize(v).is_ok(),
                _ => v.is_string(),
            },
        };
        if !ok {
            let message = if fields.contains_key(*field) {
                format!("\"{field}\" must be {what}")
            } else {
                format!("\"{field}\" is missing: {kind} needs a \"{field}\", {what}")
            };
            return Err(bad(req, message));
        }
    }
    ClientFrame::deserialize(&value).map_err(|_| bad(req, "the message could not be read".to_owned()))
}

/// The refusal of a bid number outside 0..=13; `None` for a bid in range
/// and for a number that is not whole (that is `bad_message`).
fn bid_out_of_range(n: &serde_json::Number) -> Option<String> {
    let shown = if let Some(i) = n.as_i64() {
        if (0..=MAX_BID).contains(&i) {
            return None;
        }
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        let f = n.as_f64()?;
        if f.fract() != 0.0 {
            return None;
        }
        if (0.0..=13.0).contains(&f) {
            return None;
        }
        if f.abs() < 1e15 { format!("{f:.0}") } else { format!("{f:e}") }
    };
    Some(format!("bid must be from 0 to 13 (got {shown})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Refusal {
        match read_frame(text) {
            Ok(frame) => panic!("{text} was read as {frame:?}"),
            Err(r) => r,
        }
    }

    /// Words of Rust and serde that must never reach a client.
    fn assert_plain(message: &str) {
        for word in [
            "u8",
            "u32",
            "i64",
            "usize",
            "struct",
            "enum",
            "ClientFrame",
            "ClientMessage",
            "invalid type",
            "invalid value",
            "variant",
            "line 1",
            "column",
        ] {
            assert!(!message.contains(word), "{message:?} says {word:?}");
        }
    }

    #[test]
    fn good_frames_are_read() {
        let f = read_frame(r#"{"type":"bid","bid":13,"req":4}"#).unwrap();
        assert_eq!(f, ClientFrame { req: Some(4), msg: ClientMessage::Bid { bid: 13, seq: None } });
        let f = read_frame(r#"{"type":"closing"}"#).unwrap();
        assert_eq!(f, ClientFrame { req: None, msg: ClientMessage::Closing });
        let t = "67e55044-10b1-426f-9247-bb680e5fe0c8";
        let f = read_frame(&format!(r#"{{"type":"join","table":"{t}","name":"Ann","seat":"west","req":1}}"#))
            .unwrap();
        assert!(matches!(f.msg, ClientMessage::Join { seat: Some(Seat::West), .. }));
        let f = read_frame(&format!(r#"{{"type":"join","table":"{t}","name":"Ann","seat":null}}"#)).unwrap();
        assert!(matches!(f.msg, ClientMessage::Join { seat: None, .. }));
    }

    #[test]
    fn chat_and_rematch_frames_are_read() {
        let f = read_frame(r#"{"type":"chat","text":"Nice nil!","req":2}"#).unwrap();
        assert_eq!(f, ClientFrame { req: Some(2), msg: ClientMessage::Chat { text: "Nice nil!".into() } });
        let f = read_frame(r#"{"type":"rematch"}"#).unwrap();
        assert_eq!(f.msg, ClientMessage::Rematch { ready: true });
        let f = read_frame(r#"{"type":"rematch","ready":false}"#).unwrap();
        assert_eq!(f.msg, ClientMessage::Rematch { ready: false });
        let f = read_frame(r#"{"type":"start_rematch","owner_token":"x"}"#).unwrap();
        assert_eq!(f.msg, ClientMessage::StartRematch { owner_token: Some("x".into()) });
        // Without the token: the connection's account is the owner's, or not.
        let f = read_frame(r#"{"type":"start_rematch"}"#).unwrap();
        assert_eq!(f.msg, ClientMessage::StartRematch { owner_token: None });
        for (text, starts) in [
            (r#"{"type":"chat","req":5}"#, "\"text\" is missing"),
            (r#"{"type":"chat","text":7,"req":5}"#, "\"text\" must be a string"),
            (r#"{"type":"rematch","ready":"yes","req":5}"#, "\"ready\" must be true or false"),
            (r#"{"type":"start_rematch","owner_token":5,"req":5}"#, "\"owner_token\" must be a string"),
        ] {
            let r = refused(text);
            assert_eq!((r.req, r.code), (Some(5), ErrorCode::BadMessage), "{text}");
            assert!(r.message.starts_with(starts), "{text}: {}", r.message);
        }
    }

    #[test]
    fn refusals_echo_req_whenever_it_can_be_read() {
        for text in [
            r#"{"req":7}"#,
            r#"{"req":7,"type":5}"#,
            r#"{"req":7,"type":"fly"}"#,
            r#"{"req":7,"type":"play","card":"ZZ"}"#,
            r#"{"req":7,"type":"play"}"#,
            r#"{"req":7,"type":"join","table":"nope","name":"Ann"}"#,
            r#"{"req":7,"type":"join","table":"67e55044-10b1-426f-9247-bb680e5fe0c8","name":3}"#,
            r#"{"req":7,"type":"join","table":"67e55044-10b1-426f-9247-bb680e5fe0c8","name":"A","seat":"up"}"#,
            r#"{"req":7,"type":"bid","bid":"three"}"#,
            r#"{"req":7,"type":"bid","bid":2.5}"#,
            r#"{"req":7,"type":"start","owner_token":[]}"#,
        ] {
            let r = refused(text);
            assert_eq!((r.req, r.code), (Some(7), ErrorCode::BadMessage), "{text}: {r:?}");
            assert_plain(&r.message);
        }
        // No readable req: not JSON, not an object, or a req that is not a u32.
        for text in [
            "nope",
            "[1]",
            "null",
            r#"{"type":"ping","req":-1}"#,
            r#"{"type":"ping","req":"7"}"#,
            r#"{"type":"ping","req":4294967296}"#,
        ] {
            let r = refused(text);
            assert_eq!((r.req, r.code), (None, ErrorCode::BadMessage), "{text}");
            assert_plain(&r.message);
        }
    }

    #[test]
    fn refusals_say_what_is_wrong_in_plain_words() {
        assert_eq!(
            refused(r#"{"type":"fly"}"#).message.split(':').next(),
            Some("unknown message type \"fly\"")
        );
        assert!(refused(r#"{"type":"play"}"#).message.starts_with("\"card\" is missing"));
        assert!(refused(r#"{"type":"play","card":"ZZ"}"#).message.starts_with("\"card\" must be a card"));
        assert!(refused(r#"{"type":"watch","table":1}"#).message.starts_with("\"table\" must be a table id"));
        assert!(refused(r#"{"type":"ping","req":-1}"#).message.starts_with("\"req\" must be a whole number"));
        assert!(refused(r#"{}"#).message.starts_with("the message has no \"type\""));
        assert!(refused(r#"{"type":"fl\u0007y"}"#).message.starts_with("unknown message type \"fly\""));
    }

    #[test]
    fn bids_outside_the_range_of_any_size_are_out_of_range() {
        for (bid, shown) in [
            ("14", "14"),
            ("255", "255"),
            ("256", "256"),
            ("1000", "1000"),
            ("-1", "-1"),
            ("1e9", "1000000000"),
            ("18446744073709551616", "1.8446744073709552e19"),
            ("-1e300", "-1e300"),
            ("13.0e1", "130"),
        ] {
            let r = refused(&format!(r#"{{"type":"bid","bid":{bid},"req":3}}"#));
            assert_eq!((r.req, r.code), (Some(3), ErrorCode::BidOutOfRange), "{bid}");
            assert_eq!(r.message, format!("bid must be from 0 to 13 (got {shown})"), "{bid}");
        }
        for bid in ["0", "13", "1e1", "0.0"] {
            let f = read_frame(&format!(r#"{{"type":"bid","bid":{bid}}}"#));
            assert!(f.is_ok(), "{bid}: {f:?}");
        }
    }

    /// The message types and fields of [`ClientMessage`]'s JSON Schema,
    /// derived from the enum itself: (type, every field, required fields).
    fn schema_variants() -> Vec<(String, Vec<String>, Vec<String>)> {
        let schema = serde_json::to_value(<ClientMessage as utoipa::PartialSchema>::schema()).unwrap();
        let names = |v: &Value| -> Vec<String> {
            let mut names: Vec<String> = match v {
                Value::Object(m) => m.keys().cloned().collect(),
                Value::Array(a) => a.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect(),
                _ => Vec::new(),
            };
            names.retain(|n| n != "type");
            names.sort();
            names
        };
        schema["oneOf"]
            .as_array()
            .expect("an internally tagged enum is a oneOf")
            .iter()
            .map(|v| {
                let kind = v["properties"]["type"]["enum"][0].as_str().expect("each variant names its type");
                (kind.to_owned(), names(&v["properties"]), names(&v["required"]))
            })
            .collect()
    }

    #[test]
    fn the_refusal_words_cover_every_message_and_field_of_the_definition() {
        let variants = schema_variants();
        let mut types: Vec<&str> = variants.iter().map(|(k, ..)| k.as_str()).collect();
        let mut listed: Vec<&str> = ClientMessage::FIELDS.iter().map(|(k, _)| *k).collect();
        types.sort_unstable();
        listed.sort_unstable();
        assert_eq!(listed, types, "ClientMessage::FIELDS lists every message type, once");
        for (kind, fields, required) in &variants {
            let (_, entry) = ClientMessage::FIELDS.iter().find(|(k, _)| k == kind).unwrap();
            let mut named: Vec<String> = entry.iter().map(|(f, ..)| (*f).to_owned()).collect();
            named.sort();
            assert_eq!(&named, fields, "the fields of {kind}");
            let mut needed: Vec<String> =
                entry.iter().filter(|(_, r, _)| *r).map(|(f, ..)| (*f).to_owned()).collect();
            needed.sort();
            assert_eq!(&needed, required, "the required fields of {kind}");
        }
    }

    #[test]
    fn there_is_an_example_of_every_message_type() {
        let examples = ClientMessage::examples();
        let kinds: Vec<Value> =
            examples.iter().map(|m| serde_json::to_value(m).unwrap()["type"].clone()).collect();
        let listed: Vec<Value> = ClientMessage::FIELDS.iter().map(|(k, _)| Value::from(*k)).collect();
        assert_eq!(kinds, listed);
    }

    #[test]
    fn every_message_type_is_read_as_its_own_definition_says() {
        for (kind, fields) in ClientMessage::FIELDS {
            let mut frame = serde_json::Map::new();
            frame.insert("type".into(), Value::from(*kind));
            frame.insert("req".into(), Value::from(9));
            for (field, required, _) in *fields {
                let value = example_value(field).unwrap_or_else(|| panic!("no example value for {field}"));
                frame.insert((*field).to_owned(), value);
                if *required {
                    // Without it: refused, naming it, with the request id.
                    let mut without = frame.clone();
                    without.remove(*field);
                    let r = ClientFrame::read(&Value::Object(without).to_string()).unwrap_err();
                    assert_eq!((r.req, r.code), (Some(9), ErrorCode::BadMessage), "{kind} without {field}");
                    assert!(r.message.starts_with(&format!("\"{field}\" is missing")), "{}", r.message);
                }
            }
            let text = Value::Object(frame.clone()).to_string();
            let read = ClientFrame::read(&text).unwrap_or_else(|r| panic!("{text}: {r:?}"));
            assert_eq!(read.req, Some(9));
            // Written back, it is the frame read.
            assert_eq!(serde_json::to_value(&read).unwrap(), Value::Object(frame), "{kind}");
        }
    }
}
