//! `oomlint server` over the real binary's stdio: every feature with exact JSON
//! expectations (literal where the value is the server's own, computed through the
//! library or snapshotted where it comes from rules, schemas and the estimator).

#[path = "lsp/session.rs"]
mod session;

use oomlint::analysis::{analyze_text, Options};
use oomlint::catalog::resolve_gpu;
use oomlint::estimate::Estimate;
use serde_json::{json, Value};
use session::Session;
use std::path::Path;

fn fixture(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(path)).unwrap()
}

const QLORA: &str = "file:///project/qlora-precision.yaml";
const SFT: &str = "file:///project/sft-qwen2.5-7b.yaml";

/// The estimate the library computes for the SFT fixture on an A10G.
fn sft_estimate() -> Estimate {
    let options = Options { gpu: Some(resolve_gpu("A10G").unwrap().clone()), ..Options::default() };
    analyze_text(Path::new("/project/sft-qwen2.5-7b.yaml"), fixture("trl/sft-qwen2.5-7b.yaml"), &options)
        .estimate
        .expect("the SFT fixture has an estimate")
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap()
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

fn codes(published: &Value) -> Vec<String> {
    published["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect()
}

fn position(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

fn range(line: u32, start: u32, end: u32) -> Value {
    json!({"start": position(line, start), "end": position(line, end)})
}

fn hover(session: &mut Session, uri: &str, line: u32, character: u32) -> Value {
    session.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position(line, character)}))
}

fn code_actions(session: &mut Session, uri: &str, at: Value, diagnostics: Value) -> Vec<Value> {
    let params = json!({"textDocument": {"uri": uri}, "range": at, "context": {"diagnostics": diagnostics}});
    session.request("textDocument/codeAction", params).as_array().unwrap().clone()
}

#[test]
fn initialize_advertises_the_features_and_negotiates_utf8() {
    let utf8 = Session::start(json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}), Value::Null);
    assert_eq!(
        utf8.initialize_result,
        json!({
            "capabilities": {
                "positionEncoding": "utf-8",
                "textDocumentSync": {"openClose": true, "change": 2},
                "notebookDocumentSync": {
                    "notebookSelector": [{"notebook": "jupyter-notebook", "cells": [{"language": "python"}]}]
                },
                "hoverProvider": true,
                "completionProvider": {},
                "codeActionProvider": {"codeActionKinds": ["quickfix", "refactor.rewrite", "source.fixAll.oomlint"]},
                "codeLensProvider": {"resolveProvider": false},
                "executeCommandProvider": {"commands": ["oomlint.showEstimate"]}
            },
            "serverInfo": {"name": "oomlint", "version": env!("CARGO_PKG_VERSION")}
        })
    );
    assert!(utf8.shutdown().success());
    let utf16 = Session::start(json!({"general": {"positionEncodings": ["utf-16"]}}), Value::Null);
    assert_eq!(utf16.initialize_result["capabilities"]["positionEncoding"], "utf-16");
}

#[test]
fn diagnostics_carry_the_version_and_fix_data_and_clear_on_close() {
    let mut session = Session::start(json!({}), Value::Null);
    let text = fixture("litgpt/qlora-precision.yaml");
    let published = session.open(QLORA, &text);
    assert_eq!(published["version"], 1);
    assert_eq!(codes(&published), ["OOM101"]);
    let diagnostic = &published["diagnostics"][0];
    assert_eq!(diagnostic["source"], "oomlint");
    assert_eq!(diagnostic["severity"], 1);
    assert_eq!(diagnostic["range"], range(7, 11, 21), "the span of `bf16-mixed`");
    assert_eq!(diagnostic["data"]["rule"], "litgpt-quantize-mixed-precision");
    assert_eq!(diagnostic["data"]["fixes"][0]["edits"], json!([{"range": range(7, 11, 21), "newText": "bf16-true"}]));
    insta::assert_snapshot!("qlora_diagnostics", pretty(&published));

    session.change(QLORA, 2, &text.replace("bf16-mixed", "bf16-true"));
    assert_eq!(session.diagnostics(QLORA), json!({"uri": QLORA, "diagnostics": [], "version": 2}));

    session.notify("textDocument/didClose", json!({"textDocument": {"uri": QLORA}}));
    assert_eq!(session.diagnostics(QLORA), json!({"uri": QLORA, "diagnostics": []}));
    assert!(session.shutdown().success());
}

#[test]
fn positions_follow_the_negotiated_encoding() {
    // The duplicate `seed` follows a key with two-byte, four-byte (two UTF-16 units) characters.
    let text = "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-3B\nprecision: bf16-true\n\
                data: {\"é😀\": 1, seed: 2, seed: 3}\n";
    let uri = "file:///project/lora.yaml";
    for (encodings, start) in [(json!(["utf-16"]), 26), (json!(["utf-8"]), 29)] {
        let mut session = Session::start(json!({"general": {"positionEncodings": encodings}}), Value::Null);
        let published = session.open(uri, text);
        let duplicate = published["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "OOM002").unwrap();
        assert_eq!(duplicate["range"], range(2, start, start + 4), "{encodings}");
        assert_eq!(duplicate["relatedInformation"][0]["location"]["range"], range(2, start - 9, start - 5));
    }
}

#[test]
fn hover_on_a_memory_key_breaks_the_estimate_down() {
    let mut session = Session::with_gpu("A10G");
    session.open(SFT, &fixture("trl/sft-qwen2.5-7b.yaml"));
    let result = hover(&mut session, SFT, 10, 5);
    assert_eq!(result["range"], range(10, 0, 27), "the key `per_device_train_batch_size`");
    assert_eq!(result["contents"]["kind"], "markdown");
    let markdown = result["contents"]["value"].as_str().unwrap();
    let estimate = sft_estimate();
    let peak =
        format!("**Peak ≈ {:.2} GiB** in the {} phase", gib(estimate.peak.device_bytes), estimate.peak.phase.as_str());
    assert!(markdown.starts_with("**`per_device_train_batch_size`** · trl-sft\n\n"), "{markdown}");
    assert!(markdown.contains(&peak), "{markdown}");
    assert!(markdown.contains("on A10G: **does not fit**"), "{markdown}");
    for component in estimate.components.iter().filter(|c| c.live_in.contains(&estimate.peak.phase)) {
        let row = format!("| {} | {:.2} | `", component.name, gib(component.bytes));
        assert!(markdown.contains(&row), "missing {row} in {markdown}");
    }
    // The timeline: one line per phase in order, the peak phase named.
    let timeline = estimate.timeline();
    let mut at = markdown.find("**Timeline**").expect("a timeline");
    for step in &timeline {
        let row = format!("{} {:.2} GiB", step.phase.as_str(), gib(step.allocated_bytes));
        let line = if step.peak { format!("- **{row}** ◀ peak\n") } else { format!("- {row}\n") };
        at += markdown[at..].find(&line).unwrap_or_else(|| panic!("missing {line} in order in {markdown}"));
    }
    assert_eq!(markdown.matches("◀ peak").count(), 1, "{markdown}");
    assert!(markdown.contains(&format!("- **{} ", estimate.peak.phase.as_str())), "{markdown}");
    assert!(markdown.contains("**This key:** halved (1): −") && markdown.contains("doubled (4): +"), "{markdown}");
    insta::assert_snapshot!("sft_batch_hover", markdown);
}

#[test]
fn hover_prices_the_other_values_of_enums_and_booleans() {
    let mut session = Session::with_gpu("A10G");
    session.open(QLORA, &fixture("litgpt/qlora-precision.yaml"));
    let precision = hover(&mut session, QLORA, 7, 2);
    let markdown = precision["contents"]["value"].as_str().unwrap();
    assert!(markdown.contains("**This key:** "), "{markdown}");
    assert!(markdown.contains("`bf16-true`: −") && markdown.contains("`32-true`: +"), "{markdown}");
    assert!(!markdown.contains("`bf16-mixed`:"), "the current value is not priced: {markdown}");
    let line = fixture("litgpt/qlora-precision.yaml").lines().position(|l| l == "lora_mlp: true").unwrap() as u32;
    let lora_mlp = hover(&mut session, QLORA, line, 2);
    assert!(lora_mlp["contents"]["value"].as_str().unwrap().contains("**This key:** set to false: −"));
}

#[test]
fn hover_on_a_plain_key_shows_its_schema_documentation() {
    let mut session = Session::with_gpu("A10G");
    session.open(SFT, &fixture("trl/sft-qwen2.5-7b.yaml"));
    let result = hover(&mut session, SFT, 24, 3);
    let markdown = result["contents"]["value"].as_str().unwrap();
    assert!(markdown.starts_with("**`output_dir`** · trl-sft\n\n"), "{markdown}");
    assert!(!markdown.contains("GiB"), "output_dir moves no memory: {markdown}");
    insta::assert_snapshot!("sft_output_dir_hover", markdown);
    assert_eq!(hover(&mut session, SFT, 9999, 9999), Value::Null, "out-of-range positions clamp to the end");
    assert_eq!(hover(&mut session, "file:///nowhere.yaml", 0, 0), Value::Null);
}

#[test]
fn quick_fixes_come_from_diagnostic_data_and_rules_can_be_disabled_per_line() {
    let mut session = Session::start(json!({}), Value::Null);
    let text = fixture("litgpt/qlora-precision.yaml");
    let published = session.open(QLORA, &text);
    let diagnostic = published["diagnostics"][0].clone();
    let actions = code_actions(&mut session, QLORA, range(7, 11, 11), json!([diagnostic]));
    insta::assert_snapshot!("qlora_actions", pretty(&json!(actions)));
    let disable =
        actions.iter().find(|a| a["title"] == "Disable litgpt-quantize-mixed-precision (OOM101) for this line");
    let disable = disable.expect("a disable action");
    assert_eq!(disable["kind"], "quickfix");
    assert_eq!(
        disable["edit"],
        json!({"changes": {QLORA: [{"range": range(7, 0, 0), "newText": "# oomlint: ignore[OOM101]\n"}]}})
    );
    let fix =
        actions.iter().find(|a| a["kind"] == "quickfix" && a["edit"]["changes"][QLORA][0]["newText"] == "bf16-true");
    assert_eq!(fix.expect("the rule's fix")["diagnostics"], json!([diagnostic]));

    // Applying the suppression silences the finding.
    let lines: Vec<&str> = text.lines().collect();
    let suppressed = format!("{}\n# oomlint: ignore[OOM101]\n{}\n", lines[..7].join("\n"), lines[7..].join("\n"));
    session.change(QLORA, 2, &suppressed);
    let republished = session.diagnostics(QLORA);
    assert_eq!(republished["version"], 2);
    assert_eq!(codes(&republished), Vec::<String>::new());

    // Hovering the code in the comment shows the rule's documentation.
    let on_code = hover(&mut session, QLORA, 7, 22);
    assert_eq!(on_code["range"], range(7, 18, 24));
    let markdown = on_code["contents"]["value"].as_str().unwrap();
    let rule = oomlint::rules::find("OOM101").unwrap();
    assert_eq!(markdown, format!("**OOM101** · `litgpt-quantize-mixed-precision`\n\n{}", rule.doc()));
}

#[test]
fn fix_all_applies_every_safe_fix_in_one_edit() {
    let mut session = Session::start(json!({}), Value::Null);
    session.open(QLORA, &fixture("litgpt/qlora-precision.yaml"));
    let only = json!({"diagnostics": [], "only": ["source.fixAll"]});
    let params = json!({"textDocument": {"uri": QLORA}, "range": range(0, 0, 0), "context": only});
    let actions = session.request("textDocument/codeAction", params);
    assert_eq!(
        actions,
        json!([{
            "title": "Fix all safe oomlint findings",
            "kind": "source.fixAll.oomlint",
            "edit": {"changes": {QLORA: [{"range": range(7, 11, 21), "newText": "bf16-true"}]}}
        }])
    );
    let quickfix_only = json!({"diagnostics": [], "only": ["quickfix"]});
    let params = json!({"textDocument": {"uri": QLORA}, "range": range(0, 0, 0), "context": quickfix_only});
    assert_eq!(session.request("textDocument/codeAction", params), json!([]));
}

#[test]
fn a_lever_is_one_edit_of_every_key_it_touches() {
    let mut session = Session::with_gpu("A10G");
    session.open(SFT, &fixture("trl/sft-qwen2.5-7b.yaml"));
    let actions = code_actions(&mut session, SFT, range(10, 3, 3), json!([]));
    let estimate = sft_estimate();
    let lever = estimate.levers.iter().find(|l| l.fixes.first().is_some_and(|f| f.edits.len() == 2)).unwrap();
    let title = format!(
        "Halve per_device_train_batch_size (2→1) and double gradient_accumulation_steps (8→16): saves {:.1} GiB",
        gib(lever.saves_bytes)
    );
    let action = actions.iter().find(|a| a["kind"] == "refactor.rewrite").expect("a lever action");
    assert_eq!(
        action,
        &json!({
            "title": title,
            "kind": "refactor.rewrite",
            "edit": {"changes": {SFT: [
                {"range": range(10, 29, 30), "newText": "1"},
                {"range": range(11, 29, 30), "newText": "16"}
            ]}}
        })
    );
    // On a line no lever edits, none is offered.
    let elsewhere = code_actions(&mut session, SFT, range(24, 0, 0), json!([]));
    assert!(elsewhere.iter().all(|a| a["kind"] != "refactor.rewrite"), "{elsewhere:?}");
}

#[test]
fn a_fix_of_a_launch_edits_the_file_it_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("launch")).unwrap();
    let conf = dir.path().join("launch/ds_zero2.conf");
    std::fs::write(&conf, fixture("rules/deepspeed-batch-arithmetic/launch/ds_zero2.conf")).unwrap();
    let script = dir.path().join("fail-launch-world.sh");
    let uri = format!("file://{}", script.display());
    let mut session = Session::start(json!({}), Value::Null);
    let published = session.open(&uri, &fixture("rules/deepspeed-batch-arithmetic/fail-launch-world.sh"));
    assert_eq!(codes(&published), ["OOM411"]);
    let diagnostic = published["diagnostics"][0].clone();
    let at = diagnostic["range"].clone();
    let actions = code_actions(&mut session, &uri, at, json!([diagnostic]));
    let fix = actions.iter().find(|a| a["title"].as_str().is_some_and(|t| t.starts_with("Set train_batch_size")));
    let conf_uri = format!("file://{}", conf.display());
    // The value is set in the DeepSpeed file: the edit is there, none in the script.
    assert_eq!(
        fix.expect("the rule's fix")["edit"],
        json!({"changes": {conf_uri: [{"range": range(1, 22, 24), "newText": "32"}]}})
    );
}

#[test]
fn completion_offers_missing_keys_and_enum_and_boolean_values() {
    let mut session = Session::start(json!({}), Value::Null);
    let text = fixture("litgpt/qlora-precision.yaml").replace("  epochs: 4\n", "  epochs: 4\n  lr\n");
    session.open(QLORA, &text);
    let line = text.lines().position(|l| l == "  lr").unwrap() as u32;
    let params = json!({"textDocument": {"uri": QLORA}, "position": position(line, 4)});
    let items = session.request("textDocument/completion", params);
    let labels: Vec<&str> = items.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"lr_warmup_fraction"), "{labels:?}");
    assert!(labels.contains(&"max_steps"), "{labels:?}");
    assert!(!labels.contains(&"epochs") && !labels.contains(&"micro_batch_size"), "keys already present: {labels:?}");
    assert!(!labels.contains(&"precision"), "top-level keys belong elsewhere: {labels:?}");
    let warmup = items.as_array().unwrap().iter().find(|i| i["label"] == "lr_warmup_fraction").unwrap();
    assert_eq!(warmup["kind"], 10, "property");
    assert_eq!(warmup["textEdit"], json!({"range": range(line, 2, 4), "newText": "lr_warmup_fraction: "}));
    assert_eq!(warmup["documentation"]["kind"], "markdown");

    let precision_line = text.lines().position(|l| l.starts_with("precision:")).unwrap() as u32;
    let edited = text.replace("precision: bf16-mixed", "precision: bf");
    session.change(QLORA, 2, &edited);
    session.diagnostics(QLORA);
    let params = json!({"textDocument": {"uri": QLORA}, "position": position(precision_line, 13)});
    let values = session.request("textDocument/completion", params);
    let bf16_true = values.as_array().unwrap().iter().find(|i| i["label"] == "bf16-true").expect("bf16-true");
    assert_eq!(bf16_true["textEdit"], json!({"range": range(precision_line, 11, 13), "newText": "bf16-true"}));
    assert_eq!(bf16_true["kind"], 12, "value");

    let mut session = Session::start(json!({}), Value::Null);
    let sft = fixture("trl/sft-qwen2.5-7b.yaml").replace("packing: true", "packing: ");
    session.open(SFT, &sft);
    let line = sft.lines().position(|l| l.starts_with("packing:")).unwrap() as u32;
    let params = json!({"textDocument": {"uri": SFT}, "position": position(line, 9)});
    let values = session.request("textDocument/completion", params);
    let labels: Vec<&str> = values.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["true", "false"]);
}

#[test]
fn the_code_lens_summarises_the_estimate() {
    let mut session = Session::with_gpu("A10G");
    session.open(SFT, &fixture("trl/sft-qwen2.5-7b.yaml"));
    let lenses = session.request("textDocument/codeLens", json!({"textDocument": {"uri": SFT}}));
    let estimate = sft_estimate();
    let gpu = resolve_gpu("A10G").unwrap();
    let title = format!(
        "≈ {:.1} GiB of {:.1} GiB on A10G — does not fit",
        gib(estimate.peak.device_bytes),
        gib(gpu.memory_bytes)
    );
    assert_eq!(
        lenses,
        json!([{"range": range(0, 0, 0), "command": {"title": title, "command": "oomlint.showEstimate", "arguments": [SFT]}}])
    );
    let shown =
        session.request("workspace/executeCommand", json!({"command": "oomlint.showEstimate", "arguments": [SFT]}));
    assert_eq!(shown["summary"], title);
    assert_eq!(shown["estimate"]["peak"]["device_bytes"], estimate.peak.device_bytes);
    assert!(shown["markdown"].as_str().unwrap().contains("| component | GiB |"));

    let mut without_gpu = Session::start(json!({}), Value::Null);
    without_gpu.open(SFT, &fixture("trl/sft-qwen2.5-7b.yaml"));
    let lenses = without_gpu.request("textDocument/codeLens", json!({"textDocument": {"uri": SFT}}));
    let title = lenses[0]["command"]["title"].as_str().unwrap();
    assert!(title.ends_with("; set oomlint.gpu to judge the fit"), "{title}");
}

#[test]
fn configuration_changes_republish_every_open_document() {
    let mut session = Session::start(json!({"workspace": {"codeLens": {"refreshSupport": true}}}), Value::Null);
    let first = session.open(SFT, &fixture("trl/sft-qwen2.5-7b.yaml"));
    assert!(!codes(&first).contains(&"OOM601".to_string()), "no GPU, no verdict");

    session.notify("workspace/didChangeConfiguration", json!({"settings": {"oomlint": {"gpu": "A10G"}}}));
    let with_gpu = session.diagnostics(SFT);
    assert_eq!(with_gpu["version"], 1);
    assert!(codes(&with_gpu).contains(&"OOM601".to_string()), "{with_gpu}");
    let refresh = session.wait(|m| m["method"] == "workspace/codeLens/refresh");
    assert_eq!(refresh["params"], Value::Null, "the summary lens is refreshed: {refresh}");

    // A payload without oomlint's settings (pull-model clients send null) changes nothing.
    session.notify("workspace/didChangeConfiguration", json!({"settings": null}));
    let lenses = session.request("textDocument/codeLens", json!({"textDocument": {"uri": SFT}}));
    assert!(lenses[0]["command"]["title"].as_str().unwrap().contains("on A10G"), "{lenses}");
    let settings = json!({"settings": {"oomlint": {"gpu": "A10G", "ignore": ["exceeds-gpu-memory"]}}});
    session.notify("workspace/didChangeConfiguration", settings);
    let ignored = session.diagnostics(SFT);
    assert!(!codes(&ignored).contains(&"OOM601".to_string()), "{ignored}");

    session.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"oomlint": {"gpu": "A10G", "select": ["OOM6"]}}}),
    );
    assert_eq!(codes(&session.diagnostics(SFT)), ["OOM601"]);

    session.notify("workspace/didChangeConfiguration", json!({"settings": {"oomlint": {"gpu": "Z99"}}}));
    let message = session.notification("window/showMessage");
    assert_eq!(message["type"], 2, "a warning");
    assert!(message["message"].as_str().unwrap().contains("unknown GPU `Z99`"), "{message}");
    assert!(session.shutdown().success());
}

#[test]
fn project_settings_apply_and_a_modeline_wins() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("oomlint.toml"), "gpu = \"A10G\"\n").unwrap();
    let file = dir.path().join("sft.yaml");
    let text = fixture("trl/sft-qwen2.5-7b.yaml");
    std::fs::write(&file, &text).unwrap();
    let uri = format!("file://{}", file.display());
    let mut session = Session::start(json!({}), Value::Null);
    assert!(codes(&session.open(&uri, &text)).contains(&"OOM601".to_string()), "oomlint.toml names the A10G");
    session.change(&uri, 2, &format!("# oomlint: gpu=H200\n{text}"));
    let on_h200 = session.diagnostics(&uri);
    assert_eq!(on_h200["version"], 2);
    assert!(!codes(&on_h200).contains(&"OOM601".to_string()), "{on_h200}");
}

#[test]
fn a_project_file_that_changes_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sft.yaml");
    let text = fixture("trl/sft-qwen2.5-7b.yaml");
    std::fs::write(&file, &text).unwrap();
    let uri = format!("file://{}", file.display());
    let watching = json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let mut session = Session::start(watching, Value::Null);
    let registration = session.wait(|m| m["method"] == "client/registerCapability");
    let watchers = registration["params"]["registrations"][0]["registerOptions"]["watchers"].clone();
    for glob in ["**/oomlint.toml", "**/pyproject.toml", "**/requirements*.txt"] {
        assert!(watchers.as_array().unwrap().iter().any(|w| w["globPattern"] == glob), "{glob}: {registration}");
    }
    assert!(!codes(&session.open(&uri, &text)).contains(&"OOM601".to_string()), "no GPU yet");

    std::fs::write(dir.path().join("oomlint.toml"), "gpu = \"A10G\"\n").unwrap();
    let settings_uri = format!("file://{}", dir.path().join("oomlint.toml").display());
    session.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": settings_uri, "type": 1}]}));
    let on_a10g = session.diagnostics(&uri);
    assert_eq!(on_a10g["version"], 1);
    assert!(codes(&on_a10g).contains(&"OOM601".to_string()), "the new oomlint.toml names the A10G: {on_a10g}");
    assert!(session.shutdown().success());
}

#[test]
fn survives_malformed_messages_unknown_documents_and_bad_edits() {
    let mut session = Session::start(json!({}), Value::Null);
    session.send_raw("{this is not json");
    let error = session.wait(|m| m.get("error").is_some());
    assert_eq!(error["error"]["code"], -32700, "parse error: {error}");
    session.send_raw(r#"{"jsonrpc":"2.0","id":"x","method":"textDocument/hover","params":{"nonsense":true}}"#);
    let invalid = session.wait(|m| m["id"] == "x");
    assert_eq!(invalid["error"]["code"], -32602, "invalid params: {invalid}");
    session.change("file:///never-opened.yaml", 5, "a: 1");
    session.notify("textDocument/didClose", json!({"textDocument": {"uri": "file:///never-opened.yaml"}}));

    // A ranged edit past the end clamps to the end of the text.
    session.open(QLORA, "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-3B\n");
    let change = json!({"range": range(99, 0, 120), "text": "precision: bf16-mixed\nquantize: bnb.nf4\n"});
    session.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": QLORA, "version": 2}, "contentChanges": [change]}),
    );
    let published = session.diagnostics(QLORA);
    assert_eq!(published["version"], 2);
    assert_eq!(codes(&published), ["OOM101"]);
    assert_eq!(published["diagnostics"][0]["range"], range(1, 11, 21));

    let unknown = session.call("workspace/executeCommand", json!({"command": "nope", "arguments": []}));
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(
        session.request("textDocument/codeLens", json!({"textDocument": {"uri": "file:///x.yaml"}})),
        Value::Null
    );
    assert!(session.shutdown().success());
}

#[test]
fn exit_without_shutdown_is_an_error_status() {
    let mut session = Session::start(json!({}), Value::Null);
    session.notify("exit", Value::Null);
    assert_eq!(session.exit_status().code(), Some(1));
}

#[test]
fn many_documents_and_rapid_changes_keep_their_versions() {
    let mut session = Session::start(json!({}), Value::Null);
    let qlora = fixture("litgpt/qlora-precision.yaml");
    let other = "file:///project/other/qlora-precision.yaml";
    session.open(QLORA, &qlora);
    session.open(other, &qlora);
    for version in 2..=30 {
        let text = if version % 2 == 0 { qlora.replace("bf16-mixed", "bf16-true") } else { qlora.clone() };
        session.change(QLORA, version, &text);
    }
    let last = session.wait(|m| m["params"]["uri"] == QLORA && m["params"]["version"] == 30);
    assert_eq!(codes(&last["params"]), Vec::<String>::new());
    session.notify("textDocument/didClose", json!({"textDocument": {"uri": QLORA}}));
    // The close's publication carries no version; earlier versions may still be queued.
    let closed = session.wait(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == QLORA
            && m["params"].get("version").is_none_or(Value::is_null)
    });
    assert_eq!(closed["params"]["diagnostics"], json!([]));
    let hover_other = hover(&mut session, other, 7, 3);
    assert!(hover_other["contents"]["value"].as_str().unwrap().starts_with("**`precision`**"));
    assert_eq!(hover(&mut session, QLORA, 7, 3), Value::Null, "closed");
}

#[test]
fn ranged_edits_are_applied_in_utf16_units() {
    let mut session = Session::start(json!({}), Value::Null);
    let uri = "file:///project/lora.yaml";
    let text = "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-3B\nprecision: bf16-true\n\
                data: {\"é😀\": 1, seed: 2, sead: 3}\n";
    assert!(!codes(&session.open(uri, text)).contains(&"OOM002".to_string()));
    // `sead` starts at UTF-16 column 26 (byte column 29).
    let change = json!({"range": range(2, 28, 29), "text": "e"});
    session.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]}),
    );
    let published = session.diagnostics(uri);
    let duplicate = published["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "OOM002");
    assert_eq!(duplicate.expect("seed is now duplicated")["range"], range(2, 26, 30));
}

#[test]
fn json_findings_offer_no_comment_suppression() {
    let mut session = Session::start(json!({}), Value::Null);
    let uri = "file:///project/ds_config.json";
    let text = "{\"train_micro_batch_size_per_gpu\": 1, \"train_micro_batch_size_per_gpu\": 2,\n \"zero_optimization\": {\"stage\": 2}}\n";
    let published = session.open(uri, text);
    let duplicate = published["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "OOM002").cloned();
    let duplicate = duplicate.expect("a duplicate key");
    let actions = code_actions(&mut session, uri, duplicate["range"].clone(), json!([duplicate]));
    assert!(actions.iter().all(|a| !a["title"].as_str().unwrap().starts_with("Disable")), "{actions:?}");
}

#[test]
fn completion_offers_the_keyword_arguments_of_the_call_being_typed() {
    let mut session = Session::start(json!({}), Value::Null);
    let uri = "file:///project/train.py";
    let text = "from trl import GRPOConfig as C\nargs = C(output_dir=\"out\", per_device";
    session.open(uri, text);
    let params = json!({"textDocument": {"uri": uri}, "position": position(1, 37)});
    let items = session.request("textDocument/completion", params);
    let labels: Vec<&str> = items.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"num_generations") && labels.contains(&"gradient_accumulation_steps"), "{labels:?}");
    assert!(!labels.contains(&"output_dir"), "already given: {labels:?}");
    assert!(
        !labels.contains(&"lora_r") && !labels.contains(&"max_prompt_length"),
        "not GRPOConfig keywords: {labels:?}"
    );
    let batch = items.as_array().unwrap().iter().find(|i| i["label"] == "per_device_train_batch_size").unwrap();
    assert_eq!(batch["kind"], 10, "property");
    assert_eq!(batch["detail"], "default: 8");
    assert_eq!(batch["textEdit"], json!({"range": range(1, 27, 37), "newText": "per_device_train_batch_size="}));
    insta::assert_snapshot!("python_keyword_completion", pretty(batch));

    // Unsloth's loader keywords come with Unsloth's defaults; a value position offers nothing.
    let text =
        "from unsloth import FastLanguageModel\nFastLanguageModel.from_pretrained(\n    load_in_4bit=False,\n    \n)\n";
    session.change(uri, 2, text);
    session.diagnostics(uri);
    let params = json!({"textDocument": {"uri": uri}, "position": position(3, 4)});
    let items = session.request("textDocument/completion", params);
    let fast = items.as_array().unwrap().iter().find(|i| i["label"] == "fast_inference").unwrap();
    assert_eq!(
        fast,
        &json!({
            "label": "fast_inference",
            "kind": 10,
            "detail": "default: false",
            "documentation": {
                "kind": "markdown",
                "value": "Start vLLM in the process for generation; it shares the base weights.\n\ndefault: `false` · source: `unsloth/models/loader.py`"
            },
            "textEdit": {"range": range(3, 4, 4), "newText": "fast_inference="}
        })
    );
    assert!(items.as_array().unwrap().iter().all(|i| i["label"] != "load_in_4bit"));
    let params = json!({"textDocument": {"uri": uri}, "position": position(2, 17)});
    assert_eq!(session.request("textDocument/completion", params), json!([]));
    // The loader's keywords have their documentation on hover too.
    assert_eq!(
        hover(&mut session, uri, 2, 6),
        json!({
            "contents": {"kind": "markdown", "value": "**`model_init_kwargs.load_in_4bit`** · trl-sft\n\n4-bit QLoRA weights (bitsandbytes NF4). True by default: turn it off for 8- or 16-bit.\n\ndefault: `true` · source: `unsloth/models/loader.py`"},
            "range": range(2, 4, 16)
        })
    );
    assert!(session.shutdown().success());
}

const NOTEBOOK: &str = "file:///project/grpo.ipynb";

fn cell_uri(id: &str) -> String {
    format!("vscode-notebook-cell:/project/grpo.ipynb#{id}")
}

/// A notebook cell: its `NotebookCell` and its `TextDocumentItem`.
fn cell(id: &str, kind: u32, text: &str) -> (Value, Value) {
    let uri = cell_uri(id);
    let language = if kind == 2 { "python" } else { "markdown" };
    (json!({"kind": kind, "document": uri}), json!({"uri": uri, "languageId": language, "version": 1, "text": text}))
}

#[test]
fn notebook_cells_are_analysed_together_and_findings_land_on_their_cell() {
    let mut session = Session::with_gpu("A10G");
    assert_eq!(
        session.initialize_result["capabilities"]["notebookDocumentSync"],
        json!({"notebookSelector": [{"notebook": "jupyter-notebook", "cells": [{"language": "python"}]}]})
    );
    let cells = [
        cell("c1", 2, "from unsloth import FastLanguageModel\nfrom trl import GRPOConfig as Config, GRPOTrainer\nMAX_SEQ_LENGTH = 1024\nGPU_UTIL = 0.6\n"),
        cell("c2", 1, "# Load the model"),
        cell(
            "c3",
            2,
            "model, tok = FastLanguageModel.from_pretrained(\n    model_name=\"unsloth/gemma-3-1b-it\",\n    max_seq_length=MAX_SEQ_LENGTH,\n    load_in_4bit=False,\n    fast_inference=True,\n    gpu_memory_utilization=GPU_UTIL,\n)\nmodel = FastLanguageModel.get_peft_model(model, r=32, lora_alpha=32)\n",
        ),
        cell(
            "c4",
            2,
            "args = Config(per_device_train_batch_size=4, num_generations=4,\n    max_prompt_length=256, max_completion_length=MAX_SEQ_LENGTH - 256)\ntrainer = GRPOTrainer(model=model, args=args, reward_funcs=[])\n",
        ),
    ];
    session.notify(
        "notebookDocument/didOpen",
        json!({
            "notebookDocument": {"uri": NOTEBOOK, "notebookType": "jupyter-notebook", "version": 1,
                "cells": cells.iter().map(|c| c.0.clone()).collect::<Vec<_>>()},
            "cellTextDocuments": cells.iter().map(|c| c.1.clone()).collect::<Vec<_>>()
        }),
    );
    let first = session.diagnostics(&cell_uri("c1"));
    let markdown = session.diagnostics(&cell_uri("c2"));
    let loader = session.diagnostics(&cell_uri("c3"));
    let config = session.diagnostics(&cell_uri("c4"));
    // The loader's `gpu_memory_utilization=GPU_UTIL` is read from the first cell: the
    // findings on that value land on the constant's literal there.
    assert_eq!(codes(&first), ["OOM601", "OOM604"]);
    assert_eq!(first["version"], 1);
    let overcommit = &first["diagnostics"][1];
    assert_eq!(overcommit["range"], range(3, 11, 14), "`0.6` of `GPU_UTIL = 0.6`");
    let edit = &overcommit["data"]["fixes"][0]["edits"][0];
    assert_eq!(edit["range"], range(3, 11, 14));
    assert!(edit["newText"].as_str().is_some_and(|t| t.starts_with("0.") && t < "0.6"), "{edit}");
    assert_eq!(markdown, json!({"uri": cell_uri("c2"), "diagnostics": [], "version": 1}));
    assert_eq!(loader, json!({"uri": cell_uri("c3"), "diagnostics": [], "version": 1}));
    assert_eq!(codes(&config), ["OOM005"]);
    assert_eq!(config["diagnostics"][0]["range"], range(1, 4, 21), "`max_prompt_length` in the fourth cell");
    insta::assert_snapshot!("notebook_cell_diagnostics", pretty(&config));

    // The notebook's estimate (as the library reads the same cells) is the first code cell's lens.
    let sources: Vec<Value> =
        [&cells[0], &cells[2], &cells[3]].iter().map(|c| json!({"cell_type": "code", "source": c.1["text"]})).collect();
    let options = Options { gpu: Some(resolve_gpu("A10G").unwrap().clone()), ..Options::default() };
    let estimate = analyze_text(Path::new("/project/grpo.ipynb"), json!({"cells": sources}).to_string(), &options)
        .estimate
        .expect("the notebook has an estimate");
    let lenses = session.request("textDocument/codeLens", json!({"textDocument": {"uri": cell_uri("c1")}}));
    let title = format!(
        "≈ {:.1} GiB of {:.1} GiB on A10G — does not fit",
        gib(estimate.peak.device_bytes),
        gib(resolve_gpu("A10G").unwrap().memory_bytes)
    );
    assert_eq!(lenses[0]["command"]["title"], title, "{lenses}");
    assert_eq!(session.request("textDocument/codeLens", json!({"textDocument": {"uri": cell_uri("c3")}})), json!([]));
    let shown = session
        .request("workspace/executeCommand", json!({"command": "oomlint.showEstimate", "arguments": [cell_uri("c4")]}));
    assert_eq!(shown["estimate"]["peak"]["device_bytes"], estimate.peak.device_bytes);

    // Completion in the fourth cell knows `Config` from the first cell's import.
    let params = json!({"textDocument": {"uri": cell_uri("c4")}, "position": position(0, 63)});
    let items = session.request("textDocument/completion", params);
    let labels: Vec<&str> = items.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"beta") && !labels.contains(&"num_generations"), "{labels:?}");
    assert_eq!(items[0]["textEdit"]["range"], range(0, 63, 63));

    // A smaller fraction in the first cell and the markdown cell deleted: every cell is
    // republished, the deleted one cleared.
    session.notify(
        "notebookDocument/didChange",
        json!({
            "notebookDocument": {"uri": NOTEBOOK, "version": 2},
            "change": {"cells": {
                "structure": {"array": {"start": 1, "deleteCount": 1}, "didClose": [{"uri": cell_uri("c2")}]},
                "textContent": [{
                    "document": {"uri": cell_uri("c1"), "version": 2},
                    "changes": [{"range": range(3, 11, 14), "text": "0.3"}]
                }]
            }}
        }),
    );
    let first = session.diagnostics(&cell_uri("c1"));
    assert_eq!((first["version"].clone(), codes(&first)), (json!(2), Vec::<String>::new()), "{first}");
    assert_eq!(codes(&session.diagnostics(&cell_uri("c4"))), ["OOM005"]);
    assert_eq!(session.diagnostics(&cell_uri("c2")), json!({"uri": cell_uri("c2"), "diagnostics": []}));
    // A cell edited through `textDocument/didChange` is still read with the others (one
    // generation per prompt gives GRPO no advantage to compute; alone, `Config` would be an
    // unknown name and the cell no config at all).
    let fourth = cells[3].1["text"].as_str().unwrap().replace("num_generations=4", "num_generations=1");
    session.change(&cell_uri("c4"), 3, &fourth);
    let config = session.diagnostics(&cell_uri("c4"));
    assert_eq!(
        (config["version"].clone(), codes(&config)),
        (json!(3), vec!["OOM004".to_string(), "OOM208".to_string(), "OOM005".to_string()])
    );

    session.notify(
        "notebookDocument/didClose",
        json!({"notebookDocument": {"uri": NOTEBOOK},
               "cellTextDocuments": [{"uri": cell_uri("c1")}, {"uri": cell_uri("c3")}, {"uri": cell_uri("c4")}]}),
    );
    assert_eq!(session.diagnostics(&cell_uri("c4")), json!({"uri": cell_uri("c4"), "diagnostics": []}));
    assert!(session.shutdown().success());
}

/// In a launch script the program's `key=value` overrides and `--flag value` pairs are keys:
/// hover names the key at its word and breaks the script's estimate down, with what the value
/// costs where it moves the peak (verl's rollout share, TRL's batch).
#[test]
fn hover_on_launch_overrides_and_flags_breaks_the_estimate_down() {
    let mut session = Session::with_gpu("H100");
    let options = Options { gpu: Some(resolve_gpu("H100").unwrap().clone()), ..Options::default() };
    for (name, (line, start, end), key, cost) in [
        ("verl_grpo.sh", (12, 4, 58), "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", None),
        ("verl_grpo.sh", (17, 4, 56), "actor_rollout_ref.rollout.gpu_memory_utilization", Some("halved (0.3): −")),
        ("trl_cli_dpo.sh", (1, 2, 31), "per_device_train_batch_size", Some("halved (4): −")),
        ("torchrun_trl.sh", (4, 2, 31), "per_device_train_batch_size", None),
    ] {
        let uri = format!("file:///project/launch/{name}");
        let text = fixture(&format!("launch/{name}"));
        session.open(&uri, &text);
        let result = hover(&mut session, &uri, line, start + 10);
        assert_eq!(result["range"], range(line, start, end), "{name}: the word that sets `{key}`");
        let markdown = result["contents"]["value"].as_str().unwrap();
        assert!(markdown.starts_with(&format!("**`{key}`** · ")), "{name}: {markdown}");
        let estimate = analyze_text(Path::new(&uri["file://".len()..]), text, &options).estimate.unwrap();
        let peak = format!(
            "**Peak ≈ {:.2} GiB** in the {} phase",
            gib(estimate.peak.device_bytes),
            estimate.peak.phase.as_str()
        );
        assert!(markdown.contains(&peak), "{name}: {markdown}");
        for component in estimate.components.iter().filter(|c| c.live_in.contains(&estimate.peak.phase)) {
            let row = format!("| {} | {:.2} | `", component.name, gib(component.bytes));
            assert!(markdown.contains(&row), "{name}: missing {row} in {markdown}");
        }
        if let Some(cost) = cost {
            assert!(markdown.contains(&format!("**This key:** {cost}")), "{name}: {markdown}");
        }
    }
}

fn completion(session: &mut Session, uri: &str, line: u32, character: u32) -> Vec<Value> {
    let params = json!({"textDocument": {"uri": uri}, "position": position(line, character)});
    session.request("textDocument/completion", params).as_array().unwrap().clone()
}

fn labels(items: &[Value]) -> Vec<&str> {
    items.iter().map(|i| i["label"].as_str().unwrap()).collect()
}

/// The line of `text` that holds the last `needle`, and the column after it.
fn after(text: &str, needle: &str) -> (u32, u32) {
    let at = text.rfind(needle).unwrap() + needle.len();
    let line = text[..at].matches('\n').count();
    let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line as u32, column as u32)
}

/// In a launch script, the word being typed completes to the keys of the command's program:
/// verl's overrides from its defaults table, OpenRLHF's flags in the spelling the script
/// writes, the schema's keys as LLaMA-Factory words and `trl` flags, `accelerate launch`'s
/// options before its program.
#[test]
fn completion_in_launch_scripts_offers_the_programs_overrides_and_flags() {
    let mut session = Session::start(json!({}), Value::Null);
    let uri = "file:///project/launch/verl_grpo.sh";
    let text = fixture("launch/verl_grpo.sh").replace("rollout.gpu_memory_utilization=0.6 \\", "rollout.gpu_ \\");
    session.open(uri, &text);
    let (line, end) = after(&text, "rollout.gpu_");
    let items = completion(&mut session, uri, line, end);
    assert_eq!(labels(&items), ["actor_rollout_ref.rollout.gpu_memory_utilization"]);
    let share = &items[0];
    assert_eq!(share["kind"], 10, "property");
    assert_eq!(share["detail"], "default: 0.5");
    assert_eq!(
        share["textEdit"],
        json!({"range": range(line, 4, end), "newText": "actor_rollout_ref.rollout.gpu_memory_utilization="})
    );
    let docs = share["documentation"]["value"].as_str().unwrap();
    assert!(docs.starts_with("Share of the GPU's memory the rollout engine"), "{docs}");
    assert!(docs.contains("source: `verl/trainer/config/_generated_ppo_trainer.yaml`"), "{docs}");
    // A new override after a line continuation: every key but those the command sets.
    let text = fixture("launch/verl_grpo.sh").replace("trainer.nnodes=1 \"$@\"", "trainer.nnodes=1 \\\n    ");
    session.change(uri, 2, &text);
    session.diagnostics(uri);
    let items = completion(&mut session, uri, text.lines().count() as u32 - 1, 4);
    let all = labels(&items);
    assert!(all.contains(&"actor_rollout_ref.actor.ppo_max_token_len_per_gpu") && all.len() > 200, "{}", all.len());
    assert!(!all.contains(&"trainer.nnodes") && !all.contains(&"actor_rollout_ref.rollout.n"), "given");

    let uri = "file:///project/launch/openrlhf_ppo.sh";
    let text = fixture("launch/openrlhf_ppo.sh")
        .replace("gradient_checkpointing_enable\n", "gradient_checkpointing_enable \\\n   --ds.\n");
    session.open(uri, &text);
    let (line, end) = after(&text, "--ds.");
    let items = completion(&mut session, uri, line, end);
    assert_eq!(
        labels(&items),
        [
            "--ds.packing_samples",
            "--ds.lora.rank",
            "--ds.lora.alpha",
            "--ds.ring_attn_size",
            "--ds.tensor_parallel_size"
        ],
        "the dotted flags of train_ppo_ray, less those given"
    );
    assert_eq!(
        items[1],
        json!({
            "label": "--ds.lora.rank",
            "kind": 10,
            "detail": "default: 0",
            "documentation": {
                "kind": "markdown",
                "value": "LoRA rank; 0 trains every parameter.\n\n`train_ppo_ray` flag of OpenRLHF 3c3be62.\n\ndefault: `0` · source: `openrlhf/cli/train_ppo_ray.py`"
            },
            "textEdit": {"range": range(line, 3, end), "newText": "--ds.lora.rank"}
        })
    );

    for (name, from, to, typed, expected) in [
        (
            "llamafactory.sh",
            "learning_rate=1e-4",
            "learning_rate=1e-4 gradient_acc",
            "gradient_acc",
            "gradient_accumulation_steps=",
        ),
        (
            "trl_cli_dpo.sh",
            "--output_dir out/dpo",
            "--output_dir out/dpo --per_device_eval",
            "--per_device_eval",
            "--per_device_eval_batch_size",
        ),
        (
            "accelerate_trl_sft.sh",
            "--mixed_precision bf16",
            "--mixed_precision bf16 --num_mach",
            "--num_mach",
            "--num_machines",
        ),
    ] {
        let uri = format!("file:///project/launch/{name}");
        let text = fixture(&format!("launch/{name}")).replace(from, to);
        session.open(&uri, &text);
        let (line, end) = after(&text, to);
        let items = completion(&mut session, &uri, line, end);
        let item = items.iter().find(|i| i["textEdit"]["newText"] == expected);
        let item = item.unwrap_or_else(|| panic!("{name}: no {expected} in {:?}", labels(&items)));
        assert_eq!(item["textEdit"]["range"], range(line, end - typed.len() as u32, end), "{name}");
    }
    assert!(session.shutdown().success());
}

/// Hover on an OpenRLHF flag and a verl override documents it from its table and prices it
/// in the script's estimate, as on a YAML key.
#[test]
fn hover_on_openrlhf_flags_and_verl_overrides_documents_and_prices_them() {
    let mut session = Session::with_gpu("H100");
    let options = Options { gpu: Some(resolve_gpu("H100").unwrap().clone()), ..Options::default() };
    for (name, needle, key, doc, cost) in [
        (
            "openrlhf_ppo.sh",
            "--vllm.gpu_memory_utilization",
            "vllm.gpu_memory_utilization",
            "Share of the GPU's memory a vLLM engine takes.",
            "halved (0.3): −",
        ),
        (
            "verl_grpo.sh",
            "actor_rollout_ref.rollout.gpu_memory_utilization",
            "actor_rollout_ref.rollout.gpu_memory_utilization",
            "Share of the GPU's memory the rollout engine",
            "halved (0.3): −",
        ),
    ] {
        let uri = format!("file:///project/launch/{name}");
        let text = fixture(&format!("launch/{name}"));
        session.open(&uri, &text);
        let (line, end) = after(&text, needle);
        let result = hover(&mut session, &uri, line, end - 3);
        let markdown = result["contents"]["value"].as_str().unwrap();
        assert!(markdown.starts_with(&format!("**`{key}`** · ")), "{name}: {markdown}");
        assert!(markdown.contains(doc), "{name}: {markdown}");
        let estimate = analyze_text(Path::new(&uri["file://".len()..]), text, &options).estimate.unwrap();
        let peak = format!("**Peak ≈ {:.2} GiB**", gib(estimate.peak.device_bytes));
        assert!(markdown.contains(&peak), "{name}: {markdown}");
        assert!(markdown.contains(&format!("**This key:** {cost}")), "{name}: {markdown}");
    }
    assert!(session.shutdown().success());
}

/// A launch inside a `bash -lc '…'` string: hover finds the override where the string writes
/// it, and completion offers the program's keys there.
#[test]
fn hover_and_completion_inside_a_bash_c_string() {
    let mut session = Session::with_gpu("H100");
    let uri = "file:///project/launch/bash_c_verl.sh";
    let text = fixture("launch/bash_c_verl.sh");
    session.open(uri, &text);
    let (line, end) = after(&text, "actor_rollout_ref.rollout.gpu_memory_utilization=0.5");
    let result = hover(&mut session, uri, line, 10);
    assert_eq!(result["range"], range(line, 4, end), "the word in the string");
    let markdown = result["contents"]["value"].as_str().unwrap();
    assert!(markdown.starts_with("**`actor_rollout_ref.rollout.gpu_memory_utilization`** · verl"), "{markdown}");
    assert!(markdown.contains("**This key:** halved (0.25): −"), "{markdown}");

    let typed =
        text.replace("    trainer.nnodes=1'", "    trainer.nnodes=1 actor_rollout_ref.actor.fsdp_config.param_'");
    session.change(uri, 2, &typed);
    session.diagnostics(uri);
    let (line, end) = after(&typed, "fsdp_config.param_");
    let items = completion(&mut session, uri, line, end);
    assert_eq!(labels(&items), ["actor_rollout_ref.actor.fsdp_config.param_offload"]);
    assert_eq!(items[0]["detail"], "default: false");
    assert!(session.shutdown().success());
}
