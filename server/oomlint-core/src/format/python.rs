//! Python training scripts and notebooks: which run they configure, and its plan.
//!
//! A script is reported in the format of its config class (`GRPOConfig` → `trl-grpo`,
//! `SFTConfig` → `trl-sft`, `DPOConfig` → `trl-dpo`, `TrainingArguments` → `transformers`,
//! or the trainer's when no config is visible), so the TRL/transformers schemas and rules
//! read its keyword arguments as they read a TRL YAML. The plan starts from the TRL plan
//! of those arguments and then applies what only the script says: the loader
//! (`FastLanguageModel.from_pretrained`, `AutoModelForCausalLM.from_pretrained`), the
//! PEFT call, bitsandbytes, and Unsloth's own semantics (`unslothai/unsloth`
//! `models/loader.py`, `models/llama.py`, `models/_utils.py`; `unsloth-zoo`
//! `vllm_utils.py`; summarized in research `formats.md` §5 and §9.3):
//!
//! * `load_in_4bit` defaults to True; two of 4-bit, 8-bit, 16-bit and fp8 raise
//!   ("Can only load in 4bit or 8bit or 16bit, not a combination!"), so the plan marks the
//!   quantization unknown; `full_finetuning=True` turns quantization off.
//! * `fast_inference=True` runs vLLM in the training process on the same base weights;
//!   its `gpu_memory_utilization` (default 0.5) is a fraction of *free* memory.
//! * `use_gradient_checkpointing="unsloth"` (the default) offloads the checkpointed
//!   activations to CPU; below 512 tokens Unsloth falls back to plain checkpointing.
//!
//! Values the script computes at run time are `Sourced::unknown` with the reason.
//!
//! The syntax layer reads the program (calls, bindings, environment settings) once per
//! analysis and keeps it on the document; `calls` recognizes the framework calls in it
//! and `layout` lays their arguments out as a TRL CLI config for the schemas and rules.

mod calls;
mod layout;

pub(crate) use calls::{Arg, ArgValue, Call, Roles, Script};
pub use calls::{Callee, Preference};

use super::hf_names::{attention_kind, lora_targets, not_a_decoder};
use super::trl::{self, dtype_of};
use super::{facts, Format, Reader};
use crate::catalog::Architecture;
use crate::plan::{
    Attention, Checkpointing, Dtype, Framework, LoraPlan, LossImpl, Method, ModelRef, Origin, Plan, Quantization,
    RlAlgorithm, Sourced, TensorParallel, TpLayout, UnslothFlag, UnslothSettings, VllmMode, VllmPlan,
};
use crate::span::Span;
use crate::syntax::python::{PyValue, Spanned, Static};
use crate::syntax::{notebook, python, Document, Language};
use crate::versions::{Version, Versions};

const UNSLOTH: &str = "Unsloth";

/// The recognized calls of a script's or notebook's document (None for other documents
/// and notebooks that cannot be read).
pub fn script(document: &Document) -> Option<Script<'_>> {
    document.program.as_deref().map(Script::of)
}

/// Parses a script or notebook (None for other languages), reading `torch.bfloat16` and
/// the other torch dtypes as their names (`trl::dtype_of` reads them).
pub(crate) fn parse(text: &str, language: Language) -> Option<Document> {
    let dtype = |text: &str| {
        matches!(
            text,
            "torch.bfloat16" | "torch.float16" | "torch.half" | "torch.float32" | "torch.float" | "torch.float64"
        )
    };
    match language {
        Language::Python => Some(python::parse_with(text, &dtype)),
        Language::Notebook => Some(notebook::parse_with(text, &dtype)),
        _ => None,
    }
}

/// Gives the document of a script or notebook its tree: the recognized calls laid out as
/// a TRL CLI config (see `layout`). Other documents are left as they are.
pub(crate) fn lay_out(document: &mut Document) {
    if let Some(script) = script(document) {
        let root = layout::root(&script);
        document.root = Some(root);
    }
}

/// The format of a script: its config class, else its trainer, else an Unsloth loader
/// (Unsloth scripts train with TRL's `SFTTrainer`). Scripts without any of them are
/// [`Format::Unknown`] and get no findings.
pub(crate) fn detect(script: &Script) -> Format {
    let roles = script.roles();
    let callee = |i: Option<usize>| script.call(i).map(|c| c.callee);
    let trainer = callee(roles.trainer);
    match (callee(roles.config), trainer) {
        (Some(Callee::GrpoConfig), _) | (_, Some(Callee::GrpoTrainer)) => Format::TrlGrpo,
        (Some(Callee::DpoConfig), _) | (_, Some(Callee::DpoTrainer)) => Format::TrlDpo,
        // ORPO/KTO/CPO/reward configs subclass `TrainingArguments`: their schema is that one.
        (Some(Callee::PreferenceConfig(_)), _) | (_, Some(Callee::PreferenceTrainer(_))) => Format::Transformers,
        (Some(Callee::SftConfig), _) | (_, Some(Callee::SftTrainer)) => Format::TrlSft,
        (Some(Callee::TrainingArguments), _) | (_, Some(Callee::Trainer)) => Format::Transformers,
        _ if matches!(callee(roles.loader), Some(Callee::UnslothFromPretrained)) => Format::TrlSft,
        _ => Format::Unknown,
    }
}

/// Builds the plan of a script whose document is `doc` (see the module docs).
pub(crate) fn plan(format: Format, doc: &Document) -> Option<Plan> {
    let script = script(doc)?;
    let root = doc.root_mapping()?;
    let reader = Reader::new(root);
    let roles = script.roles();
    let mut plan = match preference(&script, &roles) {
        // Read with TRL's defaults (every TRL config class shares `_BaseConfig`'s).
        Some(algorithm) => trl::plan_for(Format::TrlDpo, algorithm, &reader),
        None => trl::plan(format, &reader),
    };
    let script = Builder { script: &script, roles, reader: &reader };
    let unsloth = script.loader().is_some_and(|c| matches!(c.callee, Callee::UnslothFromPretrained));
    if unsloth {
        plan.framework = Framework::Unsloth;
    }
    plan.model = script.model();
    plan.not_estimated = script.not_a_decoder(plan.model.as_ref());
    if unsloth {
        script.unsloth(&mut plan);
    } else {
        script.hf(&mut plan);
    }
    trl::preference_adapters(&mut plan, &reader);
    script.mark_unknown(&mut plan);
    // A script that loads a model but builds no trainer and no training config runs
    // inference (or exports): it is not estimated as training.
    // (Any call of a `…Trainer` or `.train()` counts as training, recognized or not:
    // ORPOTrainer, UnslothTrainer, a custom loop.)
    let trains = |c: &python::Call| {
        c.path.last().is_some_and(|name| name.ends_with("Trainer") || name == "train" || name == "fit")
    };
    let trains_somewhere = doc.program.as_ref().is_some_and(|p| p.calls.iter().any(|c| !c.dead && trains(c)));
    if roles.trainer.is_none() && roles.config.is_none() && !trains_somewhere {
        plan.command = Some("inference".to_string());
    }
    Some(plan)
}

/// The preference trainer beyond DPO a script builds (its trainer, else its config class).
fn preference(script: &Script, roles: &Roles) -> Option<RlAlgorithm> {
    let kind = |i: Option<usize>| match script.call(i)?.callee {
        Callee::PreferenceTrainer(p) | Callee::PreferenceConfig(p) => Some(p),
        _ => None,
    };
    Some(match kind(roles.trainer).or_else(|| kind(roles.config))? {
        Preference::Orpo => RlAlgorithm::Orpo,
        Preference::Kto => RlAlgorithm::Kto,
        Preference::Cpo => RlAlgorithm::Cpo,
        Preference::Reward => RlAlgorithm::Reward,
    })
}

struct Builder<'a> {
    script: &'a Script<'a>,
    roles: Roles,
    reader: &'a Reader<'a>,
}

impl Builder<'_> {
    fn call(&self, index: Option<usize>) -> Option<&Call> {
        self.script.call(index)
    }

    fn loader(&self) -> Option<&Call> {
        self.call(self.roles.loader)
    }

    fn peft(&self) -> Option<&Call> {
        self.call(self.roles.peft)
    }

    /// The loader's model name, else a model name given to the trainer.
    fn model(&self) -> Option<Sourced<ModelRef>> {
        let from = |call: Option<&Call>, names: &[&str]| {
            let call = call?;
            names.iter().find_map(|n| {
                let (arg, value) = call.known(n)?;
                let PyValue::Str(name, _) = &value.value else { return None };
                Some(Sourced::file(
                    ModelRef { is_path: name.starts_with(['/', '.', '~']), name: name.clone() },
                    arg.key_span,
                    value.span,
                ))
            })
        };
        let model = from(self.loader(), &["model_name", "pretrained_model_name_or_path", "model_name_or_path"])
            .or_else(|| from(self.call(self.roles.trainer), &["model"]))?;
        Some(if model.value.is_path { self.downloaded(&model.value.name).unwrap_or(model) } else { model })
    }

    /// The hub repository a local directory was downloaded from in the program
    /// (`snapshot_download("org/name", local_dir="name")`), outside branches that never run.
    fn downloaded(&self, dir: &str) -> Option<Sourced<ModelRef>> {
        let clean = |d: &str| d.trim_start_matches("./").trim_end_matches('/').to_string();
        let dir = clean(dir);
        self.script
            .program
            .calls
            .iter()
            .rev()
            .filter(|c| !c.dead && c.path.last().is_some_and(|l| l == "snapshot_download"))
            .find_map(|call| {
                let (_, _, local) = known_str(call, "local_dir", None)?;
                if clean(&local) != dir {
                    return None;
                }
                let (arg, value, repo) = known_str(call, "repo_id", Some(0))?;
                Some(Sourced::file(ModelRef { name: repo, is_path: false }, arg.key_span, value.span))
            })
    }

    /// Why the model is not estimated when it is not a decoder language model, from the
    /// loader's class (Unsloth's `auto_model=`) and the model's name.
    fn not_a_decoder(&self, model: Option<&Sourced<ModelRef>>) -> Option<String> {
        let loader = self.loader();
        let class = loader.and_then(|l| match l.callee {
            Callee::SentenceTransformer => Some("SentenceTransformer"),
            _ => l
                .arg("auto_model")
                .and_then(|a| a.variable.as_deref())
                .or_else(|| l.path.len().checked_sub(2).and_then(|i| l.path.get(i)).map(String::as_str)),
        });
        let name = model.map_or("", |m| m.value.name.as_str());
        // A reward model is a sequence classifier over a decoder: the estimate knows its score head.
        if self.call(self.roles.trainer).is_some_and(|t| t.callee == Callee::PreferenceTrainer(Preference::Reward)) {
            return None;
        }
        let what = not_a_decoder(class, name)?;
        let subject = if name.is_empty() { "the model".to_string() } else { format!("`{name}`") };
        Some(format!(
            "{subject} is {what}: oomlint estimates the training of decoder language models only, so it gives no memory estimate"
        ))
    }

    /// A loader keyword argument read through the document (`model_init_kwargs.*`).
    fn loader_bool(&self, name: &str) -> Option<Sourced<bool>> {
        arg(self.loader(), name, as_bool)
    }

    fn unsloth(&self, plan: &mut Plan) {
        let Some(loader) = self.loader() else { return };
        let load = self.unsloth_settings(loader);
        // A flag the script computes counts as its default here (the rules read it as unknown).
        let assume = |flag: &UnslothFlag, name: &str| match flag.on.value {
            Some(on) => flag.on.clone().map(|_| on),
            None => Sourced::default_of(unsloth_flag_default(name), unsloth_flag_note(name)),
        };
        let four = assume(&load.load_in_4bit, "load_in_4bit");
        let eight = assume(&load.load_in_8bit, "load_in_8bit");
        let sixteen = assume(&load.load_in_16bit, "load_in_16bit");
        let fp8 = assume(&load.load_in_fp8, "load_in_fp8");
        let full = (load.full_finetuning.on.value == Some(true)).then(|| load.full_finetuning.on.clone());
        let chosen = [&four, &eight, &sixteen, &fp8].into_iter().filter(|f| f.value).count();
        plan.quantization = Some(match (&full, chosen) {
            (Some(f), _) => f.clone().map(|_| None),
            (None, n) if n > 1 => Sourced::unknown(
                None,
                "Unsloth raises \"Can only load in 4bit or 8bit or 16bit, not a combination!\" (load_in_4bit defaults to True)",
            ),
            _ if four.value => four.clone().map(|_| Some(Quantization::Nf4 { double_quant: true })),
            _ if eight.value => eight.clone().map(|_| Some(Quantization::Int8)),
            _ if fp8.value => fp8.clone().map(|_| Some(Quantization::Fp8)),
            // 16-bit: the flag that says so (`load_in_16bit=True` or `load_in_4bit=False`).
            _ => [&sixteen, &four].into_iter().find(|f| f.is_from_file()).unwrap_or(&sixteen).clone().map(|_| None),
        });
        plan.unsloth = Some(load);
        let quantized = plan.quantization.as_ref().is_some_and(|q| q.value.is_some());
        let peft = self.peft();
        plan.method = Some(match (&full, peft) {
            (Some(f), _) => f.clone().map(|_| Method::Full),
            (None, Some(p)) => Sourced::file(
                if quantized && four.value { Method::Qlora } else { Method::Lora },
                p.name_span,
                p.args_span,
            ),
            (None, None) => Sourced::default_of(Method::Full, "no get_peft_model call: every parameter trains"),
        });
        plan.load_dtype = Some(self.dtype().unwrap_or_else(|| {
            Sourced::default_of(Dtype::Auto, "Unsloth dtype=None: bfloat16 where supported, else float16")
        }));
        // Unsloth rewrites TRL's config classes with `bf16=False, fp16=False` defaults and its
        // trainer then picks bf16 autocast where the GPU has it, else fp16
        // (`unsloth/models/rl.py`: `replacements`, and the mixed-precision fix-up of the trainer).
        if let Some(trainer) = plan.trainer.as_mut().filter(|t| !t.bf16.is_from_file()) {
            trainer.bf16 = Sourced::default_of(
                false,
                "Unsloth's TRL configs default bf16=False; its trainer picks bf16 where the GPU has it, else fp16",
            );
        }
        plan.lora = peft.filter(|_| full.is_none()).map(|p| self.lora(p, facts::Framework::Unsloth, unsloth_targets()));
        plan.attention = Some(self.attention().unwrap_or_else(|| {
            Sourced::default_of(
                Attention::Flash,
                "Unsloth's own attention kernels (flash-attn, xformers or SDPA): no n×n score matrix is kept",
            )
        }));
        if plan.rl.is_some() {
            // GRPO's per-token log-probabilities materialize the logits of the batch
            // (`_get_per_token_logps_and_entropies`): the allocation that runs out of memory
            // in the Unsloth GRPO memory guide (Gemma 3 1B, 6.01 GiB).
            plan.loss = Some(Sourced::default_of(LossImpl::Full, "GRPO per-token log-probabilities over full logits"));
        } else if self.reader.bool("use_liger_kernel").is_none_or(|l| !l.value) {
            let language_model = plan.unsloth.as_ref().is_some_and(|u| u.language_model);
            plan.loss = Some(unsloth_cross_entropy(&Versions::default(), language_model));
        }
        // Unsloth's SFTTrainer takes the model's `max_seq_length` when the config sets no length.
        if plan.max_seq_length.as_ref().is_none_or(|m| !m.is_from_file()) && format_is_sft(plan) {
            plan.max_seq_length = Some(arg(self.loader(), "max_seq_length", as_u64).unwrap_or_else(|| {
                facts::count_as(facts::Framework::Unsloth, "max_seq_length", |v| {
                    format!("{UNSLOTH} from_pretrained max_seq_length={v}")
                })
            }));
        }
        if let Some(rl) = plan.rl.as_mut() {
            // Without `max_prompt_length`, prompt + completion are bounded by the loader's length.
            if rl.max_prompt_length.is_none() {
                if let Some(len) = arg(self.loader(), "max_seq_length", as_u64) {
                    plan.max_seq_length = Some(len);
                }
            }
            rl.vllm = self.unsloth_vllm();
            if plan.lora.is_some() {
                plan.reference_model =
                    Some(Sourced::derived(false, "LoRA: the reference log-probabilities come from the base weights"));
            }
        }
        // After the length is known: below 512 tokens Unsloth checkpoints on the GPU.
        plan.gradient_checkpointing = Some(self.unsloth_checkpointing(plan));
    }

    /// The loader's precision flags as Unsloth's `from_pretrained` reads them (see
    /// [`UnslothSettings`]): `if q_load_in_4bit: load_in_4bit = True; load_in_8bit = False`,
    /// then the same for 8-bit, where `q_…` is the config's attribute or dict entry.
    fn unsloth_settings(&self, loader: &Call) -> UnslothSettings {
        let flag = |name: &str| {
            let Some(arg) = loader.arg(name) else {
                return UnslothFlag {
                    on: Sourced::default_of(Some(unsloth_flag_default(name)), unsloth_flag_note(name)),
                    argument: None,
                };
            };
            let on = match &arg.value {
                ArgValue::Known(v) => match truthy(&v.value) {
                    Some(on) => Sourced::file(Some(on), arg.key_span, v.span),
                    None => Sourced::unknown(None, format!("{name} is not a bool, None, an integer or a string")),
                },
                other => Sourced::unknown(None, why_of(other)),
            };
            UnslothFlag { on, argument: Some(argument_span(loader, arg)) }
        };
        let mut load = UnslothSettings {
            language_model: loader.path.iter().any(|s| s == "FastLanguageModel"),
            loader: loader.name_span,
            load_in_4bit: flag("load_in_4bit"),
            load_in_8bit: flag("load_in_8bit"),
            load_in_16bit: flag("load_in_16bit"),
            load_in_fp8: flag("load_in_fp8"),
            full_finetuning: flag("full_finetuning"),
        };
        let Some(config) = loader.arg("quantization_config") else { return load };
        let argument = Some(argument_span(loader, config));
        match self.quantization_flags(&config.value) {
            Ok((four, eight)) => {
                if let Some(four) = four {
                    load.load_in_4bit = UnslothFlag { on: four.map(Some), argument };
                    load.load_in_8bit.on =
                        Sourced::derived(Some(false), "quantization_config load_in_4bit=True turns load_in_8bit off");
                }
                if let Some(eight) = eight {
                    load.load_in_8bit = UnslothFlag { on: eight.map(Some), argument };
                    load.load_in_4bit.on =
                        Sourced::derived(Some(false), "quantization_config load_in_8bit=True turns load_in_4bit off");
                }
            }
            Err(why) => {
                for flag in [&mut load.load_in_4bit, &mut load.load_in_8bit] {
                    *flag = UnslothFlag { on: Sourced::unknown(None, why.clone()), argument };
                }
            }
        }
        load
    }

    /// The true `load_in_4bit` and `load_in_8bit` of a loader's `quantization_config`, where
    /// they are written (`getattr(config, "load_in_4bit", False)` of a `BitsAndBytesConfig`,
    /// `.get` of a dict; None when false or absent). Err: not known statically.
    fn quantization_flags(&self, value: &ArgValue) -> Result<ConfigFlags, String> {
        let read = |name: &str, written: Option<(Span, &Spanned)>| match written {
            None => Ok(None),
            Some((key, value)) => match truthy(&value.value) {
                Some(on) => Ok(on.then(|| Sourced::file(true, key, value.span))),
                None => Err(format!("quantization_config {name} is not a bool, None, an integer or a string")),
            },
        };
        match value {
            ArgValue::Call(index) => {
                let config = self
                    .script
                    .calls
                    .get(*index)
                    .filter(|c| c.callee == Callee::BitsAndBytesConfig)
                    .ok_or("quantization_config is not a BitsAndBytesConfig")?;
                let get = |name: &str| match config.arg(name) {
                    None => read(name, None),
                    Some(arg) => match &arg.value {
                        ArgValue::Known(v) => read(name, Some((arg.key_span, v))),
                        other => Err(why_of(other)),
                    },
                };
                Ok((get("load_in_4bit")?, get("load_in_8bit")?))
            }
            ArgValue::Known(v) => match &v.value {
                PyValue::Dict(entries) => {
                    let get = |name: &str| {
                        read(
                            name,
                            entries.iter().rev().find(|(k, _, _)| k == name).map(|(_, key, value)| (*key, value)),
                        )
                    };
                    Ok((get("load_in_4bit")?, get("load_in_8bit")?))
                }
                // `None` (no config) or a value without the attributes: the flags stay.
                _ => Ok((None, None)),
            },
            ArgValue::Unknown(why) => Err(why.clone()),
        }
    }

    /// `use_gradient_checkpointing` of `get_peft_model` (else `from_pretrained`), default "unsloth".
    fn unsloth_checkpointing(&self, plan: &Plan) -> Sourced<Checkpointing> {
        let written = [self.peft(), self.loader()].into_iter().flatten().find_map(|call| {
            let (arg, value) = call.known("use_gradient_checkpointing")?;
            let mode = match &value.value {
                PyValue::Str(s, _) if s == "unsloth" => Checkpointing::CpuOffload,
                PyValue::Bool(false) | PyValue::None => Checkpointing::None,
                _ => Checkpointing::Full,
            };
            Some(Sourced::file(mode, arg.key_span, value.span))
        });
        let mode = written.unwrap_or_else(|| {
            Sourced::default_of(Checkpointing::CpuOffload, "Unsloth use_gradient_checkpointing=\"unsloth\"")
        });
        let short = plan.max_seq_length.as_ref().is_some_and(|m| m.value < 512);
        if mode.value == Checkpointing::CpuOffload && short {
            return Sourced::derived(Checkpointing::Full, "Unsloth checkpoints on the GPU below 512 tokens");
        }
        mode
    }

    /// vLLM inside the process when `fast_inference=True`, budgeted against free memory.
    fn unsloth_vllm(&self) -> Option<VllmPlan> {
        let fast = self.loader_bool("fast_inference").filter(|f| f.value)?;
        let standby =
            self.script.program.env.iter().rev().find(|e| e.name == "UNSLOTH_VLLM_STANDBY").map(|e| match &e.value {
                // Derived, not a file value: a generic edit would write `true` where Unsloth reads "1".
                Static::Known(v) => {
                    let on = matches!(&v.value, PyValue::Str(s, _) if s == "1");
                    Sourced::derived(on, format!("UNSLOTH_VLLM_STANDBY={}", if on { "1" } else { "unset or not 1" }))
                }
                Static::Unknown(why) => Sourced::unknown(false, why.clone()),
            });
        Some(VllmPlan {
            mode: fast.map(|_| VllmMode::Colocate),
            gpu_memory_utilization: arg(self.loader(), "gpu_memory_utilization", as_f64).unwrap_or_else(|| {
                facts::number_as(facts::Framework::Unsloth, "gpu_memory_utilization", |v| {
                    format!("{UNSLOTH} from_pretrained gpu_memory_utilization={v}")
                })
            }),
            fraction_of_free: true,
            enable_sleep_mode: standby
                .unwrap_or_else(|| Sourced::default_of(false, "UNSLOTH_VLLM_STANDBY unset (no standby)")),
        })
    }

    /// transformers/TRL scripts: the loader's dtype, quantization and attention, and PEFT.
    fn hf(&self, plan: &mut Plan) {
        let loaded_here = self.loader().is_some();
        plan.load_dtype = Some(self.dtype().unwrap_or_else(|| {
            let why = if loaded_here {
                "from_pretrained without dtype: transformers 5 loads dtype=auto (4.x: float32)"
            } else {
                "the trainer loads a model name with dtype=auto"
            };
            Sourced::default_of(Dtype::Auto, why)
        }));
        let bnb = self.bnb();
        plan.quantization = Some(match &bnb {
            Some((four, _)) if four.value => {
                let quantization = self.call(self.roles.quantization);
                let fp4 = arg(quantization, "bnb_4bit_quant_type", as_str).is_some_and(|t| t.value == "fp4");
                let double = arg(quantization, "bnb_4bit_use_double_quant", as_bool).is_some_and(|d| d.value);
                let q = if fp4 {
                    Quantization::Fp4 { double_quant: double }
                } else {
                    Quantization::Nf4 { double_quant: double }
                };
                four.clone().map(|_| Some(q))
            }
            Some((_, eight)) if eight.value => eight.clone().map(|_| Some(Quantization::Int8)),
            // A checkpoint saved in 4-bit carries its `quantization_config`: transformers
            // loads it in 4-bit whatever the call says.
            _ if plan.model.as_ref().is_some_and(|m| pre_quantized(&m.value.name)) => Sourced::derived(
                Some(Quantization::Nf4 { double_quant: true }),
                "a pre-quantized bitsandbytes 4-bit checkpoint (its config.json carries the quantization_config)",
            ),
            _ => Sourced::default_of(None, "no quantization_config"),
        });
        let quantized = plan.quantization.as_ref().is_some_and(|q| q.value.is_some());
        let peft = self.peft();
        plan.method = Some(match peft {
            Some(p) => Sourced::file(if quantized { Method::Qlora } else { Method::Lora }, p.name_span, p.args_span),
            None => Sourced::default_of(Method::Full, "no PEFT config: every parameter trains"),
        });
        let names = vec!["q_proj".to_string(), "v_proj".to_string()];
        let peft_default = Sourced::default_of(lora_targets(&names), "PEFT default targets for Llama-style models");
        let whose = if peft.is_some_and(|p| p.callee == Callee::UnslothGetPeftModel) {
            facts::Framework::Unsloth
        } else {
            facts::Framework::Peft
        };
        plan.lora = peft.map(|p| self.lora(p, whose, peft_default));
        if let Some(attention) = self.attention() {
            plan.attention = Some(attention);
        }
        plan.tensor_parallel = self.tensor_parallel();
    }

    /// `from_pretrained(tp_plan=…)` (transformers ≥ 4.50): the model is loaded with its TP plan
    /// over `tp_size` ranks, or over every process without it (`integrations/tensor_parallel.py`
    /// `initialize_tensor_parallelism`: `tp_size if tp_size is not None else world_size`).
    /// `tp_plan=None` loads no plan.
    fn tensor_parallel(&self) -> Option<Sourced<TensorParallel>> {
        let planned = arg(self.loader(), "tp_plan", |v| (!matches!(v, PyValue::None)).then_some(()))?;
        let layout = TpLayout::Transformers;
        match arg(self.loader(), "tp_size", as_u64) {
            Some(size) => (size.value > 1).then(|| size.map(|n| TensorParallel { size: Some(n), layout })),
            None => Some(planned.map(|()| TensorParallel { size: None, layout })),
        }
    }

    /// The 4-bit and 8-bit flags of the loader's `quantization_config` (a `BitsAndBytesConfig`).
    fn bnb(&self) -> Option<(Sourced<bool>, Sourced<bool>)> {
        let quantization = self.call(self.roles.quantization)?;
        let linked = self.loader().and_then(|l| l.arg("quantization_config")).is_some();
        if !linked {
            return None;
        }
        let flag = |name: &str| {
            arg(Some(quantization), name, as_bool)
                .unwrap_or_else(|| Sourced::default_of(false, format!("BitsAndBytesConfig {name}=False")))
        };
        Some((flag("load_in_4bit"), flag("load_in_8bit")))
    }

    /// The loader's dtype, else the dtype in the config's `model_init_kwargs` (the trainer loads the model).
    fn dtype(&self) -> Option<Sourced<Dtype>> {
        let from_loader = || arg(self.loader(), "dtype", as_str).or_else(|| arg(self.loader(), "torch_dtype", as_str));
        let from_config = || {
            let (_, kwargs) = self.call(self.roles.config)?.known("model_init_kwargs")?;
            let PyValue::Dict(entries) = &kwargs.value else { return None };
            entries
                .iter()
                .rev()
                .find(|(k, _, _)| k == "dtype" || k == "torch_dtype")
                .and_then(|(_, key, value)| Some(Sourced::file(as_str(&value.value)?, *key, value.span)))
        };
        let written = from_loader().or_else(from_config)?;
        let value = dtype_of(&written.value).unwrap_or(Dtype::Auto);
        Some(Sourced { value, origin: written.origin })
    }

    fn attention(&self) -> Option<Sourced<crate::plan::Attention>> {
        let written = arg(self.loader(), "attn_implementation", as_str)?;
        Some(Sourced { value: attention_kind(&written.value)?, origin: written.origin })
    }

    /// The adapter `call` configures; what it leaves out is `whose` default (PEFT's or Unsloth's).
    fn lora(&self, call: &Call, whose: facts::Framework, targets: Sourced<crate::plan::LoraTargets>) -> LoraPlan {
        let (rank, alpha) = (facts::count(whose, "r"), facts::number(whose, "lora_alpha"));
        let default = |what: &str| {
            format!("{} {what}", if call.callee == Callee::LoraConfig { "PEFT LoraConfig" } else { UNSLOTH })
        };
        let call = Some(call);
        LoraPlan {
            rank: arg(call, "r", as_u64).unwrap_or_else(|| Sourced::default_of(rank, default("r"))),
            alpha: arg(call, "lora_alpha", as_f64).unwrap_or_else(|| Sourced::default_of(alpha, default("lora_alpha"))),
            dropout: arg(call, "lora_dropout", as_f64)
                .unwrap_or_else(|| Sourced::default_of(facts::number(whose, "lora_dropout"), default("lora_dropout"))),
            targets: arg(call, "target_modules", as_strings).map(|s| s.map(|n| lora_targets(&n))).unwrap_or(targets),
        }
    }

    /// Replaces defaults with `unknown` where the script sets the value at run time.
    fn mark_unknown(&self, plan: &mut Plan) {
        let unknown = |call: Option<&Call>, name: &str| match &call?.arg(name)?.value {
            ArgValue::Known(_) => None,
            other => Some(why_of(other)),
        };
        let config = self.call(self.roles.config);
        let mark = |field: &mut Option<Sourced<u64>>, why: Option<String>| {
            if let Some(why) = why {
                let value = field.as_ref().map_or(0, |f| f.value);
                *field = Some(Sourced::unknown(value, why));
            }
        };
        mark(&mut plan.micro_batch_size, unknown(config, "per_device_train_batch_size"));
        mark(&mut plan.gradient_accumulation, unknown(config, "gradient_accumulation_steps"));
        let length = unknown(config, "max_length").or_else(|| unknown(config, "max_seq_length"));
        let length = length.or_else(|| {
            (plan.framework == Framework::Unsloth && format_is_sft(plan))
                .then(|| unknown(self.loader(), "max_seq_length"))
                .flatten()
        });
        mark(&mut plan.max_seq_length, length);
        if let Some(rl) = plan.rl.as_mut() {
            if let Some(why) = unknown(config, "num_generations") {
                rl.num_generations = Sourced::unknown(rl.num_generations.value, why);
            }
            if let Some(why) = unknown(config, "max_completion_length") {
                rl.max_completion_length = Sourced::unknown(rl.max_completion_length.value, why);
            }
            if let (Some(vllm), Some(why)) = (rl.vllm.as_mut(), unknown(self.loader(), "gpu_memory_utilization")) {
                vllm.gpu_memory_utilization = Sourced::unknown(vllm.gpu_memory_utilization.value, why);
            }
        }
        if let (Some(lora), Some(why)) = (plan.lora.as_mut(), unknown(self.peft(), "r")) {
            lora.rank = Sourced::unknown(lora.rank.value, why);
        }
        if let (Some(lora), Some(_)) =
            (plan.lora.as_mut(), self.peft().filter(|p| p.callee == Callee::PeftFromPretrained))
        {
            lora.rank = Sourced::unknown(lora.rank.value, "the saved adapter's rank is in its adapter_config.json");
        }
    }
}

/// The cross-entropy Unsloth runs for a causal LM, by release (`unsloth/models/llama.py`
/// `CausalLM_fast_forward`, the compiled forwards of `unsloth_zoo/compiler.py`):
///
/// * before 2025.8.5: `fast_cross_entropy_loss` over the whole logits (`FastLanguageModel`),
///   cut cross-entropy in the compiled forwards (`FastModel`);
/// * 2025.8.5 to 2025.9.0: `unsloth_fused_ce_loss(target_gb=1)`;
/// * 2025.9.1 on: `target_gb=None`, half the free memory at the first call, chunks counted
///   by `round(n) * 4`; from 2026.7.1 (unsloth-zoo 2026.7.1, "Cap the fused cross entropy
///   chunk target") at most 4 GiB, counted up.
///
/// With no pin, the newest release.
pub(crate) fn unsloth_cross_entropy(versions: &Versions, language_model: bool) -> Sourced<LossImpl> {
    use crate::plan::CeChunkTarget;
    let at_least = |parts: &[u64]| versions.at_least("unsloth", &Version::release(parts));
    let gib = |key: &str| (facts::number(facts::Framework::Unsloth, key) * 1024.0) as u64;
    let percent = (facts::number(facts::Framework::Unsloth, "fused_ce_free_share") * 100.0) as u64;
    let (loss, what) = if !at_least(&[2025, 8, 5]) && language_model {
        (
            LossImpl::UnslothLogits,
            "Unsloth's fast_cross_entropy_loss over the whole logits (before 2025.8.5)".to_string(),
        )
    } else if !at_least(&[2025, 8, 5]) {
        // `unsloth_zoo/compiler.py` `cross_entropy_replacement_*`: the compiled forwards of
        // FastModel call cut cross-entropy (`loss_utils.fused_linear_cross_entropy`) while the head is frozen.
        (LossImpl::Liger, "Unsloth's compiled forward with cut cross-entropy (before 2025.8.5)".to_string())
    } else if !at_least(&[2025, 9, 1]) {
        let mib = gib("fused_ce_target_gb");
        (
            LossImpl::UnslothFused(CeChunkTarget::Fixed { mib }),
            format!("Unsloth's fused cross-entropy in chunks of {mib} MiB of fp32 logits (2025.8.5 to 2025.9.0)"),
        )
    } else if !at_least(&[2026, 7, 1]) {
        let target = CeChunkTarget::ShareOfFree { percent, cap_mib: None, round_up: false };
        (LossImpl::UnslothFused(target), format!("Unsloth's fused cross-entropy in chunks sized to {percent} % of the free GPU memory (2025.9.1 to 2026.6)"))
    } else {
        let cap_mib = gib("fused_ce_target_cap_gb");
        let target = CeChunkTarget::ShareOfFree { percent, cap_mib: Some(cap_mib), round_up: true };
        (LossImpl::UnslothFused(target), format!("Unsloth's fused cross-entropy in chunks sized to {percent} % of the free GPU memory, at most {cap_mib} MiB (2026.7.1 on)"))
    };
    match versions.get("unsloth") {
        Some(pin) => Sourced::derived(loss, format!("{what}; {}", pin.describe())),
        None => Sourced::default_of(loss, what),
    }
}

/// Re-derives Unsloth's default cross-entropy for the release the run uses and the model
/// `arch` it trains.
pub(crate) fn unsloth_loss(plan: &mut Plan, versions: &Versions, arch: Option<&Architecture>) {
    let unsloth_default = plan.framework == Framework::Unsloth
        && plan.loss.as_ref().is_some_and(|l| matches!(l.value, LossImpl::UnslothFused(_)) && !l.is_from_file());
    if !unsloth_default || versions.get("unsloth").is_none() {
        return;
    }
    let language_model = plan.unsloth.as_ref().is_some_and(|u| u.language_model);
    let loss = unsloth_cross_entropy(versions, language_model);
    plan.loss = Some(match whole_logits_chunks(versions, arch) {
        Some(chunks) if loss.value == LossImpl::Liger => Sourced::derived(
            LossImpl::UnslothWholeLogits { chunks },
            format!(
                "unsloth-zoo's compiled cross-entropy over Gemma 3's whole logits in {chunks} fp32 chunks (its \
                 multimodal class takes them from its language model before transformers 4.52; fused from \
                 unsloth 2025.7.2)"
            ),
        ),
        _ => loss,
    });
}

/// The chunks of unsloth-zoo's compiled cross-entropy (`compiler.py` `cross_entropy_find_3`)
/// where it runs over whole logits: Gemma 3's multimodal checkpoints, whose
/// `Gemma3ForConditionalGeneration` holds its `lm_head` inside `language_model` and takes
/// `outputs.logits` before transformers 4.52 (the checkpoints' `language_model.lm_head`, which
/// 4.52 renamed `lm_head`), under Unsloth before 2025.7.2 (unsloth-zoo 2025.7.2 fused it:
/// `unsloth_fused_ce_loss`). Four chunks before 2025.6.6 (`cross_entropy_replacement_3`); from
/// unsloth-zoo 2025.6.5 `loss_utils.py` `compiled_ce_loss_function`: `⌈V / 262144 × 8⌉`, 2 more
/// where the head is trainable or fp32, as under Unsloth's forced float32.
fn whole_logits_chunks(versions: &Versions, arch: Option<&Architecture>) -> Option<u64> {
    let arch = arch.filter(|a| a.family.eq_ignore_ascii_case("gemma-3") && a.tower_parameters > 0)?;
    let before = |name: &str, parts: &[u64]| !versions.at_least(name, &Version::release(parts));
    if !before("unsloth", &[2025, 7, 2]) || !before("transformers", &[4, 52]) || versions.get("transformers").is_none()
    {
        return None;
    }
    if before("unsloth", &[2025, 6, 6]) {
        return Some(4);
    }
    Some(arch.padded_vocab_size.max(arch.vocab_size).saturating_mul(8).div_ceil(262_144) + 2)
}

/// Unsloth's patched `GRPOConfig` replaces `per_device_train_batch_size` with
/// `num_generations`, with a printed notice, when the generation batch would not hold whole
/// prompt groups, so TRL's divisibility check never sees the original value. The condition
/// depends on the releases (`unsloth/models/rl.py`, the `check_num_generations` text):
///
/// * Unsloth 2025.11.4 and newer with TRL 0.18 and newer: when `steps_per_generation` and
///   `generation_batch_size` are unset and `per_device × gradient_accumulation_steps ×
///   WORLD_SIZE` is not a multiple of `num_generations` (`WORLD_SIZE` is 1 under plain
///   `python` or a notebook, as Unsloth reads it when the config is built);
/// * Unsloth 2025.5.8 and newer otherwise: when `per_device` alone is not a multiple;
/// * Unsloth 2025.2.10 to 2025.5.7, with TRL 0.15 to 0.17 only: the same per-device test.
///
/// With no pin, the newest releases are assumed.
pub(crate) fn unsloth_grpo_batch(plan: &mut Plan, versions: &Versions) {
    let grpo = plan.algorithm.as_ref().is_some_and(|a| a.value == RlAlgorithm::Grpo);
    if plan.framework != Framework::Unsloth || !grpo {
        return;
    }
    let (Some(rl), Some(per_device), Some(accumulation)) =
        (&plan.rl, &plan.micro_batch_size, &plan.gradient_accumulation)
    else {
        return;
    };
    let n = rl.num_generations.value;
    if n == 0 {
        return;
    }
    let unsloth = |parts: &[u64]| versions.at_least("unsloth", &Version::release(parts));
    let trl = |parts: &[u64]| versions.at_least("trl", &Version::release(parts));
    let whole_batch = unsloth(&[2025, 11, 4]) && trl(&[0, 18]);
    let per_device_only = unsloth(&[2025, 5, 8]) || (unsloth(&[2025, 2, 10]) && trl(&[0, 15]) && !trl(&[0, 18]));
    let replaced = if whole_batch {
        let unset = rl.steps_per_generation.is_none() && rl.generation_batch_size.is_none();
        unset && (per_device.value * accumulation.value.max(1)) % n != 0
    } else {
        per_device_only && per_device.value % n != 0
    };
    if replaced {
        let before = per_device.value;
        plan.micro_batch_size = Some(Sourced::derived(
            n,
            format!("Unsloth replaces per_device_train_batch_size {before} with num_generations {n} (\"We will change the batch size of {before} to the `num_generations` of {n}\")"),
        ));
    }
}

/// The plan inputs the script computes at run time, one sentence each, for the estimate's
/// missing inputs (the estimate used the value shown: the framework default or a bound).
pub(crate) fn unknown_inputs(plan: &Plan) -> Vec<String> {
    fn note<T: std::fmt::Debug>(out: &mut Vec<String>, what: &str, field: Option<&Sourced<T>>) {
        if let Some(Sourced { value, origin: Origin::Unknown { why } }) = field {
            out.push(format!("{what} not known statically ({why}); assumed {value:?}"));
        }
    }
    let mut out = Vec::new();
    note(&mut out, "micro batch size", plan.micro_batch_size.as_ref());
    note(&mut out, "gradient accumulation", plan.gradient_accumulation.as_ref());
    note(&mut out, "sequence length", plan.max_seq_length.as_ref());
    note(&mut out, "quantization", plan.quantization.as_ref());
    note(&mut out, "load dtype", plan.load_dtype.as_ref());
    note(&mut out, "LoRA rank", plan.lora.as_ref().map(|l| &l.rank));
    if let Some(rl) = &plan.rl {
        note(&mut out, "generations per prompt", Some(&rl.num_generations));
        note(&mut out, "completion length", Some(&rl.max_completion_length));
        note(&mut out, "vLLM memory fraction", rl.vllm.as_ref().map(|v| &v.gpu_memory_utilization));
    }
    out
}

/// A statically known argument of `call`, converted, with its spans.
fn arg<T>(call: Option<&Call>, name: &str, convert: impl Fn(&PyValue) -> Option<T>) -> Option<Sourced<T>> {
    let (arg, value) = call?.known(name)?;
    Some(Sourced::file(convert(&value.value)?, arg.key_span, value.span))
}

fn as_bool(v: &PyValue) -> Option<bool> {
    match v {
        PyValue::Bool(b) => Some(*b),
        PyValue::None => Some(false),
        _ => None,
    }
}

/// The true `load_in_4bit` and `load_in_8bit` of a `quantization_config`, where written.
type ConfigFlags = (Option<Sourced<bool>>, Option<Sourced<bool>>);

/// Python's truthiness of a flag's value; None for values a flag does not take.
fn truthy(v: &PyValue) -> Option<bool> {
    match v {
        PyValue::Bool(b) => Some(*b),
        PyValue::None => Some(false),
        PyValue::Int(i) => Some(*i != 0),
        PyValue::Str(s, _) => Some(!s.is_empty()),
        _ => None,
    }
}

/// The keyword with its value when the value is written in the call, else the keyword.
fn argument_span(call: &Call, arg: &Arg) -> Span {
    match &arg.value {
        ArgValue::Known(v) if v.span.start >= arg.key_span.end && v.span.end <= call.args_span.end => {
            arg.key_span.cover(v.span)
        }
        _ => arg.key_span,
    }
}

/// Unsloth `from_pretrained`'s defaults: `load_in_4bit=True`, every other flag off.
fn unsloth_flag_default(name: &str) -> bool {
    name == "load_in_4bit"
}

fn unsloth_flag_note(name: &str) -> String {
    if name == "load_in_fp8" {
        format!("{UNSLOTH} from_pretrained load_in_fp8=False")
    } else {
        format!("{UNSLOTH} from_pretrained {name}={}", unsloth_flag_default(name))
    }
}

fn as_u64(v: &PyValue) -> Option<u64> {
    match v {
        PyValue::Int(i) => u64::try_from(*i).ok(),
        PyValue::Float(f) if f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15 => Some(*f as u64),
        _ => None,
    }
}

fn as_f64(v: &PyValue) -> Option<f64> {
    match v {
        PyValue::Int(i) => Some(*i as f64),
        PyValue::Float(f) => Some(*f),
        _ => None,
    }
}

fn as_str(v: &PyValue) -> Option<String> {
    match v {
        PyValue::Str(s, _) => Some(s.clone()),
        _ => None,
    }
}

/// One module name or a list of them.
fn as_strings(v: &PyValue) -> Option<Vec<String>> {
    match v {
        PyValue::Str(s, _) => Some(vec![s.clone()]),
        PyValue::List(items) => items.iter().map(|i| as_str(&i.value)).collect(),
        _ => None,
    }
}

fn why_of(value: &ArgValue) -> String {
    match value {
        ArgValue::Unknown(why) => why.clone(),
        ArgValue::Call(_) => "the result of another call".into(),
        ArgValue::Known(_) => String::new(),
    }
}

/// A string argument of a call of the program, by keyword or position: the argument, its
/// value and the string.
fn known_str<'c>(
    call: &'c python::Call,
    keyword: &str,
    position: Option<usize>,
) -> Option<(&'c python::Arg, &'c Spanned, String)> {
    call.args.iter().rev().find_map(|a| {
        let named = a.keyword.as_deref() == Some(keyword) || (a.keyword.is_none() && Some(a.position) == position);
        match (&a.value, named) {
            (Static::Known(v @ Spanned { value: PyValue::Str(s, _), .. }), true) => Some((a, v, s.clone())),
            _ => None,
        }
    })
}

/// A bitsandbytes 4-bit checkpoint by its name (`…-bnb-4bit`, `…-unsloth-bnb-4bit`).
fn pre_quantized(name: &str) -> bool {
    name.to_ascii_lowercase().trim_end_matches('/').ends_with("-bnb-4bit")
}

fn format_is_sft(plan: &Plan) -> bool {
    plan.command.as_deref() == Some("sft")
}

/// Unsloth's default `target_modules`: every attention and MLP projection.
fn unsloth_targets() -> Sourced<crate::plan::LoraTargets> {
    let names: Vec<String> =
        ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"].map(String::from).into();
    Sourced::default_of(lora_targets(&names), "Unsloth get_peft_model target_modules (all projections)")
}

#[cfg(test)]
mod tests;
