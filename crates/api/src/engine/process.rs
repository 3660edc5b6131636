//! A process's name in job leases, and whether the process a lease names is gone.
//!
//! A lease names its holder so that a job whose worker died can be taken over. Waiting for the
//! lease to run out blocked a conversation for as long as the lease after every crash; on the
//! same machine we can do better: the name carries the machine's boot, the process's PID
//! namespace, its PID and when it started, and a process that finds no such process running
//! (Linux's `/proc`) takes the job at once. A holder on another machine, in another namespace,
//! or where `/proc` cannot be read is only ever judged by its lease.

use std::path::Path;

/// This process's name: `pid:<pid>@<boot>/<pid namespace>/<start>` where `/proc` tells them,
/// else `pid:<pid>`.
pub fn process_name() -> String {
    let pid = std::process::id();
    match (this_host(), started(pid)) {
        (Some(host), Some(start)) => format!("pid:{pid}@{host}/{start}"),
        _ => format!("pid:{pid}"),
    }
}

/// True only when `worker` names a process of this machine's boot and PID namespace that no
/// longer runs (no process with its PID, or one started at another time: a PID reused).
pub(crate) fn is_gone(worker: &str) -> bool {
    let Some((pid, rest)) = worker.strip_prefix("pid:").and_then(|w| w.split_once('@')) else {
        return false;
    };
    let Some((host, start)) = rest.rsplit_once('/') else { return false };
    let (Ok(pid), Some(here)) = (pid.parse::<u32>(), this_host()) else { return false };
    if host != here {
        return false;
    }
    match started(pid) {
        Some(now) => now != start,
        None => !Path::new(&format!("/proc/{pid}")).exists(),
    }
}

/// The machine's boot and this process's PID namespace: PIDs mean the same only within both.
fn this_host() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let namespace = namespace.to_str()?.trim_start_matches("pid:[").trim_end_matches(']');
    Some(format!("{}/{namespace}", boot.trim()))
}

/// When process `pid` started, in clock ticks since boot (field 22 of `/proc/<pid>/stat`).
fn started(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or parentheses.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_process_is_not_gone_and_a_dead_one_is() {
        let me = process_name();
        if !me.contains('@') {
            return; // No /proc here: leases alone judge.
        }
        assert!(!is_gone(&me), "{me}");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let start = started(pid);
        child.wait().unwrap();
        if let Some(start) = start {
            let dead = format!("pid:{pid}@{}/{start}", this_host().unwrap());
            assert!(is_gone(&dead), "{dead}");
        }
        // Another start time under a live PID: the PID was reused.
        let reused = format!("pid:{}@{}/1", std::process::id(), this_host().unwrap());
        assert!(is_gone(&reused));
        // Another machine, or a name without the parts, is never judged gone.
        assert!(!is_gone(&format!("pid:{pid}@another-boot/4026531836/{}", 5)));
        assert!(!is_gone(&format!("pid:{pid}")));
        assert!(!is_gone("worker-7"));
    }
}
