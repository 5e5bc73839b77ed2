//! `oomlint estimate --format html`: a self-contained page whose numbers are the JSON
//! estimate's, with one chart per phase, the levers in order with their edits as diffs, and
//! every name from the file escaped.

mod common;

use common::oomlint;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const FIXTURE: &str = "fixtures/trl-sft/valid.yaml";
const GIB: f64 = (1u64 << 30) as f64;

fn text(out: &Output) -> String {
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).expect("UTF-8")
}

fn html_and_json(file: &str) -> (String, Value) {
    let html = text(&oomlint(&["estimate", file, "--gpu", "A10G", "--format", "html"]));
    let json = text(&oomlint(&["estimate", file, "--gpu", "A10G", "--format", "json"]));
    (html, serde_json::from_str(&json).expect("JSON"))
}

fn gib(bytes: &Value) -> String {
    format!("{:.2}", bytes.as_u64().expect("bytes") as f64 / GIB)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// Every element outside `<style>` closes in order; void elements (`<meta>`) and `<…/>` need not.
fn assert_balanced(html: &str) {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let end = rest.find('>').expect("unclosed tag");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        let name = tag.trim_start_matches('/').split([' ', '\n', '/']).next().unwrap_or_default();
        if tag.starts_with('!') || tag.ends_with('/') || name == "meta" {
            continue;
        }
        if let Some(closing) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(closing), "</{closing}> closes the wrong element");
        } else {
            stack.push(name);
            if name == "style" {
                let close = rest.find("</style>").expect("</style>");
                rest = &rest[close..];
            }
        }
    }
    assert!(stack.is_empty(), "never closed: {stack:?}");
}

/// The `<svg>` element whose attributes contain `marker`.
fn svg<'a>(html: &'a str, marker: &str) -> &'a str {
    let at = html.find(marker).unwrap_or_else(|| panic!("no chart with {marker}"));
    let start = html[..at].rfind("<svg").expect("<svg");
    &html[start..at + html[at..].find("</svg>").expect("</svg>") + "</svg>".len()]
}

#[test]
fn the_page_loads_nothing_and_its_elements_close() {
    let (html, _) = html_and_json(FIXTURE);
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    for external in ["http://", "https://", "src=", "href=", "@import", "url(", "<script", "<link", "<img", "<iframe"] {
        assert!(!html.contains(external), "the page holds {external}");
    }
    assert!(html.contains("default-src 'none'"), "no content security policy");
    assert!(html.contains("@media (prefers-color-scheme: dark)") && html.contains("@media print"));
    assert_balanced(&html);
}

#[test]
fn header_verdict_and_views_are_the_json_numbers() {
    let (html, json) = html_and_json(FIXTURE);
    assert!(html.contains(&format!("<code>{}</code>", json["path"].as_str().unwrap())));
    assert!(html.contains(json["model"]["name"].as_str().unwrap()));
    assert!(html.contains(&escape(json["model"]["source"].as_str().unwrap())), "no provenance");
    assert!(html.contains(&format!("data-verdict=\"{}\"", json["fit"]["verdict"].as_str().unwrap())));
    let peak = &json["peak"];
    for view in ["allocated", "reserved"] {
        let row = format!("<tr><td>{view}</td><td class=\"num\">{}</td>", gib(&peak[format!("{view}_bytes")]));
        assert!(html.contains(&row), "{row}");
    }
    assert!(html.contains(&format!("<span data-testid=\"peak-device-gib\">{}</span>", gib(&peak["device_bytes"]))));
    let device = peak["device_bytes"].as_u64().unwrap() as f64;
    for end in ["low", "high"] {
        let relative = json["band"][end].as_f64().unwrap();
        assert!(html.contains(&format!("<span data-band=\"{end}\">{:+.0} %</span>", relative * 100.0)), "{end}");
        let bytes = (device * (1.0 + relative)).max(0.0) as u64;
        assert!(html.contains(&format!("<span data-band-gib=\"{end}\">{:.2}</span>", bytes as f64 / GIB)), "{end}");
    }
    for missing in json["missing_inputs"].as_array().unwrap() {
        assert!(html.contains(&format!("<li>{}</li>", escape(missing.as_str().unwrap()))), "{missing}");
    }
}

#[test]
fn one_chart_per_phase_with_the_capacity_and_the_peak() {
    for file in [FIXTURE, "fixtures/trl/grpo-vllm-colocate.yaml"] {
        let (html, json) = html_and_json(file);
        let phases = json["phases"].as_array().unwrap();
        assert_eq!(html.matches("data-phase=").count(), phases.len(), "{file}");
        let capacity = format!("class=\"capacity\" data-bytes=\"{}\"", json["gpu"]["memory_bytes"]);
        let peak = format!("class=\"peak\" data-bytes=\"{}\"", json["peak"]["allocated_bytes"]);
        let mut at = 0;
        for phase in phases {
            let marker = format!("data-phase=\"{}\" data-peak=\"{}\"", phase["phase"].as_str().unwrap(), phase["peak"]);
            let position = html.find(&marker).unwrap_or_else(|| panic!("{file}: no chart {marker}"));
            assert!(position > at, "{file}: phases out of order");
            at = position;
            let chart = svg(&html, &marker);
            assert!(chart.contains(&capacity) && chart.contains(&peak), "{file}: {marker}");
            assert!(chart.contains("role=\"img\"") && chart.contains("<title id="), "{file}: {marker}");
            assert!(chart.contains(&format!("{} GiB allocated", gib(&phase["allocated_bytes"]))), "{file}: {marker}");
            assert_balanced(chart);
        }
    }
}

#[test]
fn levers_are_in_the_json_order_with_their_edits_as_diffs() {
    let (html, json) = html_and_json(FIXTURE);
    let levers = json["levers"].as_array().unwrap();
    assert!(levers.len() >= 3);
    let mut at = 0;
    for lever in levers {
        let item = format!(
            "<li data-saves-bytes=\"{}\"><p><strong class=\"saves\">-{} GiB</strong> {}",
            lever["saves_bytes"],
            gib(&lever["saves_bytes"]),
            escape(lever["title"].as_str().unwrap())
        );
        let position = html[at..].find(&item).unwrap_or_else(|| panic!("{item} missing or out of order"));
        at += position + item.len();
    }
    for line in [
        "<span class=\"hunk\">@@ -17 +17 @@\n</span><span class=\"del\">-max_length: 2048\n</span><span class=\"add\">+max_length: 1024\n</span>",
        "<span class=\"del\">-per_device_train_batch_size: 4\n</span>",
        "<span class=\"add\">+per_device_train_batch_size: 2\n</span>",
        "<span class=\"add\">+optim: adamw_8bit\n</span>",
    ] {
        assert!(html.contains(line), "{line}");
    }
}

#[test]
fn per_gpu_sizes_are_charted_where_the_estimate_has_them() {
    let (html, json) = html_and_json("fixtures/axolotl/lora-mistral-7b-8bit-zero2.yaml");
    let sizes = json["per_world_size"].as_array().unwrap();
    assert!(!sizes.is_empty());
    let chart = svg(&html, "data-chart=\"world-sizes\"");
    for size in sizes {
        let row = format!(
            "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            size["gpus"],
            gib(&size["device_bytes"])
        );
        assert!(html.contains(&row), "{row}");
        assert!(chart.contains(&format!("{} GPUs", size["gpus"])));
    }
    let (html, _) = html_and_json(FIXTURE);
    assert!(!html.contains("world-sizes"));
}

#[test]
fn names_from_the_file_and_the_model_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let model = "<script>alert(1)<b>";
    std::fs::create_dir(dir.path().join(model)).unwrap();
    std::fs::write(
        dir.path().join(model).join("config.json"),
        r#"{"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "tie_word_embeddings": false}"#,
    )
    .unwrap();
    let file = "<script>x<img src=y>'\".yaml";
    std::fs::write(dir.path().join(file), format!("model_name_or_path: \"{model}\"\nmax_length: 512\nbf16: true\n"))
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_oomlint"))
        .args(["estimate", file, "--gpu", "A10G", "--format", "html"])
        .current_dir(dir.path())
        .output()
        .expect("run oomlint");
    let html = text(&out);
    for raw in ["<script", "<b>", "<img"] {
        assert!(!html.contains(raw), "unescaped {raw}");
    }
    assert!(html.contains(&escape(model)) && html.contains(&escape(file)));
    assert!(html.contains(&format!("from the local checkpoint {}", escape(model))));
    assert_balanced(&html);
}

#[test]
fn output_writes_the_file_and_keeps_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    for (file, code) in [(FIXTURE, 0), ("fixtures/rules/exceeds-gpu-memory/fail-fixable.yaml", 1)] {
        for format in ["html", "json", "table"] {
            let target = dir.path().join(format!("report.{format}"));
            let args = ["estimate", file, "--gpu", "A10G", "--format", format];
            let printed = oomlint(&args);
            let written = oomlint(&[&args[..], &["--output", target.to_str().unwrap()]].concat());
            assert_eq!(written.status.code(), Some(code), "{file} {format}");
            assert_eq!(printed.status.code(), Some(code), "{file} {format}");
            assert!(written.stdout.is_empty());
            assert_eq!(std::fs::read(&target).unwrap(), printed.stdout, "{file} {format}");
        }
    }
    let out = oomlint(&["estimate", FIXTURE, "--format", "html", "--output", "/nonexistent/dir/report.html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!Path::new("/nonexistent/dir/report.html").exists());
}

#[test]
fn report_snapshot() {
    let (html, _) = html_and_json("fixtures/litgpt-lora/valid.yaml");
    // The stylesheets and the version change without the report changing.
    let start = html.find("<style>").unwrap();
    let end = html.find("</style>").unwrap();
    let page = format!("{}<style>…</style>{}", &html[..start], &html[end + "</style>".len()..])
        .replace(env!("CARGO_PKG_VERSION"), "[version]");
    insta::assert_snapshot!(page);
}
