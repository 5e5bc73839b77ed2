//! The Python traceback above an OOM message: its frames, and which memory component
//! the failing allocation belongs to.

use super::scan::Log;
use crate::span::Span;

/// One `File "...", line N, in func` frame and its source line.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub(crate) file: String,
    pub(crate) line: u32,
    pub(crate) function: String,
    /// The source line Python printed under the frame (trimmed), if any.
    pub(crate) code: Option<String>,
    /// Where the frame's `File` line is in the log.
    pub span: Span,
}

/// What grew when memory ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    Weights,
    Activations,
    LogitsLoss,
    Optimizer,
    Gradients,
    Generation,
}

impl Component {
    pub fn name(self) -> &'static str {
        match self {
            Component::Weights => "weights",
            Component::Activations => "activations",
            Component::LogitsLoss => "logits-loss",
            Component::Optimizer => "optimizer",
            Component::Gradients => "gradients",
            Component::Generation => "kv-cache/generation",
        }
    }
}

/// The frame that identifies the allocation site, and its component.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub frame: Frame,
    pub component: Option<Component>,
}

impl Site {
    /// `logits = model(input_ids)  (train.py:42, in train_step)`.
    pub(crate) fn describe(&self) -> String {
        let f = &self.frame;
        match &f.code {
            Some(code) => format!("{code}  ({}:{}, in {})", short_path(&f.file), f.line, f.function),
            None => format!("{}:{}, in {}", short_path(&f.file), f.line, f.function),
        }
    }
}

/// The path after `site-packages/` or `dist-packages/`, else the path as printed.
fn short_path(path: &str) -> &str {
    ["site-packages/", "dist-packages/"]
        .iter()
        .find_map(|marker| path.rfind(marker).map(|p| &path[p + marker.len()..]))
        .unwrap_or(path)
}

/// How far above the message a traceback is looked for.
const MAX_TRACEBACK_LINES: usize = 400;

/// The frames of the traceback that ends just above `message_line` (same rank stream),
/// looking no further up than byte offset `floor` (the end of the previous message).
pub(crate) fn frames_before(log: &Log, message_line: usize, floor: usize) -> Vec<Frame> {
    // Walk up to the nearest `Traceback (most recent call last):`.
    let mut lines = Vec::new();
    let mut cursor = log.prev_in_stream(message_line);
    let mut found = false;
    while let Some(l) = cursor {
        if lines.len() == MAX_TRACEBACK_LINES || log.lines[l].end <= floor {
            break;
        }
        let clean = log.clean(l);
        // A progress bar without a newline may precede it on the same line.
        if clean.contains("Traceback (most recent call last)") {
            found = true;
            break;
        }
        lines.push(l);
        cursor = log.prev_in_stream(l);
    }
    if !found {
        return Vec::new();
    }
    lines.reverse();
    let mut frames: Vec<Frame> = Vec::new();
    for &l in &lines {
        let clean = log.clean(l);
        if let Some(frame) = parse_frame_line(&clean) {
            let span = Span::new(log.lines[l].body, log.lines[l].end);
            frames.push(Frame { span, ..frame });
        } else if let Some(last) = frames.last_mut() {
            if last.code.is_none() && is_code_line(&clean) {
                last.code = Some(clean);
            }
        }
    }
    frames
}

/// `File "path", line N, in func`.
fn parse_frame_line(line: &str) -> Option<Frame> {
    let rest = &line[line.find("File \"")? + 6..];
    let close = rest.find("\", line ")?;
    let file = rest[..close].to_owned();
    let rest = &rest[close + 8..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let number = rest[..digits].parse().ok()?;
    let function = rest[digits..].strip_prefix(", in ").unwrap_or("").trim().to_owned();
    Some(Frame { file, line: number, function, code: None, span: Span::default() })
}

/// A source line rather than a caret marker (`^^^^`, `~~~^^`) or an exception line.
fn is_code_line(line: &str) -> bool {
    !line.is_empty() && !line.chars().all(|c| matches!(c, '^' | '~' | ' ')) && !line.starts_with("During handling")
}

/// The component a frame points at, from its code, function and file.
fn classify(frame: &Frame) -> Option<Component> {
    let code = frame.code.as_deref().unwrap_or("");
    let func = frame.function.as_str();
    let file = frame.file.replace('\\', "/");
    let any = |needles: &[&str]| needles.iter().any(|n| code.contains(n));
    if any(&["generate(", "past_key_value", "key_cache", "value_cache", "llm.generate", "vllm"])
        || matches!(func, "generate" | "_sample" | "_beam_search" | "greedy_search" | "_assisted_decoding")
        || file.contains("cache_utils.py")
        || file.contains("/vllm/")
    {
        return Some(Component::Generation);
    }
    if any(&["optimizer.step", "optim.step", "exp_avg", "optimizer_step("])
        || file.contains("/torch/optim/")
        || file.contains("bitsandbytes/optim/")
    {
        return Some(Component::Optimizer);
    }
    if any(&["backward("]) || func.contains("backward") || file.contains("/torch/autograd/") {
        return Some(Component::Gradients);
    }
    if any(&[
        "cross_entropy",
        "log_softmax",
        "loss_function(",
        "lm_head",
        "logits.float()",
        "logsumexp",
        "selective_log_softmax",
        "ForCausalLMLoss",
    ]) || matches!(
        func,
        "cross_entropy" | "ForCausalLMLoss" | "fixed_cross_entropy" | "selective_log_softmax" | "log_softmax"
    ) {
        return Some(Component::LogitsLoss);
    }
    if any(&[
        "from_pretrained(",
        "load_state_dict(",
        ".cuda()",
        "model.to(",
        "set_module_tensor_to_device",
        "dispatch_model(",
    ]) || matches!(
        func,
        "_load_state_dict_into_meta_model" | "load_model" | "_apply" | "convert" | "set_module_tensor_to_device"
    ) {
        return Some(Component::Weights);
    }
    if any(&["model(", "forward(", ".forward", "scaled_dot_product_attention", "flash_attn"])
        || func == "forward"
        || func.ends_with("_forward")
        || file.contains("modeling_")
    {
        return Some(Component::Activations);
    }
    None
}

/// Priority when frames disagree: the phase a traceback is in beats the module it is inside.
const PRIORITY: [Component; 6] = [
    Component::Generation,
    Component::Optimizer,
    Component::Gradients,
    Component::LogitsLoss,
    Component::Weights,
    Component::Activations,
];

/// The allocation site: the outermost frame of the highest-priority component, or the
/// innermost frame outside installed packages when no frame classifies.
pub(crate) fn site(frames: &[Frame]) -> Option<Site> {
    let classified: Vec<(usize, Component)> =
        frames.iter().enumerate().filter_map(|(i, f)| classify(f).map(|c| (i, c))).collect();
    for component in PRIORITY {
        if let Some(&(i, _)) = classified.iter().find(|(_, c)| *c == component) {
            return Some(Site { frame: frames[i].clone(), component: Some(component) });
        }
    }
    let user = frames.iter().rev().find(|f| !f.file.contains("-packages/") && !f.file.contains("/lib/python"));
    user.or(frames.last()).map(|f| Site { frame: f.clone(), component: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traceback(body: &[(&str, &str, &str)]) -> String {
        let mut text = String::from("Traceback (most recent call last):\n");
        for (file, func, code) in body {
            text.push_str(&format!("  File \"{file}\", line 10, in {func}\n    {code}\n"));
        }
        text.push_str("torch.OutOfMemoryError: CUDA out of memory.\n");
        text
    }

    fn site_of(body: &[(&str, &str, &str)]) -> Option<Site> {
        let text = traceback(body);
        let log = Log::new(&text);
        let frames = frames_before(&log, log.lines.len() - 1, 0);
        assert_eq!(frames.len(), body.len());
        site(&frames)
    }

    /// (file, function, code) of one frame.
    type FrameText = (&'static str, &'static str, &'static str);

    const TRAIN: FrameText = ("/work/train.py", "main", "trainer.train()");

    #[test]
    fn frames_are_read_with_code_lines() {
        let text = "noise\n[rank0]: Traceback (most recent call last):\n[rank1]: other rank\n[rank0]:   File \"/a/train.py\", line 42, in step\n[rank0]:     logits = model(x)\n[rank0]:              ^^^^^^^^\n[rank0]: torch.OutOfMemoryError: boom";
        let log = Log::new(text);
        let frames = frames_before(&log, 6, 0);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].file, "/a/train.py");
        assert_eq!(frames[0].line, 42);
        assert_eq!(frames[0].function, "step");
        assert_eq!(frames[0].code.as_deref(), Some("logits = model(x)"));
        assert_eq!(&text[frames[0].span.start..frames[0].span.end], "   File \"/a/train.py\", line 42, in step");
        assert!(frames_before(&Log::new("no traceback\nmessage"), 1, 0).is_empty());
        // A traceback above the previous message belongs to that one.
        assert!(frames_before(&log, 6, log.lines[3].end).is_empty());
    }

    #[test]
    fn components_by_phase() {
        let cases: Vec<(Vec<FrameText>, Component, &str)> = vec![
            (
                vec![
                    TRAIN,
                    (
                        "/x/site-packages/transformers/models/llama/modeling_llama.py",
                        "forward",
                        "loss = self.loss_function(logits=logits, labels=labels)",
                    ),
                    (
                        "/x/site-packages/torch/nn/functional.py",
                        "cross_entropy",
                        "return torch._C._nn.cross_entropy_loss(",
                    ),
                ],
                Component::LogitsLoss,
                "loss = self.loss_function(logits=logits, labels=labels)",
            ),
            (
                vec![
                    TRAIN,
                    ("/work/train.py", "step", "loss.backward()"),
                    (
                        "/x/site-packages/torch/autograd/graph.py",
                        "_engine_run_backward",
                        "return Variable._execution_engine.run_backward(",
                    ),
                ],
                Component::Gradients,
                "loss.backward()",
            ),
            (
                vec![
                    TRAIN,
                    ("/work/train.py", "step", "optimizer.step()"),
                    (
                        "/x/site-packages/torch/optim/adamw.py",
                        "_multi_tensor_adamw",
                        "exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)",
                    ),
                ],
                Component::Optimizer,
                "optimizer.step()",
            ),
            (
                vec![
                    TRAIN,
                    ("/work/rl.py", "rollout", "out = model.generate(**batch, max_new_tokens=512)"),
                    (
                        "/x/site-packages/transformers/models/llama/modeling_llama.py",
                        "forward",
                        "outputs = self.model(",
                    ),
                ],
                Component::Generation,
                "out = model.generate(**batch, max_new_tokens=512)",
            ),
            (
                vec![(
                    "/work/train.py",
                    "main",
                    "model = AutoModelForCausalLM.from_pretrained(name, device_map=\"cuda\")",
                )],
                Component::Weights,
                "model = AutoModelForCausalLM.from_pretrained(name, device_map=\"cuda\")",
            ),
            (
                vec![
                    TRAIN,
                    ("/work/train.py", "step", "logits = model(input_ids)"),
                    (
                        "/x/site-packages/transformers/models/llama/modeling_llama.py",
                        "eager_attention_forward",
                        "attn_weights = torch.matmul(query, key_states.transpose(2, 3))",
                    ),
                ],
                Component::Activations,
                "logits = model(input_ids)",
            ),
        ];
        for (body, component, code) in cases {
            let site = site_of(&body).expect("a site");
            assert_eq!(site.component, Some(component), "{body:?}");
            assert_eq!(site.frame.code.as_deref(), Some(code));
        }
    }

    #[test]
    fn unclassified_frames_fall_back_to_user_code() {
        let site =
            site_of(&[("/work/run.py", "main", "do_it()"), ("/usr/lib/python3.11/thing.py", "inner", "x()")]).unwrap();
        assert_eq!(site.component, None);
        assert_eq!(site.frame.file, "/work/run.py");
        assert_eq!(site.describe(), "do_it()  (/work/run.py:10, in main)");
        let deep = Site {
            frame: Frame {
                file: "/v/lib/python3.11/site-packages/torch/nn/functional.py".into(),
                line: 3,
                function: "f".into(),
                code: None,
                span: Span::default(),
            },
            component: None,
        };
        assert_eq!(deep.describe(), "torch/nn/functional.py:3, in f");
    }
}
