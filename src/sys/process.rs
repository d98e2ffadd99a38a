//! Other processes, as /proc shows them.

/// The command name (comm, at most 15 bytes) and state letter of process `pid`, from
/// one read of /proc/<pid>/stat; `None` when there is no such process.
pub fn comm_and_state(pid: i32) -> Option<(String, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) S ...": comm may itself hold spaces and parentheses.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let state = stat.get(close + 1..)?.trim_start().chars().next()?;
    Some((comm, state))
}

/// This process's command name ("schedlab" for the installed binary).
pub fn own_comm() -> Option<String> {
    Some(std::fs::read_to_string("/proc/self/comm").ok()?.trim_end_matches('\n').to_string())
}

/// Whether `pid` is a running process (not a zombie) and, when `comm` is given, one
/// with that command name: a pid reused by another program does not count.
pub fn is_running_as(pid: i32, comm: Option<&str>) -> bool {
    match comm_and_state(pid) {
        None => false,
        Some((_, 'Z' | 'X' | 'x')) => false,
        Some((name, _)) => comm.is_none_or(|c| c == name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_under_its_own_name_and_others_do_not() {
        let me = std::process::id() as i32;
        let comm = own_comm().unwrap();
        assert!(is_running_as(me, Some(&comm)));
        assert!(is_running_as(me, None));
        assert!(!is_running_as(me, Some("surely-not-us")));
        // Above the largest pid_max (2^22): never a process.
        assert!(!is_running_as(99_999_999, None));
    }

    #[test]
    fn a_zombie_is_not_running() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while comm_and_state(pid).is_some_and(|(_, s)| s != 'Z') && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(comm_and_state(pid), Some(("true".to_string(), 'Z')));
        assert!(!is_running_as(pid, None));
        child.wait().unwrap();
        assert_eq!(comm_and_state(pid), None);
    }
}
