#![no_main]
//! The language server's message handling on an arbitrary client byte stream: an
//! `initialize` (whose reply is awaited, as a client must), then `initialized`, a `didOpen`
//! of a config, the fuzzer's bytes (framed or not), a `hover`, `shutdown` and `exit`. The
//! session must end without a panic or a hang (libFuzzer's `-timeout`) once the input closes.

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}"#;
const OPEN: &str = r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///nonexistent-oomlint-fuzz/sft.yaml","languageId":"yaml","version":1,"text":"model_name_or_path: Qwen/Qwen2.5-7B\nper_device_train_batch_size: 4\n"}}}"#;
const HOVER: &str = r#"{"jsonrpc":"2.0","id":"probe","method":"textDocument/hover","params":{"textDocument":{"uri":"file:///nonexistent-oomlint-fuzz/sft.yaml"},"position":{"line":1,"character":3}}}"#;

fuzz_target!(|data: &[u8]| {
    let mut rest = frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    rest.extend(frame(OPEN));
    rest.extend_from_slice(data);
    // Ends a frame the fuzzer left open, whatever length it announced.
    rest.extend(std::iter::repeat_n(b' ', 64));
    rest.extend(b"\r\n\r\n");
    rest.extend(frame(HOVER));
    rest.extend(frame(r#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#));
    rest.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().build() else { return };
    runtime.block_on(async {
        let (mut client, server_input) = tokio::io::duplex(1 << 20);
        let (server_output, mut replies) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let _ = client.write_all(&frame(INITIALIZE)).await;
            let mut seen = Vec::new();
            let mut buffer = [0; 4096];
            let reply_to_initialize = br#""id":0"#;
            while !seen.windows(reply_to_initialize.len()).any(|w| w == reply_to_initialize) {
                match replies.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => seen.extend_from_slice(&buffer[..n]),
                }
            }
            let _ = client.write_all(&rest).await;
            // Closing the client's end ends the session; the replies are drained meanwhile.
            drop(client);
            while let Ok(1..) = replies.read(&mut buffer).await {}
        });
        oomlint::lsp::serve(server_input, server_output).await;
    });
    runtime.shutdown_background();
});
