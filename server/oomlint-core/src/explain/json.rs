//! `oomlint explain --format json`, version 1:
//! `{"version":1,"errors":[{"line","device","requested_bytes","total_bytes","free_bytes",
//! "this_process_bytes","other_processes_bytes","processes":[{"pid","bytes"}],"allocated_bytes",
//! "reserved_unallocated_bytes","reserved_bytes","private_pool_bytes","shortfall_bytes",
//! "fragmentation_suspected","site","advice":[{"title","saves_bytes","fixes"}]}],
//! "failures":[{"line","kind","rank","findings","advice",…the kind's numbers}]}`.
//!
//! `failures` (added in version 1, after `errors`) lists vLLM's start-up memory failures
//! (`kind`: `vllm-no-cache-blocks`, `vllm-max-len-kv-cache`, `vllm-free-memory`) and Ray's OOM
//! kills (`ray-host-oom`, host RAM); `errors` stays the CUDA allocator messages only.

use super::failure::{Failure, FailureKind};
use super::OomError;
use crate::diagnostic::Fix;
use serde_json::{json, Value};

/// The report with fixes rendered by `fixes` (the caller knows the config text, so it
/// can turn byte spans into the same 1-based ranges `check` prints).
pub fn report_with(errors: &[OomError], failures: &[Failure], fixes: &dyn Fn(&[Fix]) -> Value) -> Value {
    json!({
        "version": 1,
        "errors": errors.iter().map(|e| error(e, fixes)).collect::<Vec<_>>(),
        "failures": failures.iter().map(|f| failure(f, fixes)).collect::<Vec<_>>(),
    })
}

/// The report with fixes as byte ranges (`{"start","end"}`); without a config there are none.
pub fn report(errors: &[OomError], failures: &[Failure]) -> Value {
    report_with(errors, failures, &byte_range_fixes)
}

fn failure(f: &Failure, fixes: &dyn Fn(&[Fix]) -> Value) -> Value {
    let mut value = json!({
        "line": f.line,
        "kind": f.kind.code(),
        "rank": f.rank,
        "findings": f.findings,
        "advice": f.advice.iter().map(|a| json!({
            "title": a.title,
            "saves_bytes": a.saves_bytes,
            "fixes": fixes(&a.fixes),
        })).collect::<Vec<_>>(),
    });
    let numbers = match &f.kind {
        FailureKind::Vllm { numbers: n, profile: p, .. } => json!({
            "max_model_len": n.max_model_len,
            "kv_cache_tokens": n.kv_cache_tokens,
            "needed_kv_bytes": n.needed_kv_bytes,
            "available_kv_bytes": n.available_kv_bytes,
            "estimated_max_model_len": n.estimated_max_len,
            "free_bytes": n.free_bytes,
            "total_bytes": n.total_bytes,
            "gpu_memory_utilization": n.gpu_memory_utilization,
            "requested_bytes": n.requested_bytes,
            "profile": {
                "total_gib": p.total_gib,
                "gpu_memory_utilization": p.utilization,
                "weights_gib": p.weights_gib,
                "non_torch_gib": p.non_torch_gib,
                "activation_peak_gib": p.activation_gib,
                "kv_cache_gib": p.kv_cache_gib,
            },
        }),
        FailureKind::Ray(o) => json!({
            "node_ip": o.node_ip,
            "used_bytes": o.used_bytes,
            "total_bytes": o.total_bytes,
            "fraction": o.fraction,
            "threshold": o.threshold,
            "killed": {"name": o.killed_name, "pid": o.killed_pid, "bytes": o.killed_bytes},
            "top_users": o.top_users.iter().map(|(pid, bytes, command)| json!({"pid": pid, "bytes": bytes, "command": command})).collect::<Vec<_>>(),
        }),
    };
    if let (Some(object), Value::Object(extra)) = (value.as_object_mut(), numbers) {
        object.extend(extra);
    }
    value
}

fn byte_range_fixes(fixes: &[Fix]) -> Value {
    serde_json::to_value(fixes).unwrap_or_else(|_| json!([]))
}

fn error(e: &OomError, fixes: &dyn Fn(&[Fix]) -> Value) -> Value {
    let n = &e.numbers;
    let processes = n.other_processes.clone().unwrap_or_default();
    let others_total = n.other_processes.as_ref().map(|p| p.iter().map(|p| p.bytes).sum::<u64>());
    json!({
        "line": e.line,
        "device": n.device,
        "requested_bytes": n.requested_bytes,
        "total_bytes": n.total_bytes,
        "free_bytes": n.free_bytes,
        "this_process_bytes": n.this_process_bytes,
        "other_processes_bytes": others_total,
        "processes": processes,
        "allocated_bytes": n.allocated_bytes,
        "reserved_unallocated_bytes": n.reserved_unallocated_bytes,
        "reserved_bytes": n.reserved_bytes,
        "private_pool_bytes": n.private_pool_bytes,
        "shortfall_bytes": e.diagnosis.shortfall_bytes,
        "fragmentation_suspected": e.diagnosis.fragmentation_suspected,
        "site": e.site.as_ref().map(|s| s.describe()),
        "advice": e.diagnosis.advice().map(|a| json!({
            "title": a.title,
            "saves_bytes": a.saves_bytes,
            "fixes": fixes(&a.fixes),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::explain;
    use super::*;

    const KEYS: [&str; 16] = [
        "line",
        "device",
        "requested_bytes",
        "total_bytes",
        "free_bytes",
        "this_process_bytes",
        "other_processes_bytes",
        "processes",
        "allocated_bytes",
        "reserved_unallocated_bytes",
        "reserved_bytes",
        "private_pool_bytes",
        "shortfall_bytes",
        "fragmentation_suspected",
        "site",
        "advice",
    ];

    #[test]
    fn schema_v1_fields_and_nulls() {
        let text = "x\nCUDA out of memory. Tried to allocate 1.00 GiB. GPU 2 has a total capacity of 10.00 GiB of which 512.00 MiB is free. Process 11 has 3.00 GiB memory in use. Of the allocated memory 5.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n";
        let value = report(&explain(text), &[]);
        assert_eq!(value["version"], 1);
        let e = &value["errors"][0];
        let object = e.as_object().unwrap();
        assert_eq!(object.len(), KEYS.len());
        for key in KEYS {
            assert!(object.contains_key(key), "{key}");
        }
        assert_eq!(e["line"], 2);
        assert_eq!(e["device"], 2);
        assert_eq!(e["requested_bytes"], 1u64 << 30);
        assert_eq!(e["this_process_bytes"], Value::Null);
        assert_eq!(e["other_processes_bytes"], 3u64 << 30);
        assert_eq!(e["processes"], json!([{"pid": 11, "bytes": 3u64 << 30}]));
        assert_eq!(e["private_pool_bytes"], Value::Null);
        assert_eq!(e["reserved_bytes"], 6u64 << 30);
        assert_eq!(e["shortfall_bytes"], 512u64 << 20);
        assert_eq!(e["fragmentation_suspected"], true);
        assert_eq!(e["site"], Value::Null);
        assert_eq!(e["advice"][0]["saves_bytes"], 3u64 << 30);
        assert_eq!(e["advice"][0]["fixes"], json!([]));
    }

    #[test]
    fn no_process_lines_means_null_other_processes() {
        let text = "CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; 3.00 GiB already allocated; 0 bytes free; 3.50 GiB reserved in total by PyTorch)";
        let e = &report(&explain(text), &[])["errors"][0];
        assert_eq!(e["other_processes_bytes"], Value::Null);
        assert_eq!(e["processes"], json!([]));
        assert_eq!(e["reserved_unallocated_bytes"], 512u64 << 20);
    }

    #[test]
    fn failures_carry_their_kind_and_numbers() {
        let text = "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (13104). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
        let value = report(&[], &super::super::failure::failures(text));
        let f = &value["failures"][0];
        assert_eq!(f["kind"], "vllm-max-len-kv-cache");
        assert_eq!(
            (f["line"].clone(), f["max_model_len"].clone(), f["kv_cache_tokens"].clone()),
            (json!(1), json!(32768), json!(13104))
        );
        assert_eq!(f["needed_kv_bytes"], Value::Null);
        assert!(f["advice"][0]["title"].as_str().unwrap().starts_with("Lower max_model_len to 13104"));
    }

    #[test]
    fn empty_log_is_an_empty_list() {
        assert_eq!(report(&explain("nothing here"), &[]), json!({"version": 1, "errors": [], "failures": []}));
    }
}
