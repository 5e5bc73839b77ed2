//! A JSON-RPC client for `oomlint server` over the real binary's stdio.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(20);

pub struct Session {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    incoming: Receiver<Value>,
    /// Messages read while waiting for something else.
    backlog: VecDeque<Value>,
    next_id: i64,
    pub initialize_result: Value,
}

fn write_frame(stdin: &Mutex<ChildStdin>, body: &str) {
    let mut stdin = stdin.lock().unwrap();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    stdin.flush().unwrap();
}

/// Reads frames until the server closes stdout; answers its requests (code lens refresh)
/// with `null` and passes every message on.
fn read_frames(stdout: impl Read, stdin: Arc<Mutex<ChildStdin>>, out: std::sync::mpsc::Sender<Value>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length.expect("Content-Length header")];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let message: Value = serde_json::from_slice(&body).expect("server sent JSON");
        if message.get("id").is_some() && message.get("method").is_some() {
            let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": null});
            write_frame(&stdin, &reply.to_string());
        }
        if out.send(message).is_err() {
            return;
        }
    }
}

impl Session {
    /// Starts the server and completes the `initialize` handshake.
    pub fn start(capabilities: Value, initialization_options: Value) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_oomlint"))
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start oomlint server");
        let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = channel();
        let writer = Arc::clone(&stdin);
        thread::spawn(move || read_frames(stdout, writer, tx));
        let mut session =
            Session { child, stdin, incoming, backlog: VecDeque::new(), next_id: 1, initialize_result: Value::Null };
        let params = json!({"processId": null, "rootUri": null, "capabilities": capabilities,
            "initializationOptions": initialization_options});
        session.initialize_result = session.request("initialize", params);
        session.notify("initialized", json!({}));
        session
    }

    /// A session with default capabilities and `{"oomlint": {"gpu": gpu}}`.
    pub fn with_gpu(gpu: &str) -> Session {
        Session::start(json!({}), json!({"oomlint": {"gpu": gpu}}))
    }

    pub fn send_raw(&mut self, body: &str) {
        write_frame(&self.stdin, body);
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send_raw(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        self.wait(|m| m["id"] == id && m.get("method").is_none())
    }

    /// Sends a request and returns its `result`, failing on an error response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// The next message that satisfies `wanted` (others stay queued, in order).
    pub fn wait(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&wanted) {
            return self.backlog.remove(i).unwrap();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(message) => self.backlog.push_back(message),
                Err(RecvTimeoutError::Timeout) => panic!("timed out; unmatched messages: {:?}", self.backlog),
                Err(RecvTimeoutError::Disconnected) => panic!("server exited; unmatched messages: {:?}", self.backlog),
            }
        }
    }

    /// The params of the next notification `method`.
    pub fn notification(&mut self, method: &str) -> Value {
        self.wait(|m| m["method"] == method && m.get("id").is_none())["params"].clone()
    }

    /// The next `publishDiagnostics` for `uri`.
    pub fn diagnostics(&mut self, uri: &str) -> Value {
        self.wait(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)["params"].clone()
    }

    /// Opens a document and returns its first published diagnostics.
    pub fn open(&mut self, uri: &str, text: &str) -> Value {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
        self.diagnostics(uri)
    }

    /// Replaces the whole text.
    pub fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// `shutdown` then `exit`; returns the exit status.
    pub fn shutdown(mut self) -> ExitStatus {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.exit_status()
    }

    pub fn exit_status(mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "server did not exit");
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
