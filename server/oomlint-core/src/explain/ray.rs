//! Ray's out-of-memory killer: the raylet's memory monitor kills a worker when the node's
//! *host* memory (RAM, not GPU memory) passes `RAY_memory_usage_threshold` (0.95 by default).
//!
//! Templates (`src/ray/raylet/node_manager.cc`, the OOM kill message; documented in
//! `doc/source/ray-core/scheduling/ray-oom-prevention.rst`), read on lower-cased
//! whitespace-free text:
//! - `Task was killed due to the node running low on memory. Memory on the node (IP: A, ID: B)
//!   where the task (task ID: …, name=N, pid=P, memory used=X GB) was running was U GB / T GB
//!   (r), which exceeds the memory usage threshold of t. Ray killed this worker (ID: …) because
//!   it was the most recently scheduled task; …` — also `where the task (actor ID: …`, `where the
//!   lease (name=…`, `where the task was running was`; raised to the driver as
//!   `ray.exceptions.OutOfMemoryError` or logged as a worker's exit detail.
//! - newer: `N worker(s) were killed due to the node running low on memory. Memory on the node
//!   (IP: A, ID: B) was U GB / T GB (r), which exceeds the memory usage threshold of 0.950000; …
//!   Ray killed N worker(s) based on the killing policy: [(Task: …, task name=N, …, pid=P,
//!   actual memory used=X GB, …)]`.
//!
//! Both may be followed by `Top 10 memory users:` and `PID MEM(GB) COMMAND` rows. Ray's `GB`
//! is bytes / 1024³ (a DGX Spark's 121.63 GiB prints as `121.63GB`).

use super::cursor::Cursor;
use super::scan::Log;

const GIB: f64 = 1_073_741_824.0;

/// The numbers of one kill message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RayOom {
    /// The node's IP, when printed.
    pub node_ip: Option<String>,
    pub used_bytes: u64,
    pub total_bytes: u64,
    /// `used / total` as printed.
    pub fraction: f64,
    /// `RAY_memory_usage_threshold` as printed.
    pub threshold: f64,
    /// The task or actor method whose worker was killed (`name=` / `task name=`).
    pub killed_name: Option<String>,
    pub killed_pid: Option<u32>,
    /// What the killed worker used (`memory used=` / `actual memory used=`).
    pub killed_bytes: Option<u64>,
    /// The `Top 10 memory users` rows: pid, bytes, command.
    pub top_users: Vec<(u32, u64, String)>,
}

/// Where a kill message's numbers start (lower-cased, no whitespace).
pub(crate) const ANCHOR: &[u8] = b"memoryonthenode";

/// The sentence before the anchor, kept in the message when present.
const LEADS: [&[u8]; 2] = [b"killedduetothenoderunninglowonmemory.", b"killedduetothenoderunninglowonmemory"];

/// Parses the message whose anchor (`memoryonthenode`) starts at `anchor` of `lower`;
/// returns its numbers and the compact range of the message. `original` is the same compact
/// text before lower-casing (task names keep their case).
pub(crate) fn parse(lower: &[u8], original: &[u8], anchor: usize) -> Option<(RayOom, usize, usize)> {
    let mut c = Cursor { bytes: lower, at: anchor + ANCHOR.len() };
    let mut oom = RayOom::default();
    if c.eat("(ip:") {
        let ip_start = c.at;
        c.until(b",)", 64)?;
        oom.node_ip = Some(String::from_utf8_lossy(&original[ip_start..c.at]).into_owned());
        let close = c.find(")", 120)?;
        c.at = close + 1;
    }
    if c.eat("wherethetask(") || c.eat("wherethelease(") || c.eat("wheretheactor(") {
        let close = c.find(")", 400)?;
        let inside = Cursor { bytes: &lower[..close], at: c.at };
        read_killed(&inside, original, &mut oom, "name=", "memoryused=");
        c.at = close + 1;
        c.eat("wasrunning");
    } else {
        c.eat("wherethetaskwasrunning");
    }
    (c.eat("was")).then_some(())?;
    oom.used_bytes = c.gib(&["gb"], true)?;
    c.eat("/").then_some(())?;
    oom.total_bytes = c.gib(&["gb"], true)?;
    c.eat("(").then_some(())?;
    oom.fraction = c.number()?;
    c.eat("),whichexceedsthememoryusagethresholdof").then_some(())?;
    oom.threshold = c.number()?;
    let _ = c.eat(".") || c.eat(";");
    let mut end = c.at;
    if oom.killed_name.is_none() {
        // The newer message names the killed worker in its killing-policy list.
        if let Some(policy) = c.find("basedonthekillingpolicy:[", 1500) {
            let close = Cursor { bytes: lower, at: policy }.find("]", 600).unwrap_or(lower.len());
            let inside = Cursor { bytes: &lower[..close], at: policy };
            read_killed(&inside, original, &mut oom, "taskname=", "actualmemoryused=");
            end = (close + 1).min(lower.len());
        }
    } else if let Some(sentence) = c.find("becauseitwasthemostrecentlyscheduledtask", 200) {
        end = sentence + "becauseitwasthemostrecentlyscheduledtask".len();
    }
    let start = LEADS
        .iter()
        .find_map(|lead| {
            let from = anchor.checked_sub(lead.len() + 40)?;
            let window = &lower[from..anchor];
            window.windows(lead.len()).rposition(|w| w == *lead).map(|p| from + p)
        })
        .map_or(anchor, |lead| sentence_start(lower, lead));
    Some((oom, start, end))
}

/// Back from the `killed due to…` lead to `task was` or `N worker(s) were`.
fn sentence_start(lower: &[u8], lead: usize) -> usize {
    for opener in [&b"taskwas"[..], b"actorwas", b"worker(s)were"] {
        if lead >= opener.len() && &lower[lead - opener.len()..lead] == opener {
            let mut s = lead - opener.len();
            // `1 worker(s)`: the count before it.
            while s > 0 && lower[s - 1].is_ascii_digit() {
                s -= 1;
            }
            return s;
        }
    }
    lead
}

/// Reads `name=…`, `pid=…` and the memory used from a parenthesised list.
fn read_killed(inside: &Cursor, original: &[u8], oom: &mut RayOom, name_key: &str, memory_key: &str) {
    let field = |key: &str| {
        let at = inside.find(key, inside.bytes.len())? + key.len();
        let len = inside.bytes[at..].iter().position(|&b| b == b',').unwrap_or(inside.bytes.len() - at);
        Some((at, len))
    };
    if let Some((at, len)) = field(name_key) {
        oom.killed_name = Some(String::from_utf8_lossy(&original[at..at + len]).into_owned());
    }
    if let Some((at, len)) = field("pid=") {
        oom.killed_pid = std::str::from_utf8(&inside.bytes[at..at + len]).ok().and_then(|p| p.parse().ok());
    }
    if let Some((at, _)) = field(memory_key) {
        oom.killed_bytes = Cursor { bytes: inside.bytes, at }.gib(&["gb"], true);
    }
}

/// The `Top 10 memory users:` table at or after line `from` (within a few lines): its rows.
pub(crate) fn top_users(log: &Log, from: usize) -> Vec<(u32, u64, String)> {
    let mut line = Some(from);
    let mut rows = Vec::new();
    let mut in_table = false;
    for _ in 0..24 {
        let Some(l) = line else { break };
        line = log.next_in_stream(l);
        let text = log.clean(l);
        if !in_table {
            in_table = text.contains("Top 10 memory users:");
            continue;
        }
        if text.starts_with("PID") && text.contains("MEM") {
            continue;
        }
        let mut parts = text.split_whitespace();
        let row = (|| {
            let pid: u32 = parts.next()?.parse().ok()?;
            let gb: f64 = parts.next()?.parse().ok()?;
            let command = parts.collect::<Vec<_>>().join(" ");
            Some((pid, (gb * GIB).round() as u64, command))
        })();
        match row {
            Some(r) => rows.push(r),
            None => break,
        }
    }
    rows
}

/// The top users grouped by program (`ray::WorkerDict.generate` counts as `ray::WorkerDict`),
/// largest first: name, processes, bytes.
pub(crate) fn grouped_users(rows: &[(u32, u64, String)]) -> Vec<(String, usize, u64)> {
    let mut groups: Vec<(String, usize, u64)> = Vec::new();
    for (_, bytes, command) in rows {
        let program = command.split_whitespace().next().unwrap_or("");
        let name = match program.strip_prefix("ray::") {
            Some(actor) => format!("ray::{}", actor.split('.').next().unwrap_or(actor)),
            None => program.rsplit('/').next().unwrap_or(program).to_owned(),
        };
        match groups.iter_mut().find(|g| g.0 == name) {
            Some(g) => {
                g.1 += 1;
                g.2 += bytes;
            }
            None => groups.push((name, 1, *bytes)),
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.2));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oom(text: &str) -> (RayOom, String) {
        let original: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        let lower = original.to_ascii_lowercase();
        let anchor = lower.windows(ANCHOR.len()).position(|w| w == ANCHOR).expect("anchor");
        let (oom, start, end) = parse(&lower, &original, anchor).expect("parses");
        (oom, String::from_utf8_lossy(&original[start..end]).into_owned())
    }

    fn gb(x: f64) -> u64 {
        (x * GIB).round() as u64
    }

    #[test]
    fn task_form() {
        let (o, message) = oom("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\nMemory on the node (IP: 10.0.62.231, ID: e5d953ef03) where the task (task ID: 43534ce9, name=allocate_memory, pid=11362, memory used=1.25GB) was running was 27.71GB / 28.80GB (0.962273), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 6f2ec5c8) because it was the most recently scheduled task; to see more");
        assert_eq!(o.node_ip.as_deref(), Some("10.0.62.231"));
        assert_eq!((o.used_bytes, o.total_bytes), (gb(27.71), gb(28.80)));
        assert_eq!((o.fraction, o.threshold), (0.962273, 0.95));
        assert_eq!(o.killed_name.as_deref(), Some("allocate_memory"));
        assert_eq!((o.killed_pid, o.killed_bytes), (Some(11362), Some(gb(1.25))));
        assert!(message.starts_with("Taskwaskilled"), "{message}");
        assert!(message.ends_with("mostrecentlyscheduledtask"), "{message}");
    }

    #[test]
    fn actor_lease_and_bare_forms() {
        let (o, _) = oom("Memory on the node (IP: 172.24.49.143, ID: 85) where the task (actor ID: 4f48, name=StreamingDataProducer.__init__, pid=3764266, memory used=23.49GB\n) was running was 718.15GB / 755.24GB (0.950882), which exceeds the memory usage threshold of 0.95.");
        assert_eq!(o.killed_name.as_deref(), Some("StreamingDataProducer.__init__"));
        let (o, _) = oom("Memory on the node (IP: 172.18.250.100, ...) where the lease (name=SGLangEngine.__init__, pid=3719, memory used=0.68GB)\nwas running was 126.63GB / 128.00GB (0.989315), which exceeds the memory usage threshold of 0.95.");
        assert_eq!((o.killed_pid, o.total_bytes), (Some(3719), gb(128.0)));
        let (o, _) = oom(
            "Memory on the node was 418.96GB / 440.83GB (0.950398), which exceeds the memory usage threshold of 0.95.",
        );
        assert_eq!((o.node_ip, o.used_bytes), (None, gb(418.96)));
    }

    #[test]
    fn newer_policy_form() {
        let (o, message) = oom("(raylet) Task _map_task failed due to oom. Error: 1 worker(s) were killed due to the node running low on memory. Memory on the node (IP: 10.0.50.112, ID: 4cb2) was 28.62GB / 30.00GB (0.954017), which exceeds the memory usage threshold of 0.950000; Object store memory usage: [- objects spillable: 0]; Ray killed 1 worker(s) based on the killing policy: [(Task: job ID=05000000, task name=ReadRange->MapBatches(uses_lots_of_memory), required resources={memory: 8, CPU: 1}, pid=3471, actual memory used=2.85GB, worker ID=8150)]; To see more");
        assert_eq!(o.threshold, 0.95);
        assert_eq!(o.killed_name.as_deref(), Some("ReadRange->MapBatches(uses_lots_of_memory)"));
        assert_eq!((o.killed_pid, o.killed_bytes), (Some(3471), Some(gb(2.85))));
        assert!(message.starts_with("1worker(s)were"), "{message}");
    }

    #[test]
    fn top_users_table() {
        let text = "x.Top 10 memory users:\nPID\tMEM(GB)\tCOMMAND\n3565\t45.16\tray::WorkerDict.actor_rollout_generate_sequences\n3566\t44.00\tray::WorkerDict\n7\t0.50\t/usr/bin/python3 train.py\nRefer to the documentation\n";
        let log = Log::new(text);
        let rows = top_users(&log, 0);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0], (3565, gb(45.16), "ray::WorkerDict.actor_rollout_generate_sequences".into()));
        let groups = grouped_users(&rows);
        assert_eq!(groups[0], ("ray::WorkerDict".into(), 2, gb(45.16) + gb(44.0)));
        assert_eq!(groups[1].0, "python3");
    }

    #[test]
    fn incomplete_messages_do_not_parse() {
        for text in [
            "Memory on the node (IP: 1.2.3.4",
            "Memory on the node was 1GB / 2GB",
            "Memory on the node was 1.0GB / 2.0GB (0.5), which",
        ] {
            let original: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            let lower = original.to_ascii_lowercase();
            assert!(parse(&lower, &original, 0).is_none(), "{text}");
        }
    }
}
