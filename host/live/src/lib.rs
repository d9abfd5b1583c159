//! The live mesh: the control plane's CLI and the container engine run as real processes,
//! and fetches are real HTTP requests.
//!
//! Configured by `mesh-adopt.toml`; the defaults fit a control plane run by docker as
//! `mesh-control`. Secrets reach the control plane only on a process's standard input: never
//! in its arguments, its environment or a file.

#![warn(missing_docs)]
// The typed errors carry what names the file and the key: built once, on a path that has
// failed, never in a loop, so their size costs nothing worth a box.
#![allow(clippy::result_large_err)]

mod config;
mod driver;
pub mod engine;
pub mod fence;
pub mod images;
pub mod inspect;
pub mod lock;
pub mod machine_lock;
mod node;
pub mod state;
pub mod templates;

pub use config::{CONFIG_FILE, ConfigError, INSPECT_FORMAT, LiveConfig};

use std::collections::BTreeSet;
use std::io::Read;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use tokio::io::AsyncWriteExt;

use mesh_adopt_runtime::effect::MeshView;
use mesh_adopt_runtime::mesh::lock::{LockBroken, LockHolder, LockScope, Locking, Unlocked};
use mesh_adopt_runtime::mesh::{Command, ContainerState, Mesh, MeshError, NodeImages, Payload, Response};

use templates::Placeholder;

/// A mesh reached through real processes and real HTTP. It holds no node of its own: each
/// read of the node is told the run's (`{node}`), so what a run predicts from and what it
/// names are one node.
pub struct LiveMesh {
    config: LiveConfig,
    opened: Instant,
    opened_at: SystemTime,
    /// Where this machine's locks are kept; `None` when there is no state directory.
    locks: Option<machine_lock::MachineLocks>,
    /// The mesh's lock as every command carries it, and whether it was found broken.
    fence: fence::Fence,
}

impl LiveMesh {
    /// A live mesh reached as `config` says. Its plugins draw their WASI random numbers from
    /// the system's randomness: a nonce or a password a plugin draws there is not recorded
    /// and cannot be drawn again from anything its record holds.
    pub fn new(config: LiveConfig) -> LiveMesh {
        let locks = machine_lock::MachineLocks::default_dir().map(machine_lock::MachineLocks::in_dir);
        LiveMesh { config, opened: Instant::now(), opened_at: SystemTime::now(), locks, fence: Default::default() }
    }

    /// This mesh with this machine's locks kept in `dir` instead of the user's state
    /// directory ([`machine_lock::MachineLocks::default_dir`]).
    pub fn with_locks_in(mut self, dir: impl Into<std::path::PathBuf>) -> LiveMesh {
        self.locks = Some(machine_lock::MachineLocks::in_dir(dir));
        self
    }
}

/// The first lines of a process's error output, for a message.
fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).take(5).collect();
    if lines.is_empty() { "(no error output)".into() } else { lines.join(" | ") }
}

/// The process group of a command once started, shared by the caller and the driver's task.
#[derive(Clone, Default)]
struct Group(Arc<Mutex<Option<u32>>>);

/// Every command's group started and not yet finished, in this program: what
/// [`end_every_command`] ends.
static RUNNING: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn running() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

fn kill_group(pid: u32) {
    // The group may be gone already; there is nothing left to end then.
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL);
}

/// Ends every control-plane command this program started that has not finished, with its
/// process group: for a program about to exit without unwinding its runs (the command line
/// ending itself on an interrupt its run did not get to answer in time).
pub fn end_every_command() {
    for pid in std::mem::take(&mut *running()) {
        kill_group(pid);
    }
}

impl Group {
    fn started(&self, group: Option<u32>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = group;
        running().extend(group);
    }

    fn finished(&self) {
        if let Some(pid) = self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            running().remove(&pid);
        }
    }

    /// Kills the group, if it was started and has not finished.
    fn kill(&self) {
        if let Some(pid) = self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            running().remove(&pid);
            kill_group(pid);
        }
    }
}

/// Kills a command's process group when dropped, unless it finished: a command dropped
/// half-way because its plugin was stopped at its wall deadline or the run was interrupted
/// leaves nothing of what it started running. Held by the caller, not by the driver's task,
/// so the group is killed at once when the call is dropped, before the program may exit.
struct GroupKiller(Group);

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.0.kill();
    }
}

/// Runs `argv` as [`LiveMesh::run`] says; on the driver's thread.
async fn run_process(
    argv: Vec<String>,
    stdin: Option<Vec<u8>>,
    lock_id: Option<String>,
    timeout: Duration,
    output_bytes: usize,
    group: Group,
) -> Result<Finished, MeshError> {
    let shown = argv.join(" ");
    let mut command = tokio::process::Command::new(&argv[0]);
    // The run's lock, while it holds the mesh's; none otherwise, whatever this program's
    // environment says.
    match lock_id {
        Some(id) => command.env(fence::LOCK_ID_VAR, id),
        None => command.env_remove(fence::LOCK_ID_VAR),
    };
    command
        .args(&argv[1..])
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    driver::dies_with_us(&mut command);
    let mut child =
        command.spawn().map_err(|e| MeshError::Unavailable(Unstartable::of(&shown, &argv[0], e).to_string()))?;
    group.started(child.id());
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (out, err) = (Mutex::new(Vec::new()), Mutex::new(Vec::new()));
    let feed = async {
        let exited = async {
            if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
                // A process that exits without reading its input is answered by its status.
                let _ = pipe.write_all(&bytes).await;
                let _ = pipe.shutdown().await;
            }
            child.wait().await
        };
        let read = async { tokio::join!(kept(stdout, output_bytes, &out), kept(stderr, output_bytes, &err)) };
        let (mut exited, mut read) = (std::pin::pin!(exited), std::pin::pin!(read));
        let mut all_read = false;
        let status = loop {
            tokio::select! {
                _ = &mut read, if !all_read => all_read = true,
                status = &mut exited => break status,
            }
        };
        // Exited: what it wrote is read to its end, unless something it left behind holds its
        // pipes open (a daemon it started), which is not waited on past a moment.
        if !all_read {
            let _ = tokio::time::timeout(PIPES_AFTER_EXIT, read).await;
        }
        status
    };
    let answer = tokio::time::timeout(timeout, feed).await;
    match &answer {
        Ok(_) => group.finished(),
        Err(_) => group.kill(),
    }
    match answer {
        Ok(Ok(status)) => Ok(Finished {
            code: status.code(),
            stdout: String::from_utf8_lossy(&out.lock().unwrap_or_else(|p| p.into_inner())).into_owned(),
            stderr: String::from_utf8_lossy(&err.lock().unwrap_or_else(|p| p.into_inner())).into_owned(),
        }),
        Ok(Err(e)) => Err(MeshError::Unavailable(format!("`{shown}` failed to run: {e}"))),
        Err(_) => {
            Err(MeshError::TimedOut(format!("`{shown}` gave no answer within {}s and was stopped", timeout.as_secs())))
        }
    }
}

/// Why a configured command could not be started, naming the file that was looked for: a
/// relative program is looked for from the directory the run started in, so a configuration
/// whose paths are written from elsewhere (the repository's top) fails from a subdirectory.
#[derive(Debug)]
enum Unstartable {
    /// A program named by a path, not there.
    NoSuchFile {
        /// The command, as written.
        shown: String,
        /// Where it was looked for.
        path: std::path::PathBuf,
        /// The directory a relative program was looked for from; `None` for an absolute one.
        cwd: Option<std::path::PathBuf>,
    },
    /// A program named by its name alone, on no directory of the PATH.
    NotOnPath {
        /// The command, as written.
        shown: String,
        /// The program.
        program: String,
    },
    /// Any other reason the system gave.
    Other {
        /// The command, as written.
        shown: String,
        /// What the system said.
        source: std::io::Error,
    },
}

impl Unstartable {
    /// Why `program`, the first word of the command `shown`, could not be started.
    fn of(shown: &str, program: &str, error: std::io::Error) -> Unstartable {
        let shown = shown.to_string();
        let named = std::path::Path::new(program);
        if error.kind() != std::io::ErrorKind::NotFound {
            return Unstartable::Other { shown, source: error };
        }
        if !program.contains('/') {
            return Unstartable::NotOnPath { shown, program: program.to_string() };
        }
        let cwd = std::env::current_dir().ok().filter(|_| named.is_relative());
        let path = cwd.as_ref().map_or_else(|| named.to_path_buf(), |cwd| cwd.join(named));
        // There, yet not found: what it names to run it by (its `#!` line) is not.
        if path.exists() {
            return Unstartable::Other { shown, source: error };
        }
        Unstartable::NoSuchFile { shown, path, cwd }
    }
}

impl std::fmt::Display for Unstartable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unstartable::NoSuchFile { shown, path, cwd } => {
                write!(f, "`{shown}` could not be started: there is no file `{}`", path.display())?;
                if let Some(cwd) = cwd {
                    write!(
                        f,
                        " (a relative program is looked for from the directory the run started in, `{}`: run from \
                         the directory the configuration's paths are written from, or write them absolute)",
                        cwd.display()
                    )?;
                }
                Ok(())
            }
            Unstartable::NotOnPath { shown, program } => {
                write!(f, "`{shown}` could not be started: there is no program `{program}` on the PATH")
            }
            Unstartable::Other { shown, source } => write!(f, "`{shown}` could not be started: {source}"),
        }
    }
}

impl std::error::Error for Unstartable {}

/// How long a command's pipes are read after it exited: what it wrote is there at once; a
/// pipe still open after this is held by something it left running.
const PIPES_AFTER_EXIT: Duration = Duration::from_millis(500);

/// Reads `pipe` to its end into `kept`, keeping at most `cap` bytes: the rest is read and
/// dropped, so a command that floods its output neither fills the host's memory nor blocks
/// on a full pipe. What was kept is there however far the reading got.
async fn kept(pipe: Option<impl tokio::io::AsyncRead + Unpin>, cap: usize, kept: &Mutex<Vec<u8>>) {
    use tokio::io::AsyncReadExt as _;
    let Some(mut pipe) = pipe else { return };
    let mut chunk = vec![0; 16 << 10];
    while let Ok(read) = pipe.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&chunk[..read.min(room)]);
    }
}

/// What a finished process said.
struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl LiveMesh {
    /// Runs `argv` with `stdin` fed to it, from the live mesh's own thread ([`driver`]) so
    /// that it dies with the program, and in its own process group so that a timeout, or the
    /// call being dropped, stops it and everything it started. While the run holds the mesh's
    /// lock, the command carries its id ([`fence::LOCK_ID_VAR`]).
    async fn run(&self, argv: &[String], stdin: Option<&[u8]>, timeout: Duration) -> Result<Finished, MeshError> {
        let shown = argv.join(" ");
        let group = Group::default();
        let _killer = GroupKiller(group.clone());
        let (stdin, lock_id) = (stdin.map(<[u8]>::to_vec), self.fence.id());
        let work = run_process(argv.to_vec(), stdin, lock_id, timeout, self.config.output_bytes, group);
        driver::on_driver(work)
            .await
            .map_err(|e| MeshError::Unavailable(format!("`{shown}` could not be watched to its end: {e}")))?
    }

    /// Runs the changing command `argv` (`what`, in the words it is told by) and insists on a
    /// zero exit status; nothing is run once the run's lock was found broken, and a refusal
    /// by the control plane's fence ([`fence::FENCED`]) finds it so.
    async fn run_changing(
        &self,
        what: &str,
        argv: &[String],
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<String, MeshError> {
        self.fence.before(what)?;
        let done = self.run(argv, stdin, timeout).await?;
        if done.code == Some(fence::FENCED)
            && let Some(refused) = self.fence.refused(what, &done.stdout)
        {
            return Err(refused);
        }
        zero(argv, done)
    }

    /// Runs `argv` and insists on a zero exit status.
    async fn run_ok(&self, argv: &[String], stdin: Option<&[u8]>, timeout: Duration) -> Result<String, MeshError> {
        zero(argv, self.run(argv, stdin, timeout).await?)
    }
}

/// What `argv` printed, when it exited 0; else the error naming it, its status and its first
/// lines of error output.
fn zero(argv: &[String], done: Finished) -> Result<String, MeshError> {
    match done.code {
        Some(0) => Ok(done.stdout),
        code => Err(MeshError::Failed(format!(
            "`{}` exited with {}: {}",
            argv.join(" "),
            code.map_or("a signal".to_string(), |c| format!("status {c}")),
            first_lines(&done.stderr)
        ))),
    }
}

impl LiveMesh {
    /// Runs the inspect template for `container` on `node` and reads its answer
    /// ([`inspect::read_answer`]); `None` when the engine says there is no such container.
    async fn inspect_spec(&self, node: &str, container: &str) -> Result<Option<inspect::Inspected>, MeshError> {
        let argv = self.config.inspect.fill(|p| match p {
            Placeholder::Container => container.to_string(),
            _ => node.to_string(),
        });
        let done = self.run(&argv, None, self.config.inspect_timeout).await?;
        if done.code != Some(0) {
            if engine::says(&done.stderr, &self.config.inspect_absent) {
                return Ok(None);
            }
            return Err(MeshError::Failed(format!(
                "`{}` exited with {}: {}",
                argv.join(" "),
                done.code.map_or("a signal".to_string(), |c| format!("status {c}")),
                first_lines(&done.stderr)
            )));
        }
        inspect::read_answer(&done.stdout).map(Some).map_err(|why| {
            MeshError::Failed(format!(
                "`{}` answered `{}`, which is neither the engine's JSON for one container nor \
                 `IMAGE RUNNING [mounts HOST:INSIDE…]`: {why}",
                argv.join(" "),
                first_lines(&done.stdout)
            ))
        })
    }
}

#[async_trait]
impl Mesh for LiveMesh {
    fn summary(&self) -> String {
        format!("the live mesh (control plane `{}`)", self.config.control.written().join(" "))
    }

    async fn carry(&self, name: &str, payload: Payload, remote: &str) -> Result<(), MeshError> {
        let (template, bytes) = match &payload {
            Payload::Bytes(bytes) => (&self.config.carry, bytes.as_slice()),
            Payload::Secret(secret) => (&self.config.carry_secret, secret.bytes.as_slice()),
        };
        let argv = template.fill(|p| match p {
            Placeholder::Name => name.to_string(),
            _ => remote.to_string(),
        });
        self.run_changing(&format!("carry {remote}"), &argv, Some(bytes), Duration::from_secs(60)).await.map(|_| ())
    }

    /// The control plane's CLI with the command's words appended: the one place a command
    /// becomes words a process is given.
    async fn tell(&self, command: &Command, timeout: Duration) -> Result<String, MeshError> {
        let mut argv = self.config.control.fill(|_| String::new());
        let words = command.words();
        argv.extend(words.iter().cloned());
        self.run_changing(&words.join(" "), &argv, None, timeout).await
    }

    async fn inspect(&self, node: &str, container: &str) -> Result<Option<ContainerState>, MeshError> {
        Ok(self.inspect_spec(node, container).await?.map(|found| found.state))
    }

    fn serves(&self, node: &str) -> Result<(), String> {
        self.serves_node(node)
    }

    async fn images(&self, node: &str, images: &[String]) -> Result<NodeImages, MeshError> {
        self.node_images(node, images).await
    }

    /// Each container asked about, inspected on `node`: its image and, where the engine's
    /// answer has them, its mounts, spec digest and owner; and, where the configuration has a
    /// `state` command, the control plane's modules with what the node holds for each.
    /// Without one the modules cannot be asked, and the view is partial.
    async fn view(&self, node: &str, containers: &[String]) -> MeshView {
        let mut view = MeshView::looked();
        for name in containers {
            match self.inspect_spec(node, name).await {
                Ok(Some(found)) => {
                    view.containers.insert(name.clone(), found.spec());
                }
                // Absent, as the engine says in its own words (`inspect_absent`).
                Ok(None) => {}
                // An engine that errs or hangs says nothing of the container: not "absent".
                Err(e) => {
                    view.unseen = Some(format!("the container engine could not say what `{name}` is: {e}"));
                    break;
                }
            }
        }
        self.add_state(node, &mut view).await;
        view
    }

    async fn fetch(&self, url: &str) -> Result<Response, MeshError> {
        let target = self
            .config
            .fetch_rewrite
            .iter()
            .find_map(|(from, to)| url.strip_prefix(from.as_str()).map(|rest| format!("{to}{rest}")))
            .unwrap_or_else(|| url.to_string());
        let timeout = self.config.fetch_timeout;
        let cap = self.config.fetch_body_bytes;
        let shown = if target == url { format!("`{url}`") } else { format!("`{url}` (reached as `{target}`)") };
        let answer = driver::blocking_on_driver(move || -> Result<Response, ureq::Error> {
            // A redirect is the plugin's to see, not the host's to follow: following it would
            // fetch a URL the grants never saw. Nor does a proxy from the environment get to
            // see what the plugin fetches.
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .timeout_global(Some(timeout))
                .http_status_as_error(false)
                .max_redirects(0)
                .proxy(None)
                .build()
                .into();
            let response = agent.get(&target).call()?;
            let status = response.status().as_u16();
            let mut body = Vec::new();
            response.into_body().into_reader().take(cap).read_to_end(&mut body)?;
            Ok(Response { status, body: String::from_utf8_lossy(&body).into_owned() })
        })
        .await
        .map_err(|e| MeshError::Unavailable(format!("{shown}: {e}")))?;
        answer.map_err(|e| match e {
            ureq::Error::Timeout(_) => {
                MeshError::TimedOut(format!("{shown} gave no answer within {}s", timeout.as_secs()))
            }
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                MeshError::TimedOut(format!("{shown} gave no answer within {}s", timeout.as_secs()))
            }
            other => MeshError::Unavailable(format!("{shown}: {other}")),
        })
    }

    fn now(&self) -> Duration {
        self.opened.elapsed()
    }

    fn opened_at(&self) -> SystemTime {
        self.opened_at
    }

    async fn sleep(&self, duration: Duration) {
        // On the driver's runtime, whose timers are there whatever the caller's executor has.
        let _ = driver::on_driver(tokio::time::sleep(duration)).await;
    }

    async fn lock(&self, holder: &LockHolder) -> Result<Locking, MeshError> {
        self.take_lock(holder).await
    }

    async fn unlock(&self, id: &str) -> Result<Unlocked, MeshError> {
        self.release_lock(id).await
    }

    async fn lock_holder(&self) -> Result<Option<(LockHolder, LockScope)>, MeshError> {
        self.holder_of_lock().await
    }

    fn lock_broken(&self) -> Option<LockBroken> {
        self.fence.broken()
    }
}
