use super::*;

fn slice(text: &str, span: Span) -> &str {
    &text[span.start..span.end]
}

#[test]
fn keyword_arguments_resolve_to_the_defining_literal() {
    let text = "from trl import GRPOConfig as C\nMAX_SEQ = 1024\nMAX_PROMPT = 256\nargs = C(max_completion_length=MAX_SEQ - MAX_PROMPT, num_generations=4, learning_rate=5e-6, report_to=\"none\")\n";
    let doc = parse(text);
    let root = doc.root_mapping().unwrap();
    let completion = root.entry("max_completion_length").unwrap();
    assert_eq!(completion.value.as_scalar().unwrap().as_i64(), Some(768));
    assert_eq!(slice(text, completion.key_span), "max_completion_length");
    let generations = root.entry("num_generations").unwrap();
    assert_eq!(slice(text, generations.value.span), "4");
    let report = root.entry("report_to").unwrap();
    assert_eq!(report.value.as_scalar().unwrap().text, "none");
    assert_eq!(slice(text, report.value.span), "\"none\"");
    assert_eq!(root.entry("learning_rate").unwrap().value.as_scalar().unwrap().as_f64(), Some(5e-6));
}

#[test]
fn a_name_edits_its_constant() {
    let text = "LORA_RANK = 32\nfrom unsloth import FastLanguageModel\nmodel = FastLanguageModel.get_peft_model(model, r = LORA_RANK, lora_alpha = LORA_RANK * 2)\n";
    let doc = parse(text);
    let root = doc.root_mapping().unwrap();
    let rank = root.entry("lora_r").unwrap();
    assert_eq!(slice(text, rank.key_span), "r");
    assert_eq!(slice(text, rank.value.span), "32");
    assert_eq!(rank.value.span.start, 12);
    assert_eq!(root.entry("lora_alpha").unwrap().value.as_scalar().unwrap().as_i64(), Some(64));
}

#[test]
fn dynamic_values_are_unknown_with_a_reason() {
    let text = "import sys\nBATCH = 4\nBATCH = 8\nSTEPS = int(sys.argv[1])\nfor LR in [1, 2]:\n    pass\nfrom transformers import TrainingArguments\ndef main(rank):\n    TrainingArguments(per_device_train_batch_size=BATCH, max_steps=STEPS, learning_rate=LR, gradient_accumulation_steps=rank, output_dir=f\"out/{rank}\", **extra)\n";
    let program = program(text);
    let call = &program.calls[0];
    assert!(call.has_splat);
    let why = |name: &str| match &call.arg(name).unwrap().value {
        ArgValue::Unknown(why) => why.clone(),
        other => panic!("{name} resolved to {other:?}"),
    };
    assert!(why("per_device_train_batch_size").contains("bound more than once"));
    assert!(why("max_steps").contains("computed at run time"));
    assert!(why("learning_rate").contains("loop variable"));
    assert!(why("gradient_accumulation_steps").contains("local variable"));
    assert!(why("output_dir").contains("f-string"));
    // Unknown values are left out of the document (the plan reports them).
    assert!(parse(text).root_mapping().unwrap().entries.is_empty());
}

#[test]
fn trainer_connects_config_loader_peft_and_quantization() {
    let text = r#"
import os
import transformers as tf
from peft import LoraConfig, get_peft_model
from trl import SFTConfig, SFTTrainer
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
bnb = tf.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
model = tf.AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", quantization_config=bnb, dtype="bfloat16")
unused = SFTConfig(max_length=99)
cfg = SFTConfig(max_length=2048, per_device_train_batch_size=2)
trainer = SFTTrainer(model=model, args=cfg, peft_config=LoraConfig(r=8, target_modules="all-linear"))
"#;
    let program = program(text);
    let roles = program.roles();
    assert_eq!(program.calls[roles.config.unwrap()].known("max_length").unwrap().1.value, PyValue::Int(2048));
    assert_eq!(program.calls[roles.loader.unwrap()].callee, Callee::HfFromPretrained);
    assert_eq!(program.calls[roles.peft.unwrap()].callee, Callee::LoraConfig);
    assert!(roles.quantization.is_some());
    let doc = program.document(Language::Python);
    let root = doc.root_mapping().unwrap();
    assert_eq!(
        root.entry_path("model_init_kwargs.quantization_config.load_in_4bit")
            .unwrap()
            .value
            .as_scalar()
            .unwrap()
            .as_bool(),
        Some(true)
    );
    assert_eq!(
        root.entry_path("model_init_kwargs.pretrained_model_name_or_path").unwrap().value.as_scalar().unwrap().text,
        "Qwen/Qwen2.5-7B"
    );
    assert_eq!(
        root.entry_path("env.PYTORCH_CUDA_ALLOC_CONF").unwrap().value.as_scalar().unwrap().text,
        "expandable_segments:True"
    );
    assert_eq!(root.entry_path("env.CUDA_VISIBLE_DEVICES").unwrap().value.as_scalar().unwrap().text, "0");
    assert_eq!(root.entry("lora_target_modules").unwrap().value.as_scalar().unwrap().text, "all-linear");
    assert_eq!(root.entry("max_length").unwrap().value.as_scalar().unwrap().as_i64(), Some(2048));
}

#[test]
fn incomplete_code_still_yields_the_arguments_typed_so_far() {
    let text = "from trl import GRPOConfig\nargs = GRPOConfig(num_generations=4, per_device_train_batch_size=\n";
    let doc = parse(text);
    assert!(!doc.is_incomplete());
    assert_eq!(
        doc.root_mapping().unwrap().entry("num_generations").unwrap().value.as_scalar().unwrap().as_i64(),
        Some(4)
    );
}

#[test]
fn adversarial_input_does_not_panic() {
    for text in [
        "",
        "(((((((((",
        "X = X\nGRPOConfig(a=X)",
        "A = B\nB = A\nGRPOConfig(a=A)",
        "GRPOConfig(a=2**4000, b=1/0, c=-(-9223372036854775807-1))",
        "é = 'ü'\nSFTConfig(x=é)",
    ] {
        let _ = parse(text);
    }
    let deep = format!("SFTConfig(a={}1{})", "(".repeat(5000), ")".repeat(5000));
    let doc = parse(&deep);
    assert!(doc.root_mapping().unwrap().entries.is_empty());
}
