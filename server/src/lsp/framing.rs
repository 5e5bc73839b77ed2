//! Re-frames the client's byte stream before tower-lsp-server reads it.
//!
//! tower-lsp-server's reader stops for good at the first frame it cannot decode (bad
//! headers, invalid JSON, a body that is not JSON-RPC), which would end the session. Here
//! every complete frame is checked with the library's own message types: good frames pass
//! unchanged; a bad one becomes a request for [`INVALID_MESSAGE`], whose handler answers
//! with the JSON-RPC error (parse error, id null; or invalid request, with the sender's id
//! when it had one). Garbage between frames is skipped up to the next `Content-Length`.

use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Request, Response};

/// The method a malformed frame is replaced with; its params say which error to answer.
pub const INVALID_MESSAGE: &str = "oomlint/invalidMessage";

/// Bodies larger than this are refused rather than buffered.
const MAX_BODY: usize = 256 << 20;

/// What was wrong with a replaced frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Not JSON (or bad headers): JSON-RPC's parse error.
    Parse,
    /// JSON, but not a JSON-RPC message: invalid request.
    Invalid,
}

impl Malformed {
    pub fn as_str(self) -> &'static str {
        match self {
            Malformed::Parse => "parse",
            Malformed::Invalid => "invalid",
        }
    }
}

/// Splits a byte stream into checked frames.
#[derive(Default)]
pub struct Framer {
    pending: Vec<u8>,
}

impl Framer {
    /// Adds bytes read from the client; returns the frames now complete, ready to forward.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(frame) = self.next_frame() {
            out.push(frame);
        }
        out
    }

    fn next_frame(&mut self) -> Option<Vec<u8>> {
        let start = find(&self.pending, b"Content-Length").unwrap_or(self.pending.len().saturating_sub(14));
        self.pending.drain(..start);
        let header_end = find(&self.pending, b"\r\n\r\n")?;
        let length = content_length(&self.pending[..header_end]);
        let body_start = header_end + 4;
        let Some(length) = length.filter(|n| *n <= MAX_BODY) else {
            self.pending.drain(..body_start);
            return Some(replacement(Malformed::Parse, Value::Null));
        };
        if self.pending.len() < body_start + length {
            return None;
        }
        let body: Vec<u8> = self.pending.drain(..body_start + length).skip(body_start).collect();
        Some(check(body))
    }
}

/// The frame to forward for `body`: itself when it is a JSON-RPC message.
fn check(body: Vec<u8>) -> Vec<u8> {
    let Ok(value) = serde_json::from_slice::<Value>(&body) else {
        return replacement(Malformed::Parse, Value::Null);
    };
    let is_message = serde_json::from_value::<Response>(value.clone()).is_ok()
        || serde_json::from_value::<Request>(value.clone()).is_ok();
    if is_message {
        return frame(&body);
    }
    let id = match value.get("id") {
        Some(id @ Value::String(_)) => id.clone(),
        Some(Value::Number(n)) if n.is_i64() => Value::Number(n.clone()),
        _ => Value::Null,
    };
    replacement(Malformed::Invalid, id)
}

fn replacement(kind: Malformed, id: Value) -> Vec<u8> {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": INVALID_MESSAGE, "params": {"kind": kind.as_str()}});
    frame(request.to_string().as_bytes())
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// The `Content-Length` of a header block (`None` when missing or not a number).
fn content_length(headers: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(headers).ok()?;
    text.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim().eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(frame: &[u8]) -> Value {
        let text = std::str::from_utf8(frame).unwrap();
        serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap()
    }

    #[test]
    fn good_frames_pass_whole_even_when_split() {
        let message = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let input = [frame(message), frame(message)].concat();
        let mut framer = Framer::default();
        let (first, rest) = input.split_at(30);
        assert!(framer.push(first).is_empty());
        assert_eq!(framer.push(rest), vec![frame(message), frame(message)]);
    }

    #[test]
    fn bad_frames_become_error_requests_and_garbage_is_skipped() {
        let mut framer = Framer::default();
        let mut input = b"garbage\r\n".to_vec();
        input.extend(frame(b"{not json"));
        input.extend(frame(br#"{"id": 7, "method": 3}"#));
        input.extend(b"Content-Length: x\r\n\r\n");
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
        let out = framer.push(&input);
        let bodies: Vec<Value> = out.iter().map(|f| body(f)).collect();
        assert_eq!(
            bodies[0],
            json!({"jsonrpc": "2.0", "id": null, "method": INVALID_MESSAGE, "params": {"kind": "parse"}})
        );
        assert_eq!(
            bodies[1],
            json!({"jsonrpc": "2.0", "id": 7, "method": INVALID_MESSAGE, "params": {"kind": "invalid"}})
        );
        assert_eq!(bodies[2]["params"]["kind"], "parse");
        assert_eq!(bodies[3]["method"], "initialized");
        assert_eq!(bodies.len(), 4);
    }

    #[test]
    fn header_names_are_case_insensitive() {
        assert_eq!(content_length(b"content-length: 12\r\nContent-Type: x"), Some(12));
        assert_eq!(content_length(b"Content-Type: x"), None);
    }
}
