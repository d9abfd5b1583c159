//! SIGINT and SIGTERM as an operator or a service manager sends them: whatever the command is
//! doing (a plugin computing or compiling, a sweep, a build's toolchain, a blocked stdout), it
//! ends with 130 at once, says so, and closes the record.

use std::process::Command;

use crate::stdout::run_saying_a_lot;
use crate::support::{catalogue, example_catalogue, mesh_adopt, plugin, text};

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

#[test]
fn sigint_while_a_plugin_computes_exits_130_at_once() {
    let dir = example_catalogue(&plugin("loops_forever"));
    let record = dir.path().join("run.jsonl");
    let child = mesh_adopt()
        .args(["run", "postgres", "--catalog-source", SOURCE, "--plugin-time", "60s", "--record"])
        .arg(&record)
        .catalogue(dir.path())
        .spawn();
    // Wait until the plugin is in its endless loop: its plan is recorded before adopt.
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&record).unwrap_or_default().contains("\"event\":\"plan\"") {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the plugin never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = std::time::Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(sent.elapsed() < std::time::Duration::from_secs(3), "stopped after {:?}", sent.elapsed());
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(recorded.lines().last().unwrap().contains("\"event\":\"interrupted\""), "{recorded}");
    // An interrupted record is as valid as a finished one, line by line.
    for line in recorded.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(crate::events::invalid(&value), None, "{line}");
    }
}

#[test]
fn sigint_is_answered_while_stdout_is_blocked() {
    let dir = catalogue();
    let mut child = run_saying_a_lot(dir.path());
    std::thread::sleep(std::time::Duration::from_secs(2));
    let sent = std::time::Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    // Still nobody reads stdout: the program must end all the same.
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(sent.elapsed() < std::time::Duration::from_secs(5), "still running {:?} after SIGINT", sent.elapsed());
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // Interrupted mid-run (130), or, its run already over and recorded, ended by the signal
    // while it waited to hand stdout its last lines.
    use std::os::unix::process::ExitStatusExt;
    assert!(status.code() == Some(130) || status.signal() == Some(2), "{status:?}");
}

/// A component whose one core module has `functions` functions of `length` arithmetic steps
/// each, and nothing of the contract: what takes long to compile and then cannot be used.
fn slow_to_compile(functions: usize, length: usize) -> Vec<u8> {
    let body = "local.get 0 i32.const 7 i32.add i32.const 3 i32.mul local.set 0 ".repeat(length);
    let funcs: String = (0..functions)
        .map(|i| format!("(func (export \"f{i}\") (param i32) (result i32) {body} local.get 0)\n"))
        .collect();
    wat::parse_str(format!("(component (core module {funcs}))")).expect("the component's text parses")
}

#[test]
fn an_interrupt_while_a_plugin_compiles_ends_the_program_within_two_seconds_record_closed() {
    let dir = catalogue();
    std::fs::write(dir.path().join("modules/postgres/adopt.wasm"), slow_to_compile(4000, 150)).unwrap();
    let record = dir.path().join("run.jsonl");
    // Cranelift's compile, which is the slow one: Winch's may be over before the interrupt.
    let child = mesh_adopt()
        .args(["check", "--no-cache", "--code", "optimised", "--catalog-source", SOURCE, "postgres", "--record"])
        .arg(&record)
        .catalogue(dir.path())
        .spawn();
    // The record's first line is written before the plugin is loaded: the compile is next.
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&record).map_or(true, |r| r.is_empty()) {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let sent = std::time::Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let stopped_in = sent.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stopped_in < std::time::Duration::from_secs(2), "stopped after {stopped_in:?}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    let recorded = std::fs::read_to_string(&record).unwrap();
    let last: serde_json::Value = serde_json::from_str(recorded.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "interrupted", "{recorded}");
}

/// Sends SIGTERM to `child` and waits for it, at most five seconds: what an operator's
/// `kill`, or a service manager stopping the command, does.
fn terminated(mut child: std::process::Child) -> (std::process::Output, std::time::Duration) {
    let sent = std::time::Instant::now();
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    while child.try_wait().unwrap().is_none() {
        if sent.elapsed() > std::time::Duration::from_secs(5) {
            let _ = child.kill();
            panic!("still running {:?} after SIGTERM", sent.elapsed());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), sent.elapsed())
}

#[test]
fn sigterm_during_a_sweep_ends_it_with_130_and_says_so() {
    use std::io::BufRead as _;
    let catalogue = crate::support::root().join("catalogue");
    let cache = tempfile::tempdir().unwrap();
    let mut child =
        mesh_adopt().args(["test", "--sweep"]).catalogue(&catalogue).env("XDG_CACHE_HOME", cache.path()).spawn();
    // The first scenario's line: the sweep is under way, with minutes of it to go.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(!first.is_empty(), "the sweep said nothing");
    let (out, took) = terminated(child);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(took < std::time::Duration::from_secs(2), "stopped after {took:?}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("error:"), "{stderr}");
}

#[test]
fn sigterm_during_a_build_ends_it_and_its_toolchain_with_130() {
    // The build's cargo is one that answers `metadata` as cargo does and then builds for as
    // long as it is let: what a long compile looks like to the command.
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("cargo-build.pid");
    let fake = dir.path().join("cargo");
    let real = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = metadata ]; then exec '{real}' \"$@\"; fi\necho $$ > '{}'\nexec sleep 60\n",
            started.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let child = mesh_adopt()
        .args(["build", "--check", "--no-pin", "postgres"])
        .catalogue(crate::support::root().join("catalogue"))
        .env("CARGO", &fake)
        .env("XDG_CACHE_HOME", dir.path())
        .spawn();
    let waited = std::time::Instant::now();
    while std::fs::read_to_string(&started).map_or(true, |p| !p.ends_with('\n')) {
        assert!(waited.elapsed() < std::time::Duration::from_secs(60), "the build never started cargo");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let cargo = std::fs::read_to_string(&started).unwrap().trim().to_string();
    let (out, took) = terminated(child);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(took < std::time::Duration::from_secs(2), "stopped after {took:?}");
    assert!(stderr.contains("interrupted by SIGTERM: the toolchain commands it had started were ended"), "{stderr}");
    assert!(!stderr.contains("error:"), "an interrupt is no error: {stderr}");
    // The build's cargo went with it, not left compiling.
    let gone = std::time::Instant::now();
    while Command::new("kill").args(["-0", &cargo]).stderr(std::process::Stdio::null()).status().unwrap().success() {
        assert!(gone.elapsed() < std::time::Duration::from_secs(2), "cargo {cargo} still runs");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
