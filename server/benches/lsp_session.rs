//! A language-server session over stdio for the benchmarks (`lsp_latency`, `speed`): start
//! `oomlint server`, open one document with a GPU set, send changes, wait for messages, shut down.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Starts `binary server`, initializes it with the A10G as the target GPU and opens `text`
    /// at `uri`; returns the server and the first `publishDiagnostics`.
    pub fn open(binary: &str, uri: &str, text: &str) -> (Server, Value) {
        let mut child = Command::new(binary)
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start oomlint server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = Server { child, stdin, stdout };
        server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"capabilities": {}, "initializationOptions": {"oomlint": {"gpu": "A10G"}}}}));
        server.wait_for(|m| m["id"] == 1);
        server.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 0, "text": text}}}));
        let first = server.wait_for(|m| m["method"] == "textDocument/publishDiagnostics");
        (server, first)
    }

    pub fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write to server");
        self.stdin.flush().expect("flush");
    }

    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).expect("read header");
            match line.trim_end() {
                "" => break,
                header => length = header.strip_prefix("Content-Length: ").map_or(length, |n| n.parse().unwrap_or(0)),
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body).expect("read body");
        serde_json::from_slice(&body).expect("JSON")
    }

    /// Reads until a message satisfies `wanted`.
    pub fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.receive();
            if wanted(&message) {
                return message;
            }
        }
    }

    /// `shutdown`, `exit`, and waits for the process.
    pub fn close(mut self) {
        self.send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
        self.wait_for(|m| m["id"] == 2);
        self.send(json!({"jsonrpc": "2.0", "method": "exit"}));
        let _ = self.child.wait();
    }
}
