use super::*;
use crate::format;
use crate::plan::{Origin, RlAlgorithm};
use crate::syntax::Language;

fn plan_of(text: &str) -> (Format, Plan) {
    let doc = format::document(text, Language::Python);
    let format = detect(&script(&doc).expect("a program"));
    (format, plan(format, &doc).expect("a plan"))
}

fn slice_of(text: &str, span: crate::span::Span) -> &str {
    &text[span.start..span.end]
}

#[test]
fn keyword_arguments_are_laid_out_like_a_trl_config() {
    let text = "from trl import GRPOConfig as C\nMAX_SEQ = 1024\nMAX_PROMPT = 256\nargs = C(max_completion_length=MAX_SEQ - MAX_PROMPT, num_generations=4, learning_rate=5e-6, report_to=\"none\")\n";
    let doc = format::document(text, Language::Python);
    let root = doc.root_mapping().unwrap();
    let completion = root.entry("max_completion_length").unwrap();
    assert_eq!(completion.value.as_scalar().unwrap().as_i64(), Some(768));
    assert_eq!(slice_of(text, completion.key_span), "max_completion_length");
    assert_eq!(slice_of(text, root.entry("num_generations").unwrap().value.span), "4");
    let report = root.entry("report_to").unwrap();
    assert_eq!(report.value.as_scalar().unwrap().text, "none");
    assert_eq!(slice_of(text, report.value.span), "\"none\"");
    assert_eq!(root.entry("learning_rate").unwrap().value.as_scalar().unwrap().as_f64(), Some(5e-6));
    // A LoRA rank set through a constant points at the constant.
    let text = "LORA_RANK = 32\nfrom unsloth import FastLanguageModel\nmodel = FastLanguageModel.get_peft_model(model, r = LORA_RANK, lora_alpha = LORA_RANK * 2)\n";
    let doc = format::document(text, Language::Python);
    let rank = doc.root_mapping().unwrap().entry("lora_r").unwrap();
    assert_eq!((slice_of(text, rank.key_span), slice_of(text, rank.value.span)), ("r", "32"));
    // Unknown values are left out of the document (the plan reports them).
    let text = "from transformers import TrainingArguments\nTrainingArguments(per_device_train_batch_size=int(x), output_dir=f\"{x}\")\n";
    assert!(format::document(text, Language::Python).root_mapping().unwrap().entries.is_empty());
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
    let program = crate::syntax::python::program(text);
    let script = Script::of(&program);
    let roles = script.roles();
    assert_eq!(script.calls[roles.config.unwrap()].known("max_length").unwrap().1.value, PyValue::Int(2048));
    assert_eq!(script.calls[roles.loader.unwrap()].callee, Callee::HfFromPretrained);
    assert_eq!(script.calls[roles.peft.unwrap()].callee, Callee::LoraConfig);
    assert!(roles.quantization.is_some());
    let loader = &script.calls[roles.loader.unwrap()];
    assert_eq!(loader.arg("quantization_config").unwrap().value, ArgValue::Call(roles.quantization.unwrap()));
    assert_eq!(loader.arg("pretrained_model_name_or_path").unwrap().name, "pretrained_model_name_or_path");
    let doc = format::document(text, Language::Python);
    let root = doc.root_mapping().unwrap();
    let scalar = |path: &str| root.entry_path(path).unwrap().value.as_scalar().unwrap().clone();
    assert_eq!(scalar("model_init_kwargs.quantization_config.load_in_4bit").as_bool(), Some(true));
    assert_eq!(scalar("model_init_kwargs.pretrained_model_name_or_path").text, "Qwen/Qwen2.5-7B");
    assert_eq!(scalar("env.PYTORCH_CUDA_ALLOC_CONF").text, "expandable_segments:True");
    assert_eq!(scalar("env.CUDA_VISIBLE_DEVICES").text, "0");
    assert_eq!(scalar("lora_target_modules").text, "all-linear");
    assert_eq!(scalar("max_length").as_i64(), Some(2048));
}

#[test]
fn the_calls_being_typed_are_laid_out_too() {
    let text = "from trl import GRPOConfig\nargs = GRPOConfig(num_generations=4, per_device_train_batch_size=\n";
    let doc = format::document(text, Language::Python);
    assert!(!doc.is_incomplete());
    let generations = doc.root_mapping().unwrap().entry("num_generations").unwrap();
    assert_eq!(generations.value.as_scalar().unwrap().as_i64(), Some(4));
    let deep = format!("SFTConfig(a={}1{})", "(".repeat(5000), ")".repeat(5000));
    assert!(format::document(&deep, Language::Python).root_mapping().unwrap().entries.is_empty());
}

fn slice(text: &str, s: &Sourced<impl Sized>) -> String {
    let span = s.value_span().expect("set in the file");
    text[span.start..span.end].to_string()
}

const UNSLOTH_GRPO: &str = r#"
from unsloth import FastLanguageModel
from trl import GRPOConfig, GRPOTrainer
MAX_SEQ_LENGTH = 1024
LORA_RANK = 32
model, tokenizer = FastLanguageModel.from_pretrained(
    model_name = "unsloth/gemma-3-1b-it",
    max_seq_length = MAX_SEQ_LENGTH,
    load_in_4bit = False,
    fast_inference = True,
    max_lora_rank = LORA_RANK,
    gpu_memory_utilization = 0.6,
)
model = FastLanguageModel.get_peft_model(model, r = LORA_RANK, lora_alpha = LORA_RANK)
args = GRPOConfig(per_device_train_batch_size = 4, num_generations = 4, max_prompt_length = 256,
                  max_completion_length = MAX_SEQ_LENGTH - 256)
trainer = GRPOTrainer(model = model, args = args, reward_funcs = [])
"#;

#[test]
fn unsloth_grpo_semantics() {
    let (format, p) = plan_of(UNSLOTH_GRPO);
    assert_eq!(format, Format::TrlGrpo);
    assert_eq!(p.framework, Framework::Unsloth);
    assert_eq!(p.algorithm.as_ref().unwrap().value, RlAlgorithm::Grpo);
    assert_eq!(p.model.as_ref().unwrap().value.name, "unsloth/gemma-3-1b-it");
    assert_eq!(p.quantization.as_ref().unwrap().value, None);
    assert_eq!(slice(UNSLOTH_GRPO, p.quantization.as_ref().unwrap()), "False");
    assert_eq!(p.method.as_ref().unwrap().value, Method::Lora);
    let lora = p.lora.as_ref().unwrap();
    assert_eq!(lora.rank.value, 32);
    // The fix target is the constant, not the keyword argument.
    assert_eq!(slice(UNSLOTH_GRPO, &lora.rank), "32");
    assert!(lora.targets.value.mlp_down && lora.targets.value.output);
    assert_eq!(p.gradient_checkpointing.as_ref().unwrap().value, Checkpointing::CpuOffload);
    assert_eq!(p.max_seq_length.as_ref().unwrap().value, 1024);
    let rl = p.rl.as_ref().unwrap();
    assert_eq!(rl.max_completion_length.value, 768);
    let vllm = rl.vllm.as_ref().unwrap();
    assert!(vllm.fraction_of_free);
    assert_eq!(vllm.gpu_memory_utilization.value, 0.6);
    assert_eq!(slice(UNSLOTH_GRPO, &vllm.gpu_memory_utilization), "0.6");
    assert!(!p.reference_model.as_ref().unwrap().value);
    assert_eq!(p.load_dtype.as_ref().unwrap().value, Dtype::Auto);
}

#[test]
fn unsloth_loads_in_4bit_by_default_and_rejects_two_precisions() {
    let base = "from unsloth import FastLanguageModel\nmodel, tok = FastLanguageModel.from_pretrained('unsloth/Llama-3.2-1B-Instruct'{})\nmodel = FastLanguageModel.get_peft_model(model)\n";
    let with = |extra: &str| plan_of(&base.replace("{}", extra)).1;
    let default = with("");
    assert_eq!(default.quantization.as_ref().unwrap().value, Some(Quantization::Nf4 { double_quant: true }));
    assert!(matches!(default.quantization.as_ref().unwrap().origin, Origin::Default { .. }));
    assert_eq!(default.method.as_ref().unwrap().value, Method::Qlora);
    assert_eq!(default.lora.as_ref().unwrap().rank.value, 16);
    let both = with(", load_in_8bit=True");
    let q = both.quantization.as_ref().unwrap();
    assert!(matches!(&q.origin, Origin::Unknown { why } if why.contains("not a combination")));
    let eight = with(", load_in_4bit=False, load_in_8bit=True");
    assert_eq!(eight.quantization.as_ref().unwrap().value, Some(Quantization::Int8));
    let full = with(", full_finetuning=True");
    assert_eq!(full.quantization.as_ref().unwrap().value, None);
    assert_eq!(full.method.as_ref().unwrap().value, Method::Full);
    assert!(full.lora.is_none());
    // 4-bit is on by default, so asking for 16-bit alone is a combination too.
    let sixteen = with(", load_in_16bit=True");
    assert!(matches!(sixteen.quantization.as_ref().unwrap().origin, Origin::Unknown { .. }));
    let short = with(", max_seq_length=256");
    assert_eq!(short.max_seq_length.as_ref().unwrap().value, 256);
    assert!(matches!(short.gradient_checkpointing.as_ref().unwrap().origin, Origin::Derived { .. }));
    assert_eq!(short.gradient_checkpointing.as_ref().unwrap().value, Checkpointing::Full);
    assert_eq!(default.max_seq_length.as_ref().unwrap().value, 2048);
    assert_eq!(default.gradient_checkpointing.as_ref().unwrap().value, Checkpointing::CpuOffload);
}

/// The loader's flags as Unsloth reads them, for the rules: truthiness, defaults, the
/// argument each comes from, and a `quantization_config` that replaces 4-bit and 8-bit.
#[test]
fn the_unsloth_loader_flags_are_read_once() {
    let base = "from unsloth import FastLanguageModel, FastModel\nfrom transformers import BitsAndBytesConfig\nmodel, tok = FastLanguageModel.from_pretrained('unsloth/Llama-3.2-1B-Instruct'{})\n";
    let with = |extra: &str| {
        let text = base.replace("{}", extra);
        let load = plan_of(&text).1.unsloth.expect("an Unsloth loader");
        (text, load)
    };
    let (text, load) = with(", load_in_8bit=1, load_in_fp8='block'");
    assert!(load.language_model);
    assert_eq!(slice_of(&text, load.loader), "FastLanguageModel.from_pretrained");
    assert_eq!(load.load_in_4bit.on.value, Some(true));
    assert!(load.load_in_4bit.argument.is_none() && matches!(load.load_in_4bit.on.origin, Origin::Default { .. }));
    assert_eq!(load.load_in_8bit.on.value, Some(true));
    assert_eq!(slice_of(&text, load.load_in_8bit.argument.unwrap()), "load_in_8bit=1");
    assert_eq!(load.load_in_fp8.on.value, Some(true));
    assert_eq!((load.load_in_16bit.on.value, load.full_finetuning.on.value), (Some(false), Some(false)));
    // A value the script computes is not known; the flag points at its keyword.
    let (text, load) = with(", load_in_4bit=flag");
    assert_eq!(load.load_in_4bit.on.value, None);
    assert!(matches!(load.load_in_4bit.on.origin, Origin::Unknown { .. }));
    assert_eq!(slice_of(&text, load.load_in_4bit.argument.unwrap()), "load_in_4bit");
    // A BitsAndBytesConfig asking for 8 bits turns 4-bit off; the flag points at the config.
    let (text, load) = with(", load_in_4bit=True, quantization_config=BitsAndBytesConfig(load_in_8bit=True)");
    assert_eq!((load.load_in_4bit.on.value, load.load_in_8bit.on.value), (Some(false), Some(true)));
    assert_eq!(slice_of(&text, load.load_in_8bit.argument.unwrap()), "quantization_config");
    assert_eq!(slice_of(&text, load.load_in_8bit.on.value_span().unwrap()), "True");
    // A dict written in the call: the keyword with its value; `None` replaces nothing.
    let (text, load) = with(", load_in_16bit=True, quantization_config={'load_in_4bit': True}");
    assert_eq!(load.load_in_4bit.on.value, Some(true));
    assert_eq!(slice_of(&text, load.load_in_4bit.argument.unwrap()), "quantization_config={'load_in_4bit': True}");
    let (_, load) = with(", load_in_4bit=False, quantization_config=None");
    assert_eq!(load.load_in_4bit.on.value, Some(false));
    // A config the script computes hides both flags.
    let (_, load) = with(", quantization_config=make_config()");
    assert_eq!((load.load_in_4bit.on.value, load.load_in_8bit.on.value), (None, None));
    let (_, load) = with("");
    assert!(load.load_in_4bit.on.value == Some(true) && load.load_in_8bit.on.value == Some(false));
    let text = base.replace("FastLanguageModel.from_pretrained", "FastModel.from_pretrained").replace("{}", "");
    assert!(!plan_of(&text).1.unsloth.unwrap().language_model);
    let text = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('x')\n";
    assert!(plan_of(text).1.unsloth.is_none());
}

#[test]
fn a_notebook_plans_like_the_same_script() {
    let cells: Vec<String> = UNSLOTH_GRPO
        .split("\n\n")
        .map(|cell| {
            let lines: Vec<String> =
                cell.split_inclusive('\n').map(|l| serde_json::to_string(l).unwrap_or_default()).collect();
            format!("{{\"cell_type\": \"code\", \"source\": [{}]}}", lines.join(", "))
        })
        .collect();
    let text = format!("{{\"cells\": [{}], \"nbformat\": 4}}", cells.join(", "));
    let doc = format::document(&text, Language::Notebook);
    let notebook_plan = plan(detect(&script(&doc).unwrap()), &doc).unwrap();
    let (_, script_plan) = plan_of(UNSLOTH_GRPO);
    assert_eq!(notebook_plan.framework, Framework::Unsloth);
    assert_eq!(notebook_plan.lora.as_ref().unwrap().rank.value, script_plan.lora.as_ref().unwrap().rank.value);
    let rank = notebook_plan.lora.as_ref().unwrap().rank.value_span().unwrap();
    assert_eq!(&text[rank.start..rank.end], "32");
    let util = &notebook_plan.rl.as_ref().unwrap().vllm.as_ref().unwrap().gpu_memory_utilization;
    assert_eq!(util.value, 0.6);
}

#[test]
fn transformers_script_reads_loader_bnb_and_peft() {
    let text = r#"
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments
from peft import LoraConfig, get_peft_model
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_use_double_quant=True)
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf", quantization_config=bnb, torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2")
model = get_peft_model(model, LoraConfig(r=64, target_modules=["q_proj", "k_proj"]))
args = TrainingArguments(output_dir="out", per_device_train_batch_size=BATCH, gradient_checkpointing=True)
Trainer(model=model, args=args).train()
"#;
    let (format, p) = plan_of(text);
    assert_eq!(format, Format::Transformers);
    assert_eq!(p.framework, Framework::Transformers);
    assert_eq!(p.quantization.as_ref().unwrap().value, Some(Quantization::Nf4 { double_quant: true }));
    assert_eq!(p.method.as_ref().unwrap().value, Method::Qlora);
    assert_eq!(p.lora.as_ref().unwrap().rank.value, 64);
    assert_eq!(p.attention.as_ref().unwrap().value, crate::plan::Attention::Flash);
    assert_eq!(p.load_dtype.as_ref().unwrap().value, Dtype::Bf16);
    assert_eq!(slice(text, p.load_dtype.as_ref().unwrap()), "torch.bfloat16");
    let mbs = p.micro_batch_size.as_ref().unwrap();
    assert!(matches!(&mbs.origin, Origin::Unknown { why } if why.contains("BATCH")));
    assert_eq!(p.gradient_checkpointing.as_ref().unwrap().value, Checkpointing::Full);
}

#[test]
fn a_tp_plan_splits_the_model_over_tp_size_or_every_process() {
    let script = |args: &str| {
        format!(
            "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\
             model = AutoModelForCausalLM.from_pretrained(\"meta-llama/Llama-3.1-8B\"{args})\n\
             Trainer(model=model, args=TrainingArguments(output_dir=\"out\")).train()\n"
        )
    };
    let text = script(", tp_plan=\"auto\", tp_size=4");
    let tp = plan_of(&text).1.tensor_parallel.expect("tensor parallel");
    assert_eq!(tp.value, TensorParallel { size: Some(4), layout: TpLayout::Transformers });
    assert_eq!(slice(&text, &tp), "4");
    let world = plan_of(&script(", tp_plan=\"auto\"")).1.tensor_parallel.expect("tensor parallel");
    assert_eq!(world.value.size, None);
    assert!(plan_of(&script(", tp_plan=None")).1.tensor_parallel.is_none());
    assert!(plan_of(&script("")).1.tensor_parallel.is_none());
}

#[test]
fn scripts_without_training_calls_are_unknown() {
    let text = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('gpt2')\n";
    assert_eq!(detect(&script(&format::document(text, Language::Python)).unwrap()), Format::Unknown);
}

const OLD_SFT_TRAINER: &str = r#"
from transformers import TrainingArguments
from trl import SFTTrainer
trainer = SFTTrainer(model="Qwen/Qwen2.5-0.5B", tokenizer=tok, max_seq_length=512, packing=True,
                     args=TrainingArguments(output_dir="o", max_seq_length=1), dataset_text_field="text")
"#;

#[test]
fn old_sft_trainer_arguments_are_read() {
    let (format, p) = plan_of(OLD_SFT_TRAINER);
    assert_eq!(format, Format::TrlSft);
    // The trainer's value overrides the config's, as TRL before 0.13 did.
    assert_eq!(p.max_seq_length.as_ref().unwrap().value, 512);
    assert_eq!(slice(OLD_SFT_TRAINER, p.max_seq_length.as_ref().unwrap()), "512");
    assert!(p.packing.as_ref().unwrap().value);
}

#[test]
fn a_script_that_builds_no_trainer_runs_inference() {
    let inference = "from unsloth import FastLanguageModel\nmodel, tok = FastLanguageModel.from_pretrained(model_name=\"unsloth/Llama-3.1-8B-Instruct\", load_in_4bit=True)\nFastLanguageModel.for_inference(model)\nout = model.generate(**tok([\"Hi\"], return_tensors=\"pt\").to(\"cuda\"), max_new_tokens=64)\n";
    let (_, plan) = plan_of(inference);
    assert!(!plan.trains(), "{:?}", plan.command);
    let custom = format!("{inference}from trl import ORPOConfig, ORPOTrainer\ntrainer = ORPOTrainer(model=model, args=ORPOConfig(output_dir=\"o\"))\ntrainer.train()\n");
    assert!(plan_of(&custom).1.trains(), "an unrecognized trainer still trains");
}

#[test]
fn the_trainer_trains_the_model_its_argument_comes_from() {
    // A teacher loaded later, a reload after training and a helper never called do not
    // take the loader's role: the trainer's `model` leads back through get_peft_model.
    let text = r#"
from transformers import AutoModelForCausalLM
from peft import LoraConfig, get_peft_model, PeftModel
from trl import SFTTrainer, SFTConfig
def helper():
    return AutoModelForCausalLM.from_pretrained("org/never-70b")
base = AutoModelForCausalLM.from_pretrained("org/student-1b")
model = get_peft_model(base, LoraConfig(r=4))
teacher = AutoModelForCausalLM.from_pretrained("org/teacher-8b")
trainer = SFTTrainer(model=model, args=SFTConfig(output_dir="o"))
trainer.train()
reloaded = AutoModelForCausalLM.from_pretrained("org/after-3b")
"#;
    let (_, plan) = plan_of(text);
    assert_eq!(plan.model.unwrap().value.name, "org/student-1b");
    assert_eq!(plan.lora.unwrap().rank.value, 4);
    // PeftModel.from_pretrained wraps a base model too; the adapter's rank is in its files.
    let text = r#"
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
from peft import PeftModel
base = AutoModelForCausalLM.from_pretrained("org/base-7b")
model = PeftModel.from_pretrained(base, "my-adapter", is_trainable=True)
other = AutoModelForCausalLM.from_pretrained("org/other-1b")
Trainer(model=model, args=TrainingArguments(output_dir="o")).train()
"#;
    let (_, plan) = plan_of(text);
    assert_eq!(plan.model.unwrap().value.name, "org/base-7b");
    assert!(matches!(plan.lora.unwrap().rank.origin, Origin::Unknown { .. }));
    // A model name given to the trainer is loaded by it, whatever else the script loads.
    let text = r#"
from transformers import AutoModelForCausalLM
from trl import GRPOTrainer
judge = AutoModelForCausalLM.from_pretrained("org/judge-8b")
GRPOTrainer(model="org/policy-0.5b", reward_funcs=[judge]).train()
"#;
    let (_, plan) = plan_of(text);
    assert_eq!(plan.model.unwrap().value.name, "org/policy-0.5b");
}

#[test]
fn model_names_built_from_constants_and_reused() {
    // Tuple targets, f-strings of constants and a name rebound later (the reload after
    // training) each read the value in force where the loader uses it.
    let text = r#"
from unsloth import FastLanguageModel
from trl import SFTTrainer
family, size = "Qwen3", 4
model_name = f"unsloth/{family}-{size}B-Instruct"
model, tok = FastLanguageModel.from_pretrained(model_name=model_name, load_in_4bit=False)
model = FastLanguageModel.get_peft_model(model, **{"r": 8, "lora_alpha": 8})
SFTTrainer(model=model, train_dataset=d).train()
model_name = "lora_model"
model, tok = FastLanguageModel.from_pretrained(model_name=model_name)
"#;
    let (_, plan) = plan_of(text);
    assert_eq!(plan.model.unwrap().value.name, "unsloth/Qwen3-4B-Instruct");
    assert_eq!(plan.quantization.unwrap().value, None, "load_in_4bit=False of the loader that reaches the trainer");
    assert_eq!(plan.lora.unwrap().rank.value, 8);
}

#[test]
fn a_pre_quantized_checkpoint_loads_in_4_bit_under_transformers() {
    let text = r#"
from transformers import AutoModelForCausalLM
from peft import LoraConfig
from trl import SFTTrainer
model = AutoModelForCausalLM.from_pretrained("unsloth/Llama-3.2-3B-Instruct-unsloth-bnb-4bit")
SFTTrainer(model=model, peft_config=LoraConfig(r=16)).train()
"#;
    let (_, plan) = plan_of(text);
    assert!(matches!(plan.quantization.unwrap().value, Some(Quantization::Nf4 { .. })));
    assert_eq!(plan.method.unwrap().value, Method::Qlora);
}

#[test]
fn models_that_are_not_decoder_language_models_are_not_estimated() {
    let cases = [
        ("from transformers import AutoModelForSequenceClassification as M, Trainer\nmodel = M.from_pretrained(\"org/Llama-3-8B\", num_labels=2)\nTrainer(model=model).train()\n", "sequence-classification"),
        ("from transformers import AutoModelForSpeechSeq2Seq, Seq2SeqTrainer\nmodel = AutoModelForSpeechSeq2Seq.from_pretrained(\"org/asr-small\")\nSeq2SeqTrainer(model=model).train()\n", "speech"),
        ("from unsloth import FastModel\nfrom transformers import Trainer\nmodel, tok = FastModel.from_pretrained(\"org/ModernBERT-base\")\nTrainer(model=model).train()\n", "BERT-style"),
        ("from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer\nmodel = SentenceTransformer(\"org/any-encoder\")\nSentenceTransformerTrainer(model=model).train()\n", "embedding"),
    ];
    for (text, what) in cases {
        let doc = format::document(text, Language::Python);
        let plan = plan(detect(&script(&doc).unwrap()), &doc).unwrap();
        let why = plan.not_estimated.unwrap_or_else(|| panic!("{text}: estimated"));
        assert!(why.contains(what) && why.contains("no memory estimate"), "{why}");
    }
    let (_, plan) = plan_of("from transformers import AutoModelForCausalLM, Trainer\nTrainer(model=AutoModelForCausalLM.from_pretrained(\"org/Llama-3-8B\")).train()\n");
    assert_eq!(plan.not_estimated, None);
}

#[test]
fn environment_settings_of_every_script_reach_the_plan() {
    let text = r#"
import os
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
if False:
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:16"
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
model = AutoModelForCausalLM.from_pretrained("org/m")
Trainer(model=model, args=TrainingArguments(output_dir="o")).train()
"#;
    let doc = format::document(text, Language::Python);
    let format = detect(&script(&doc).unwrap());
    assert_eq!(format, Format::Transformers);
    let plan = format::build_plan(format, &doc, text).unwrap();
    let values: Vec<&str> = plan.allocator.iter().map(|a| a.value.as_str()).collect();
    assert_eq!(values, ["expandable_segments:True"], "the setting in `if False:` never runs");
    assert_eq!(&text[plan.allocator[0].value_span.start..plan.allocator[0].value_span.end], "expandable_segments:True");
}

#[test]
fn unsloths_cross_entropy_follows_the_release() {
    use crate::plan::{CeChunkTarget, LossImpl};
    let pinned = |release: &str| {
        Versions::from_file(
            "requirements.txt",
            &format!("unsloth=={release}\n"),
            std::path::Path::new("requirements.txt"),
        )
    };
    let loss = |release: &str, language_model: bool| unsloth_cross_entropy(&pinned(release), language_model).value;
    assert_eq!(loss("2025.3.19", true), LossImpl::UnslothLogits);
    assert_eq!(loss("2025.3.19", false), LossImpl::Liger, "FastModel's compiled forwards use cut cross-entropy");
    assert_eq!(loss("2025.8.9", true), LossImpl::UnslothFused(CeChunkTarget::Fixed { mib: 1024 }));
    let uncapped = CeChunkTarget::ShareOfFree { percent: 50, cap_mib: None, round_up: false };
    assert_eq!(loss("2025.12.8", false), LossImpl::UnslothFused(uncapped));
    let capped = CeChunkTarget::ShareOfFree { percent: 50, cap_mib: Some(4096), round_up: true };
    assert_eq!(loss("2026.7.1", true), LossImpl::UnslothFused(capped));
    assert_eq!(
        unsloth_cross_entropy(&Versions::default(), true).value,
        LossImpl::UnslothFused(capped),
        "newest without a pin"
    );
    assert!(format!("{:?}", unsloth_cross_entropy(&pinned("2025.8.9"), true).origin).contains("unsloth==2025.8.9"));
}

#[test]
fn gemma_3s_multimodal_class_takes_whole_logits_before_transformers_4_52() {
    let pinned = |unsloth: &str, transformers: &str| {
        Versions::from_file(
            "requirements.txt",
            &format!("unsloth=={unsloth}\ntransformers=={transformers}\n"),
            std::path::Path::new("requirements.txt"),
        )
    };
    let vision = crate::catalog::resolve_model("google/gemma-3-4b-it").expect("in the catalog");
    let text = crate::catalog::resolve_model("google/gemma-3-1b-it").expect("in the catalog");
    assert_eq!(whole_logits_chunks(&pinned("2025.3.19", "4.50.2"), Some(vision)), Some(4));
    // unsloth-zoo 2025.6.5's compiled_ce_loss_function: ⌈V / 262144 × 8⌉ + 2 (V = 262144 rows).
    assert_eq!(whole_logits_chunks(&pinned("2025.6.6", "4.51.3"), Some(vision)), Some(10));
    assert_eq!(whole_logits_chunks(&pinned("2025.6.6", "4.52.4"), Some(vision)), None, "own lm_head from 4.52");
    assert_eq!(whole_logits_chunks(&pinned("2025.7.2", "4.51.3"), Some(vision)), None, "fused from 2025.7.2");
    assert_eq!(whole_logits_chunks(&pinned("2025.3.19", "4.50.2"), Some(text)), None, "Gemma3ForCausalLM");
}

#[test]
fn unsloth_trainer_and_arguments_are_trl_sft_with_unsloth_defaults() {
    // `UnslothTrainingArguments(SFTConfig)` adds `embedding_learning_rate`; Unsloth's TRL
    // configs default bf16 to False (its trainer then picks the GPU's half precision).
    let text = "from unsloth import FastLanguageModel, UnslothTrainer, UnslothTrainingArguments\nmodel, tok = FastLanguageModel.from_pretrained(model_name=\"unsloth/Llama-3.2-1B\", load_in_4bit=False)\ntrainer = UnslothTrainer(model=model, args=UnslothTrainingArguments(per_device_train_batch_size=2, embedding_learning_rate=5e-6))\n";
    let (format, p) = plan_of(text);
    assert_eq!(format, Format::TrlSft);
    assert_eq!(p.micro_batch_size.unwrap().value, 2);
    assert!(!p.trainer.as_ref().unwrap().bf16.value);
    let doc = format::document(text, Language::Python);
    assert!(doc.root_mapping().unwrap().entry("embedding_learning_rate").is_none());
}
