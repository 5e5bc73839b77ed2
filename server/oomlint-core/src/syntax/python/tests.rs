use super::*;

fn slice(text: &str, span: Span) -> &str {
    &text[span.start..span.end]
}

fn call<'p>(program: &'p Program, last: &str) -> &'p Call {
    program.calls.iter().find(|c| c.path.last().is_some_and(|l| l == last)).expect("the call")
}

fn keyword<'c>(call: &'c Call, name: &str) -> &'c Arg {
    call.args.iter().rev().find(|a| a.keyword.as_deref() == Some(name)).expect("the argument")
}

fn known<'c>(call: &'c Call, name: &str) -> &'c Spanned {
    match &keyword(call, name).value {
        Static::Known(v) => v,
        Static::Unknown(why) => panic!("{name}: {why}"),
    }
}

#[test]
fn keyword_arguments_resolve_to_the_defining_literal() {
    let text = "from trl import GRPOConfig as C\nMAX_SEQ = 1024\nMAX_PROMPT = 256\nargs = C(max_completion_length=MAX_SEQ - MAX_PROMPT, num_generations=4, learning_rate=5e-6, report_to=\"none\")\n";
    let program = program(text);
    let config = call(&program, "GRPOConfig");
    assert_eq!(config.path, ["trl", "GRPOConfig"]);
    assert_eq!(slice(text, config.name_span), "C");
    assert_eq!(known(config, "max_completion_length").value, PyValue::Int(768));
    assert_eq!(slice(text, keyword(config, "max_completion_length").key_span), "max_completion_length");
    assert_eq!(slice(text, known(config, "num_generations").span), "4");
    assert_eq!(known(config, "report_to").value, PyValue::Str("none".into(), false));
    assert_eq!(slice(text, known(config, "report_to").span), "\"none\"");
    assert_eq!(known(config, "learning_rate").value, PyValue::Float(5e-6));
    assert_eq!(program.bindings, [Binding { name: "args".into(), call: 0 }]);
    assert_eq!(program.modules, ["trl"]);
    assert_eq!(program.resolve(vec!["C".into(), "x".into()]), ["trl", "GRPOConfig", "x"]);
}

#[test]
fn a_name_edits_its_constant() {
    let text = "LORA_RANK = 32\nfrom unsloth import FastLanguageModel\nmodel = FastLanguageModel.get_peft_model(model, r = LORA_RANK, lora_alpha = LORA_RANK * 2)\n";
    let program = program(text);
    let peft = call(&program, "get_peft_model");
    assert_eq!(peft.path, ["unsloth", "FastLanguageModel", "get_peft_model"]);
    let rank = keyword(peft, "r");
    assert_eq!(slice(text, rank.key_span), "r");
    assert_eq!(slice(text, rank.span), "LORA_RANK");
    assert_eq!(rank.name.as_deref(), Some("LORA_RANK"));
    assert_eq!(slice(text, known(peft, "r").span), "32");
    assert_eq!(known(peft, "r").span.start, 12);
    assert_eq!(known(peft, "lora_alpha").value, PyValue::Int(64));
    // The positional `model` is an argument too, before the keywords.
    let first = &peft.args[0];
    assert_eq!((first.keyword.as_deref(), first.position, slice(text, first.key_span)), (None, 0, "model"));
    assert_eq!(keyword(peft, "r").position, 1);
}

#[test]
fn dynamic_values_are_unknown_with_a_reason() {
    let text = "import sys\nBATCH = 4\nBATCH = 8\nSTEPS = int(sys.argv[1])\nfor LR in [1, 2]:\n    pass\nfrom transformers import TrainingArguments\ndef main(rank):\n    TrainingArguments(per_device_train_batch_size=BATCH, max_steps=STEPS, learning_rate=LR, gradient_accumulation_steps=rank, output_dir=f\"out/{rank}\", **extra)\n";
    let program = program(text);
    let call = call(&program, "TrainingArguments");
    assert!(call.has_splat);
    let why = |name: &str| match &keyword(call, name).value {
        Static::Unknown(why) => why.clone(),
        other => panic!("{name} resolved to {other:?}"),
    };
    assert!(why("per_device_train_batch_size").contains("bound more than once"));
    assert!(why("max_steps").contains("computed at run time"));
    assert!(why("learning_rate").contains("loop variable"));
    assert!(why("gradient_accumulation_steps").contains("local variable"));
    assert!(why("output_dir").contains("f-string"));
}

#[test]
fn calls_bindings_and_environment_settings() {
    let text = r#"
import os
import transformers as tf
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
bnb = tf.BitsAndBytesConfig(load_in_4bit=True)
model, tok = tf.AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", quantization_config=bnb)
print(model, inner(1), sep="")
"#;
    let program = program(text);
    let paths: Vec<String> = program.calls.iter().map(|c| c.path.join(".")).collect();
    assert_eq!(
        paths,
        [
            "os.environ.setdefault",
            "transformers.BitsAndBytesConfig",
            "transformers.AutoModelForCausalLM.from_pretrained",
            "print",
            "inner"
        ]
    );
    let names: Vec<(&str, usize)> = program.bindings.iter().map(|b| (b.name.as_str(), b.call)).collect();
    assert_eq!(names, [("bnb", 1), ("model", 2)]);
    let loader = &program.calls[2];
    let quantization = keyword(loader, "quantization_config");
    assert_eq!(quantization.name.as_deref(), Some("bnb"));
    let at = quantization.span.start;
    assert_eq!(program.bound_call("bnb", at, |_| true), Some(1));
    assert_eq!(program.bound_call("bnb", at, |c| c != 1), None);
    assert_eq!(program.bound_call("bnb", program.calls[1].name_span.start, |_| true), None, "not bound yet");
    // A call as an argument is linked to it.
    let print = &program.calls[3];
    assert_eq!(print.args[1].call, Some(4));
    assert_eq!(print.args.iter().map(|a| a.position).collect::<Vec<_>>(), [0, 1, 2]);
    let env: Vec<(&str, &str)> = program
        .env
        .iter()
        .map(|e| match &e.value {
            Static::Known(Spanned { value: PyValue::Str(s, _), .. }) => (e.name.as_str(), s.as_str()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(env, [("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"), ("CUDA_VISIBLE_DEVICES", "0")]);
    assert_eq!(program.modules, ["os", "transformers"]);
    assert!(program.cells.is_empty());
}

#[test]
fn branches_that_never_run_are_marked() {
    let text = r#"
import os
DEBUG = False
a()
if False:
    b()
    os.environ["X"] = "1"
else:
    c()
if True:
    d()
elif x:
    e()
else:
    f()
if x:
    g()
elif 1:
    h()
else:
    i()
while 0:
    j()
if DEBUG:
    k()
def run(DEBUG):
    if DEBUG:
        l()
if not DEBUG:
    m()
run(True)
"#;
    let program = program(text);
    let dead: Vec<(String, bool)> = program.calls.iter().map(|c| (c.path.join("."), c.dead)).collect();
    let expect = |name: &str, d: bool| (name.to_string(), d);
    assert_eq!(
        dead,
        [
            expect("a", false),
            expect("b", true),
            expect("c", false),
            expect("d", false),
            expect("e", true),
            expect("f", true),
            expect("g", false),
            expect("h", false),
            expect("i", true),
            expect("j", true),
            expect("k", true),
            expect("l", false),
            expect("m", false),
            expect("run", false),
        ]
    );
    assert!(program.env[0].dead);
}

#[test]
fn incomplete_code_still_yields_the_arguments_typed_so_far() {
    let text = "from trl import GRPOConfig\nargs = GRPOConfig(num_generations=4, per_device_train_batch_size=\n";
    let program = program(text);
    let config = call(&program, "GRPOConfig");
    assert_eq!(known(config, "num_generations").value, PyValue::Int(4));
    assert_eq!(program.bindings, [Binding { name: "args".into(), call: 0 }]);
    assert!(!parse(text).is_incomplete());
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
        "if (((:\n  f(",
    ] {
        let _ = program(text);
    }
    let deep = format!("SFTConfig(a={}1{})", "(".repeat(5000), ")".repeat(5000));
    let program = program(&deep);
    assert!(program.calls.iter().flat_map(|c| &c.args).all(|a| matches!(a.value, Static::Unknown(_))));
}

#[test]
fn attributes_are_read_at_run_time_unless_named_constants() {
    let text = "DTYPE = torch.bfloat16\nload(dtype=DTYPE, device=cfg.device, kw={'dtype': torch.float16})\n";
    let plain = program(text);
    let why = |p: &Program, name: &str| match &keyword(call(p, "load"), name).value {
        Static::Unknown(why) => why.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(why(&plain, "dtype"), "`torch.bfloat16` is read at run time");
    let constants = |t: &str| t.starts_with("torch.");
    let read = program_with(text, &constants);
    let load = call(&read, "load");
    assert_eq!(known(load, "dtype").value, PyValue::Str("torch.bfloat16".into(), false));
    assert_eq!(slice(text, known(load, "dtype").span), "torch.bfloat16");
    assert_eq!(why(&read, "device"), "`cfg.device` is read at run time");
    let PyValue::Dict(entries) = &known(load, "kw").value else { panic!("a dict") };
    assert_eq!(entries[0].2.value, PyValue::Str("torch.float16".into(), false));
}

#[test]
fn names_rebound_in_program_order_tuples_f_strings_and_dict_splats() {
    let text = r#"
BASE, OUT = "org/base-7b", "runs"
name = "first"
a = Load(name)
name = f"{BASE}-{4}bit"
b = Load(name, out=OUT + "/x")
KW = {"r": 16, "lora_alpha": 32}
c = Peft(b, **KW)
d = Peft(b, **{"r": 8}, **unknown)
def use():
    Load(name)
def never():
    Load("dead")
use()
"#;
    let program = program(text);
    let loads: Vec<&Call> = program.calls.iter().filter(|c| c.path == ["Load"]).collect();
    let first = |c: &Call| match &c.args[0].value {
        Static::Known(v) => v.value.clone(),
        Static::Unknown(why) => PyValue::Str(format!("unknown: {why}"), false),
    };
    assert_eq!(first(loads[0]), PyValue::Str("first".into(), false));
    assert_eq!(first(loads[1]), PyValue::Str("org/base-7b-4bit".into(), false));
    assert_eq!(known(loads[1], "out").value, PyValue::Str("runs/x".into(), false));
    // Inside a function the name is read when it is called: not followed.
    assert!(matches!(&loads[2].args[0].value, Static::Unknown(why) if why.contains("more than once")));
    assert!(!loads[2].dead, "use() is called");
    assert!(loads[3].dead, "never() is never called");
    let pefts: Vec<&Call> = program.calls.iter().filter(|c| c.path == ["Peft"]).collect();
    assert!(!pefts[0].has_splat);
    assert_eq!(known(pefts[0], "r").value, PyValue::Int(16));
    assert_eq!(slice(text, keyword(pefts[0], "lora_alpha").key_span), "\"lora_alpha\"");
    assert_eq!(slice(text, known(pefts[0], "lora_alpha").span), "32");
    assert_eq!(known(pefts[1], "r").value, PyValue::Int(8));
    assert!(pefts[1].has_splat, "`**unknown` still hides arguments");
}
