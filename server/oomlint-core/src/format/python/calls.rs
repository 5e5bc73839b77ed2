//! The calls of a Python program that configure a training run: Unsloth's loaders and
//! `get_peft_model`, `transformers`' `TrainingArguments`, `AutoModelFor…` loaders,
//! `BitsAndBytesConfig` and `Trainer`, TRL's config classes and trainers, PEFT's
//! `LoraConfig` and `get_peft_model`. They are recognized by the last segments of their
//! dotted callee (import aliases already resolved by the syntax layer), so
//! `trl.SFTConfig`, `SFTConfig` and `C` after `from trl import SFTConfig as C` are one.

use crate::span::Span;
use crate::syntax::python::{self, Program, Spanned, Static};
use crate::HashMap;

/// A call oomlint understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callee {
    /// `FastLanguageModel.from_pretrained`, `FastModel.from_pretrained`, `FastVisionModel.from_pretrained`.
    UnslothFromPretrained,
    /// `FastLanguageModel.get_peft_model` / `FastModel.get_peft_model`.
    UnslothGetPeftModel,
    /// `AutoModelForCausalLM.from_pretrained` (and `AutoModel`, the other `AutoModelFor…`
    /// classes and model classes such as `Qwen2VLForConditionalGeneration`).
    HfFromPretrained,
    /// `FastSentenceTransformer.from_pretrained` and `SentenceTransformer(name)`: an
    /// embedding model, which oomlint does not estimate.
    SentenceTransformer,
    /// `PeftModel.from_pretrained(model, adapter)`: a saved adapter on the base model.
    PeftFromPretrained,
    TrainingArguments,
    SftConfig,
    GrpoConfig,
    DpoConfig,
    /// `ORPOConfig`, `KTOConfig`, `CPOConfig` and `RewardConfig`, with the trainer they configure.
    PreferenceConfig(Preference),
    LoraConfig,
    /// `peft.get_peft_model(model, config)`.
    GetPeftModel,
    BitsAndBytesConfig,
    SftTrainer,
    GrpoTrainer,
    DpoTrainer,
    /// `ORPOTrainer`, `KTOTrainer`, `CPOTrainer` and `RewardTrainer`.
    PreferenceTrainer(Preference),
    Trainer,
}

/// TRL's preference trainers beyond DPO (each with its config class).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preference {
    Orpo,
    Kto,
    /// CPO, and SimPO (`CPOConfig(loss_type="simpo")`).
    Cpo,
    Reward,
}

impl Preference {
    fn of(prefix: &str) -> Option<Preference> {
        Some(match prefix {
            "ORPO" => Preference::Orpo,
            "KTO" => Preference::Kto,
            "CPO" => Preference::Cpo,
            "Reward" => Preference::Reward,
            _ => return None,
        })
    }
}

impl Callee {
    /// Recognizes a dotted callee path (after alias resolution) by its last segments.
    pub fn from_path(path: &[String]) -> Option<Callee> {
        let last = path.last()?.as_str();
        let owner = path.len().checked_sub(2).and_then(|i| path.get(i)).map(String::as_str);
        Some(match (owner, last) {
            (Some("FastLanguageModel" | "FastModel" | "FastVisionModel"), "from_pretrained") => {
                Callee::UnslothFromPretrained
            }
            (
                Some("FastLanguageModel" | "FastModel" | "FastVisionModel" | "FastSentenceTransformer"),
                "get_peft_model",
            ) => Callee::UnslothGetPeftModel,
            (Some("FastSentenceTransformer"), "from_pretrained") | (_, "SentenceTransformer") => {
                Callee::SentenceTransformer
            }
            (Some("PeftModel"), "from_pretrained") => Callee::PeftFromPretrained,
            (Some(class), "from_pretrained") if is_model_class(class) => Callee::HfFromPretrained,
            (_, "TrainingArguments") => Callee::TrainingArguments,
            // Unsloth's subclasses of TRL's (`unsloth/trainer.py`: `UnslothTrainingArguments(SFTConfig)`
            // when TRL is installed, `UnslothTrainer(SFTTrainer)`), adding only an embedding learning rate.
            (_, "SFTConfig" | "UnslothTrainingArguments") => Callee::SftConfig,
            (_, "GRPOConfig") => Callee::GrpoConfig,
            (_, "DPOConfig") => Callee::DpoConfig,
            (_, name) if name.strip_suffix("Config").and_then(Preference::of).is_some() => {
                Callee::PreferenceConfig(name.strip_suffix("Config").and_then(Preference::of)?)
            }
            (_, name) if name.strip_suffix("Trainer").and_then(Preference::of).is_some() => {
                Callee::PreferenceTrainer(name.strip_suffix("Trainer").and_then(Preference::of)?)
            }
            (_, "LoraConfig") => Callee::LoraConfig,
            (None, "get_peft_model") | (Some("peft"), "get_peft_model") => Callee::GetPeftModel,
            (_, "BitsAndBytesConfig") => Callee::BitsAndBytesConfig,
            (_, "SFTTrainer" | "UnslothTrainer") => Callee::SftTrainer,
            (_, "GRPOTrainer") => Callee::GrpoTrainer,
            (_, "DPOTrainer") => Callee::DpoTrainer,
            (_, "Trainer") => Callee::Trainer,
            _ => return None,
        })
    }

    fn is_config(self) -> bool {
        matches!(
            self,
            Callee::TrainingArguments
                | Callee::SftConfig
                | Callee::GrpoConfig
                | Callee::DpoConfig
                | Callee::PreferenceConfig(_)
        )
    }

    fn is_trainer(self) -> bool {
        matches!(
            self,
            Callee::SftTrainer
                | Callee::GrpoTrainer
                | Callee::DpoTrainer
                | Callee::PreferenceTrainer(_)
                | Callee::Trainer
        )
    }

    pub(crate) fn is_loader(self) -> bool {
        matches!(self, Callee::UnslothFromPretrained | Callee::HfFromPretrained | Callee::SentenceTransformer)
    }

    /// A call that wraps the model given as its `model` argument in an adapter.
    fn is_adapter(self) -> bool {
        matches!(self, Callee::UnslothGetPeftModel | Callee::GetPeftModel | Callee::PeftFromPretrained)
    }

    /// The parameter names of the leading positional arguments oomlint reads.
    fn positional(self) -> &'static [&'static str] {
        match self {
            Callee::UnslothFromPretrained => &["model_name"],
            Callee::HfFromPretrained => &["pretrained_model_name_or_path"],
            Callee::SentenceTransformer => &["model_name_or_path"],
            Callee::PeftFromPretrained => &["model", "model_id"],
            Callee::UnslothGetPeftModel => &["model"],
            Callee::GetPeftModel => &["model", "peft_config"],
            Callee::Trainer => &["model", "args"],
            Callee::SftTrainer | Callee::GrpoTrainer | Callee::DpoTrainer | Callee::PreferenceTrainer(_) => &["model"],
            _ => &[],
        }
    }
}

/// A transformers class whose `from_pretrained` loads a model: `AutoModel`, an
/// `AutoModelFor…` class, or a model class (`LlamaForCausalLM`,
/// `WhisperForConditionalGeneration`); not `AutoPeftModel…`, which loads an adapter by name.
fn is_model_class(class: &str) -> bool {
    class.starts_with("AutoModel")
        || (class.contains("For")
            && !class.starts_with("AutoPeft")
            && class.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// The value of one argument.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ArgValue {
    Known(Spanned),
    /// The result of another recognized call (an index into [`Script::calls`]).
    Call(usize),
    /// Not known without running the script; the reason.
    Unknown(String),
}

/// One argument of a recognized call.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    /// The parameter name: the keyword, or the name of a known positional parameter.
    pub name: String,
    /// The keyword's span (the whole argument for positional ones).
    pub key_span: Span,
    pub(crate) value: ArgValue,
    /// The variable the argument is, when it is one (`auto_model = WhisperForConditionalGeneration`).
    pub(crate) variable: Option<String>,
}

/// A recognized call with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub callee: Callee,
    /// The callee's dotted path, import aliases resolved (`["unsloth", "FastModel", "from_pretrained"]`).
    pub(crate) path: Vec<String>,
    /// The callee expression (`FastLanguageModel.from_pretrained`).
    pub(crate) name_span: Span,
    /// The parenthesized argument list.
    pub(crate) args_span: Span,
    pub args: Vec<Arg>,
    /// `**kwargs` or `*args` hide arguments oomlint cannot see.
    pub(crate) has_splat: bool,
    /// The call lies in a branch that never runs (`if False:`).
    pub(crate) dead: bool,
}

impl Call {
    pub(crate) fn arg(&self, name: &str) -> Option<&Arg> {
        self.args.iter().rev().find(|a| a.name == name)
    }

    /// A statically known argument.
    pub(crate) fn known(&self, name: &str) -> Option<(&Arg, &Spanned)> {
        let arg = self.arg(name)?;
        match &arg.value {
            ArgValue::Known(v) => Some((arg, v)),
            _ => None,
        }
    }
}

/// A program's recognized calls, in document order, with the program they come from.
#[derive(Debug, Clone)]
pub struct Script<'p> {
    pub(crate) program: &'p Program,
    pub calls: Vec<Call>,
}

/// Where the trainer's model comes from.
#[derive(Debug, Clone, Copy)]
enum Flow {
    /// A loader, through the outermost adapter call on the way (indices into [`Script::calls`]).
    Loader { loader: usize, adapter: Option<usize> },
    /// A model name the trainer loads itself.
    Named,
    /// Not followed (no trainer, or a model the program builds some other way).
    Unknown,
}

/// Which recognized calls make up the run.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Roles {
    pub(crate) trainer: Option<usize>,
    pub(crate) config: Option<usize>,
    pub(crate) loader: Option<usize>,
    pub(crate) peft: Option<usize>,
    pub(crate) quantization: Option<usize>,
}

impl<'p> Script<'p> {
    /// Recognizes `program`'s calls. An argument that is a recognized call, or a variable
    /// bound to one before it, is that call ([`ArgValue::Call`]).
    pub(crate) fn of(program: &'p Program) -> Script<'p> {
        let recognized: Vec<(usize, Callee)> =
            program.calls.iter().enumerate().filter_map(|(i, c)| Some((i, Callee::from_path(&c.path)?))).collect();
        let index: HashMap<usize, usize> = recognized.iter().enumerate().map(|(r, &(i, _))| (i, r)).collect();
        let calls = recognized
            .iter()
            .map(|&(i, callee)| {
                let call = &program.calls[i];
                let value = |arg: &python::Arg| {
                    if let Some(&r) = arg.call.and_then(|c| index.get(&c)) {
                        return ArgValue::Call(r);
                    }
                    let bound = arg
                        .name
                        .as_deref()
                        .and_then(|name| program.bound_call(name, arg.span.start, |c| index.contains_key(&c)));
                    if let Some(r) = bound.and_then(|c| index.get(&c)) {
                        return ArgValue::Call(*r);
                    }
                    match &arg.value {
                        Static::Known(v) => ArgValue::Known(v.clone()),
                        Static::Unknown(why) => ArgValue::Unknown(why.clone()),
                    }
                };
                let args = call
                    .args
                    .iter()
                    .filter_map(|arg| {
                        let name = match &arg.keyword {
                            Some(keyword) => keyword.clone(),
                            None => callee.positional().get(arg.position)?.to_string(),
                        };
                        Some(Arg { name, key_span: arg.key_span, value: value(arg), variable: arg.name.clone() })
                    })
                    .collect();
                Call {
                    callee,
                    path: call.path.clone(),
                    name_span: call.name_span,
                    args_span: call.args_span,
                    args,
                    has_splat: call.has_splat,
                    dead: call.dead,
                }
            })
            .collect();
        Script { program, calls }
    }

    /// Connects trainer, config, loader, PEFT and quantization config: through the
    /// trainer's arguments where it names them (its `model` followed back through
    /// `get_peft_model` and `PeftModel.from_pretrained` to the loader), else the last call
    /// of each kind (a loader: the last before the trainer).
    pub(crate) fn roles(&self) -> Roles {
        // A call in a branch that never runs (a notebook's `if False:` reload of the saved
        // adapter) takes a role only when no live call can.
        let last = |pred: &dyn Fn(Callee) -> bool| {
            (self.calls.iter().rposition(|c| !c.dead && pred(c.callee)))
                .or_else(|| self.calls.iter().rposition(|c| pred(c.callee)))
        };
        let linked = |from: Option<usize>, arg: &str, pred: &dyn Fn(Callee) -> bool| {
            let call = self.calls.get(from?)?;
            match call.arg(arg)?.value {
                ArgValue::Call(i) if self.calls.get(i).is_some_and(|c| pred(c.callee)) => Some(i),
                _ => None,
            }
        };
        let trainer = last(&|c| c.is_trainer());
        let config = linked(trainer, "args", &|c| c.is_config()).or_else(|| last(&|c| c.is_config()));
        let flow = self.model_flow(trainer);
        let before_trainer = |pred: &dyn Fn(Callee) -> bool| {
            let at = self.call(trainer)?.name_span.start;
            self.calls.iter().rposition(|c| !c.dead && pred(c.callee) && c.name_span.start < at)
        };
        let loader = match flow {
            Flow::Loader { loader, .. } => Some(loader),
            // The trainer loads the model it is given by name.
            Flow::Named => None,
            Flow::Unknown => {
                let unsloth = |c: Callee| c == Callee::UnslothFromPretrained;
                before_trainer(&unsloth)
                    .or_else(|| before_trainer(&|c| c.is_loader()))
                    .or_else(|| last(&unsloth))
                    .or_else(|| last(&|c| c.is_loader()))
            }
        };
        let is_lora = |c: Callee| c == Callee::LoraConfig;
        let adapter = match flow {
            Flow::Loader { adapter: Some(a), .. } => match self.calls[a].callee {
                Callee::GetPeftModel => linked(Some(a), "peft_config", &is_lora).or(Some(a)),
                _ => Some(a),
            },
            _ => None,
        };
        let peft = linked(trainer, "peft_config", &is_lora)
            .or(adapter.filter(|&a| self.calls[a].callee != Callee::GetPeftModel))
            .or_else(|| last(&|c| c == Callee::UnslothGetPeftModel))
            .or_else(|| {
                let get = last(&|c| c == Callee::GetPeftModel);
                linked(get, "peft_config", &is_lora)
            })
            .or_else(|| last(&is_lora))
            .or_else(|| last(&|c| c == Callee::PeftFromPretrained));
        let is_bnb = |c: Callee| c == Callee::BitsAndBytesConfig;
        let quantization = linked(loader, "quantization_config", &is_bnb).or_else(|| last(&is_bnb));
        Roles { trainer, config, loader, peft, quantization }
    }

    /// Where the model given to the trainer comes from: followed back from its `model`
    /// argument through the calls that wrap a model in an adapter to the loader.
    fn model_flow(&self, trainer: Option<usize>) -> Flow {
        let Some(mut at) = self.call(trainer) else { return Flow::Unknown };
        let mut adapter = None;
        for _ in 0..8 {
            match at.arg("model").map(|a| &a.value) {
                Some(ArgValue::Known(v)) if matches!(v.value, python::PyValue::Str(..)) => return Flow::Named,
                Some(&ArgValue::Call(i)) => {
                    let Some(call) = self.calls.get(i) else { break };
                    if call.callee.is_loader() {
                        return Flow::Loader { loader: i, adapter };
                    }
                    if !call.callee.is_adapter() {
                        break;
                    }
                    adapter = adapter.or(Some(i));
                    at = call;
                }
                _ => break,
            }
        }
        Flow::Unknown
    }

    /// The recognized call at `index` (of [`Script::calls`]).
    pub(crate) fn call(&self, index: Option<usize>) -> Option<&Call> {
        index.and_then(|i| self.calls.get(i))
    }
}
