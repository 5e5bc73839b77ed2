//! Runs one task per file on all cores and returns the results in file order, as a run
//! one file after the other would: the first failure (in file order) is the one
//! reported, and files after it that no worker has started yet are left alone.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The work done for one file, shared by all workers.
pub trait Task: Sync {
    type Output: Send;

    fn run(&self, file: &Path) -> Result<Self::Output, String>;

    /// Whether `run` writes its file: a file listed twice is then run again only after
    /// its first run has finished, and sees what that run wrote.
    fn writes_files(&self) -> bool;
}

/// Worker stack size: the main thread's usual 8 MiB, for the same nesting limits.
const STACK_BYTES: usize = 8 << 20;

pub fn run_in_order<T: Task>(files: &[PathBuf], task: &T) -> Result<Vec<T::Output>, String> {
    let (first, repeats) =
        if task.writes_files() { split_repeats(files) } else { ((0..files.len()).collect(), Vec::new()) };
    let failed = AtomicUsize::new(usize::MAX);
    let mut slots: Vec<Option<Result<T::Output, String>>> = files.iter().map(|_| None).collect();
    for (index, result) in on_all_cores(&first, files, task, &failed) {
        slots[index] = Some(result);
    }
    for index in repeats {
        if index < failed.load(Ordering::Relaxed) {
            slots[index] = Some(task.run(&files[index]));
        }
    }
    let mut outputs = Vec::with_capacity(files.len());
    // A skipped file (`None`) always follows a failure, which returns first.
    for slot in slots.into_iter().flatten() {
        outputs.push(slot?);
    }
    Ok(outputs)
}

/// Indices of the first listing of each file, and of its later listings (the same path,
/// or another path to the same file).
fn split_repeats(files: &[PathBuf]) -> (Vec<usize>, Vec<usize>) {
    let mut seen = HashSet::new();
    (0..files.len()).partition(|&i| seen.insert(std::fs::canonicalize(&files[i]).unwrap_or_else(|_| files[i].clone())))
}

/// Runs `task` on `files[i]` for each `i` of the ascending `order`, on up to one worker
/// per core (none for one file). Without writes, each worker starts on its own stretch of
/// the files (files of one format sit together, so workers seldom wait for the same schema
/// to compile) and then helps with the others'; with writes, all take files in order, so
/// that few files after a failure are fixed. A worker leaves a stretch at the first index
/// past a failure.
fn on_all_cores<T: Task>(
    order: &[usize],
    files: &[PathBuf],
    task: &T,
    failed: &AtomicUsize,
) -> Vec<(usize, Result<T::Output, String>)> {
    let workers = std::thread::available_parallelism().map_or(1, usize::from).min(order.len()).max(1);
    let stretches: Vec<&[usize]> =
        if task.writes_files() { vec![order] } else { order.chunks(order.len().div_ceil(workers).max(1)).collect() };
    let next: Vec<AtomicUsize> = stretches.iter().map(|_| AtomicUsize::new(0)).collect();
    let work = |worker: usize| {
        let mut done = Vec::new();
        for stretch in (worker..worker + stretches.len()).map(|s| s % stretches.len()) {
            while let Some(&index) = stretches[stretch].get(next[stretch].fetch_add(1, Ordering::Relaxed)) {
                if index > failed.load(Ordering::Relaxed) {
                    break;
                }
                let result = task.run(&files[index]);
                if result.is_err() {
                    failed.fetch_min(index, Ordering::Relaxed);
                }
                done.push((index, result));
            }
        }
        done
    };
    if workers <= 1 {
        return work(0);
    }
    std::thread::scope(|scope| {
        // A worker that cannot be spawned leaves its share to the others.
        let helpers: Vec<_> = (1..workers)
            .filter_map(|worker| {
                std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(scope, move || work(worker)).ok()
            })
            .collect();
        let mut done = work(0);
        for helper in helpers {
            match helper.join() {
                Ok(theirs) => done.extend(theirs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records the files it ran on; fails on names starting with `bad`.
    struct Recorder {
        ran: Mutex<Vec<PathBuf>>,
        writes: bool,
    }

    impl Task for Recorder {
        type Output = String;

        fn run(&self, file: &Path) -> Result<String, String> {
            self.ran.lock().map_err(|e| e.to_string())?.push(file.to_path_buf());
            let name = file.display().to_string();
            if name.starts_with("bad") {
                return Err(format!("failed on {name}"));
            }
            Ok(name)
        }

        fn writes_files(&self) -> bool {
            self.writes
        }
    }

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn results_keep_file_order() {
        let names: Vec<String> = (0..200).map(|i| format!("f{i}")).collect();
        let files: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
        let task = Recorder { ran: Mutex::default(), writes: false };
        assert_eq!(run_in_order(&files, &task), Ok(names));
        assert_eq!(task.ran.lock().map(|r| r.len()).ok(), Some(200));
    }

    #[test]
    fn the_first_failure_in_file_order_is_reported() {
        let mut names: Vec<String> = (0..100).map(|i| format!("f{i}")).collect();
        names[30] = "bad30".into();
        names[70] = "bad70".into();
        let files: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
        let task = Recorder { ran: Mutex::default(), writes: false };
        assert_eq!(run_in_order(&files, &task), Err("failed on bad30".to_string()));
        let ran = task.ran.lock().map(|r| r.clone()).unwrap_or_default();
        assert!(files[..=30].iter().all(|f| ran.contains(f)), "every file before the failure ran");
    }

    #[test]
    fn a_repeated_file_runs_after_its_first_listing_when_writing() {
        let files = paths(&["a", "b", "a", "c", "a"]);
        let task = Recorder { ran: Mutex::default(), writes: true };
        assert_eq!(
            run_in_order(&files, &task),
            Ok(vec!["a", "b", "a", "c", "a"].into_iter().map(String::from).collect())
        );
        let ran = task.ran.lock().map(|r| r.clone()).unwrap_or_default();
        assert_eq!(&ran[3..], &paths(&["a", "a"])[..], "repeats run last, one after the other");
    }
}
