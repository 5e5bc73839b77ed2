#![no_main]
//! The language server's message handling on an arbitrary client byte stream: an
//! `initialize` and a `didOpen` of a config go first, then the fuzzer's bytes (framed or
//! not), then a `hover`, `shutdown` and `exit`. The session must end without a panic or
//! a hang (libFuzzer's `-timeout`) once the input closes.

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

const OPEN: &str = r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///nonexistent-oomlint-fuzz/sft.yaml","languageId":"yaml","version":1,"text":"model_name_or_path: Qwen/Qwen2.5-7B\nper_device_train_batch_size: 4\n"}}}"#;
const HOVER: &str = r#"{"jsonrpc":"2.0","id":"probe","method":"textDocument/hover","params":{"textDocument":{"uri":"file:///nonexistent-oomlint-fuzz/sft.yaml"},"position":{"line":1,"character":3}}}"#;

fuzz_target!(|data: &[u8]| {
    let mut input = frame(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}"#);
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
    input.extend(frame(OPEN));
    input.extend_from_slice(data);
    // Ends a frame the fuzzer left open, whatever length it announced.
    input.extend(std::iter::repeat_n(b' ', 64));
    input.extend(b"\r\n\r\n");
    input.extend(frame(HOVER));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().build() else { return };
    runtime.block_on(async {
        let (mut client, server_input) = tokio::io::duplex(1 << 20);
        let (server_output, mut replies) = tokio::io::duplex(1 << 20);
        // Closing the client's end after the input ends the session in every case.
        tokio::spawn(async move {
            let _ = client.write_all(&input).await;
        });
        let reader = tokio::spawn(async move {
            let mut out = Vec::new();
            let _ = replies.read_to_end(&mut out).await;
            out
        });
        oomlint::lsp::serve(server_input, server_output).await;
        let _ = reader.await;
    });
    runtime.shutdown_background();
});
