//! The live mesh: the control plane's CLI and the container engine run as real processes,
//! and fetches are real HTTP requests.
//!
//! Configured by `mesh-adopt.toml`; the defaults fit a control plane run by docker as
//! `mesh-control`. Secrets reach the control plane only on a process's standard input: never
//! in its arguments, its environment or a file.

#![warn(missing_docs)]

mod driver;
pub mod inspect;
pub mod lock;
mod node;
pub mod state;
pub mod templates;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, Result};
use async_trait::async_trait;
use serde::Deserialize;
use tokio::io::AsyncWriteExt;

use mesh_adopt_runtime::effect::MeshView;
use mesh_adopt_runtime::mesh::lock::{LockHolder, Locking, Unlocked};
use mesh_adopt_runtime::mesh::{ContainerState, Mesh, MeshError, Payload, Response};

/// The file the live mesh is configured by, looked for in the working directory.
pub const CONFIG_FILE: &str = "mesh-adopt.toml";

/// The largest configuration read: real ones are a few hundred bytes.
const CONFIG_BYTES: u64 = 1 << 20;

/// An inspect template's `--format` for an engine whose JSON answer is not wanted: the
/// image, whether it runs, and its mounts, as words. The default asks for the engine's JSON,
/// which also carries the labels a node records the spec digest and the owner in.
pub const INSPECT_FORMAT: &str =
    "{{.Config.Image}} {{.State.Running}} mounts{{range .Mounts}} {{.Source}}:{{.Destination}}{{end}}";

/// How a live mesh is reached. Every command is a list of words, run without a shell; the
/// placeholders are filled in within each word: `{remote}` (needed) and `{name}` in `carry`
/// and `carry_secret`, `{container}` (needed) and `{node}` in `inspect`, `{node}` in `state`,
/// `{id}` (needed) in `unlock`, none elsewhere. Any other `{word}` is refused as the
/// configuration is loaded ([`templates`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LiveConfig {
    /// The control plane's CLI; a tell runs it with the command's words appended.
    pub control: Vec<String>,
    /// Stores the bytes on its standard input at `{remote}` in the control plane.
    pub carry: Vec<String>,
    /// As `carry`, for a secret; the secret is still only on standard input.
    pub carry_secret: Vec<String>,
    /// Describes `{container}` on `{node}`: the engine's JSON (`container inspect`), or the
    /// words `IMAGE RUNNING [mounts HOST:INSIDE…]` (see [`inspect::read_answer`]).
    pub inspect: Vec<String>,
    /// Says what the control plane holds for `{node}`: its modules in registration order, each
    /// with its manifest, whether it is prepared there and the secrets the node holds for it
    /// ([`state`] gives the contract). None: the prediction starts from the containers alone,
    /// and a push that would seal a secret of a module whose container runs is refused, since
    /// it may be sealed over.
    pub state: Option<Vec<String>>,
    /// How long a `state` command may take, in seconds.
    pub state_timeout_seconds: u64,
    /// The node `inspect` and `state` answer for when they have no `{node}` word: they see that
    /// node alone, and a run on another node through them is refused before any effect.
    pub node: String,
    /// Text in the inspect command's error output that means "no such container", matched
    /// as a whole phrase without regard to case (docker says `No such container`, podman `no
    /// such container`). It must hold a word of four letters or more and be found in nothing
    /// an engine that cannot answer says ([`templates::ENGINE_TROUBLE`]).
    pub inspect_absent: String,
    /// How long an inspect may take, in seconds.
    pub inspect_timeout_seconds: u64,
    /// How long a fetch may take, in seconds.
    pub fetch_timeout_seconds: u64,
    /// The most of a fetched body kept, in bytes.
    pub fetch_body_bytes: u64,
    /// URL prefixes to reach elsewhere from this machine, e.g. a monitor published on
    /// another port: `"http://127.0.0.1:8222" = "http://127.0.0.1:18222"`.
    pub fetch_rewrite: BTreeMap<String, String>,
    /// The most of a command's output kept, in bytes.
    pub output_bytes: usize,
    /// Takes the mesh's lock for the holder on its standard input (one JSON line): see
    /// [`lock`] for its contract. None: only this machine's lock keeps another run out.
    pub lock: Option<Vec<String>>,
    /// Releases the lock held under the id in its `{id}` word ([`lock`]); with `lock`.
    pub unlock: Option<Vec<String>>,
    /// Prints who holds the mesh's lock, for a check ([`lock`]); optional, with `lock`.
    pub lock_holder: Option<Vec<String>>,
    /// How long a `lock`, `unlock` or `lock_holder` command may take, in seconds.
    pub lock_command_timeout_seconds: u64,
}

impl Default for LiveConfig {
    fn default() -> Self {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        LiveConfig {
            control: words(&["docker", "exec", "-i", "mesh-control", "mesh"]),
            carry: words(&["docker", "exec", "-i", "mesh-control", "mesh", "carry", "{remote}"]),
            carry_secret: words(&["docker", "exec", "-i", "mesh-control", "mesh", "carry", "--secret", "{remote}"]),
            inspect: words(&["docker", "container", "inspect", "{container}"]),
            state: None,
            state_timeout_seconds: 10,
            node: mesh_adopt_runtime::DEFAULT_NODE.to_string(),
            inspect_absent: "no such container".into(),
            inspect_timeout_seconds: 10,
            fetch_timeout_seconds: 5,
            fetch_body_bytes: 64 << 10,
            fetch_rewrite: BTreeMap::new(),
            output_bytes: 256 << 10,
            lock: None,
            unlock: None,
            lock_holder: None,
            lock_command_timeout_seconds: 10,
        }
    }
}

impl LiveConfig {
    /// Reads a config file, naming it in any error.
    pub fn load(path: &Path) -> Result<LiveConfig> {
        let text = mesh_adopt_runtime::files::read_bounded(path, CONFIG_BYTES)
            .map_err(anyhow::Error::from)
            .and_then(|bytes| String::from_utf8(bytes).context("it is not UTF-8"))
            .with_context(|| format!("failed to read the live mesh configuration `{}`", path.display()))?;
        let config: LiveConfig = toml::from_str(&text)
            .with_context(|| format!("the live mesh configuration `{}` is malformed", path.display()))?;
        for (what, command) in [
            ("control", &config.control),
            ("carry", &config.carry),
            ("carry_secret", &config.carry_secret),
            ("inspect", &config.inspect),
        ] {
            anyhow::ensure!(!command.is_empty(), "`{what}` in `{}` names no command", path.display());
        }
        // A zero would cut every answer to nothing or time every call out at once.
        for (what, value, most) in [
            ("inspect_timeout_seconds", config.inspect_timeout_seconds, 3600),
            ("fetch_timeout_seconds", config.fetch_timeout_seconds, 3600),
            ("fetch_body_bytes", config.fetch_body_bytes, 64 << 20),
            ("output_bytes", config.output_bytes as u64, 64 << 20),
            ("lock_command_timeout_seconds", config.lock_command_timeout_seconds, 3600),
            ("state_timeout_seconds", config.state_timeout_seconds, 3600),
        ] {
            anyhow::ensure!(
                (1..=most).contains(&value),
                "`{what}` in `{}` is {value}; it must be from 1 to {most}",
                path.display()
            );
        }
        lock::check_commands(&config).with_context(|| format!("in `{}`", path.display()))?;
        config.check_node_words().with_context(|| format!("in `{}`", path.display()))?;
        config.check_templates(path)?;
        Ok(config)
    }
}

/// A mesh reached through real processes and real HTTP.
pub struct LiveMesh {
    config: LiveConfig,
    opened: Instant,
    opened_at: SystemTime,
    /// Where this machine's locks are kept; `None` when there is no state directory.
    locks: Option<lock::MachineLocks>,
    /// The node runs on this mesh act on: what `{node}` is, and the node whose state the
    /// prediction reads.
    node: String,
}

impl LiveMesh {
    /// A live mesh reached as `config` says. Its plugins draw their WASI random numbers from
    /// the system's randomness: a nonce or a password a plugin draws there is not recorded
    /// and cannot be drawn again from anything its record holds.
    pub fn new(config: LiveConfig) -> LiveMesh {
        let locks = lock::MachineLocks::default_dir().map(lock::MachineLocks::in_dir);
        let node = config.node.clone();
        LiveMesh { config, opened: Instant::now(), opened_at: SystemTime::now(), locks, node }
    }

    /// This mesh with this machine's locks kept in `dir` instead of the user's state
    /// directory ([`lock::MachineLocks::default_dir`]).
    pub fn with_locks_in(mut self, dir: impl Into<std::path::PathBuf>) -> LiveMesh {
        self.locks = Some(lock::MachineLocks::in_dir(dir));
        self
    }
}

/// `command` with each placeholder word replaced.
fn filled(command: &[String], with: &[(&str, &str)]) -> Vec<String> {
    command
        .iter()
        .map(|word| with.iter().fold(word.clone(), |w, (key, value)| w.replace(&format!("{{{key}}}"), value)))
        .collect()
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
    timeout: Duration,
    output_bytes: usize,
    group: Group,
) -> Result<Finished, MeshError> {
    let shown = argv.join(" ");
    let mut command = tokio::process::Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    driver::dies_with_us(&mut command);
    let mut child =
        command.spawn().map_err(|e| MeshError::Unavailable(format!("`{shown}` could not be started: {e}")))?;
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
    /// call being dropped, stops it and everything it started.
    async fn run(&self, argv: &[String], stdin: Option<&[u8]>, timeout: Duration) -> Result<Finished, MeshError> {
        let shown = argv.join(" ");
        let group = Group::default();
        let _killer = GroupKiller(group.clone());
        let work = run_process(argv.to_vec(), stdin.map(<[u8]>::to_vec), timeout, self.config.output_bytes, group);
        driver::on_driver(work)
            .await
            .map_err(|e| MeshError::Unavailable(format!("`{shown}` could not be watched to its end: {e}")))?
    }

    /// Runs `argv` and insists on a zero exit status.
    async fn run_ok(&self, argv: &[String], stdin: Option<&[u8]>, timeout: Duration) -> Result<String, MeshError> {
        let done = self.run(argv, stdin, timeout).await?;
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
}

impl LiveMesh {
    /// Runs the inspect template for `container` and reads its answer
    /// ([`inspect::read_answer`]); `None` when the engine says there is no such container.
    async fn inspect_spec(&self, container: &str) -> Result<Option<inspect::Inspected>, MeshError> {
        let argv = filled(&self.config.inspect, &[("container", container), ("node", &self.node)]);
        let done = self.run(&argv, None, Duration::from_secs(self.config.inspect_timeout_seconds)).await?;
        if done.code != Some(0) {
            if templates::says(&done.stderr, &self.config.inspect_absent) {
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
        format!("the live mesh (control plane `{}`)", self.config.control.join(" "))
    }

    async fn carry(&self, name: &str, payload: Payload, remote: &str) -> Result<(), MeshError> {
        let (template, bytes) = match &payload {
            Payload::Bytes(bytes) => (&self.config.carry, bytes.as_slice()),
            Payload::Secret(secret) => (&self.config.carry_secret, secret.bytes.as_slice()),
        };
        let argv = filled(template, &[("remote", remote), ("name", name)]);
        self.run_ok(&argv, Some(bytes), Duration::from_secs(60)).await.map(|_| ())
    }

    async fn tell(&self, args: &[String], timeout: Duration) -> Result<String, MeshError> {
        let mut argv = self.config.control.clone();
        argv.extend(args.iter().cloned());
        self.run_ok(&argv, None, timeout).await
    }

    async fn inspect(&self, container: &str) -> Result<Option<ContainerState>, MeshError> {
        Ok(self.inspect_spec(container).await?.map(|found| found.state))
    }

    /// Each container asked about, inspected on this mesh's node: its image and, where the
    /// engine's answer has them, its mounts, spec digest and owner; and, where the
    /// configuration has a `state` command, the control plane's modules with what the node
    /// holds for each. Without one the modules cannot be asked, and the view is partial.
    async fn view(&self, containers: &[String]) -> MeshView {
        let mut view = MeshView::looked();
        for name in containers {
            match self.inspect_spec(name).await {
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
        self.add_state(&mut view).await;
        view
    }

    async fn fetch(&self, url: &str) -> Result<Response, MeshError> {
        let target = self
            .config
            .fetch_rewrite
            .iter()
            .find_map(|(from, to)| url.strip_prefix(from.as_str()).map(|rest| format!("{to}{rest}")))
            .unwrap_or_else(|| url.to_string());
        let timeout = Duration::from_secs(self.config.fetch_timeout_seconds);
        let cap = self.config.fetch_body_bytes;
        let shown = if target == url { format!("`{url}`") } else { format!("`{url}` (reached as `{target}`)") };
        let answer = driver::blocking_on_driver(move || -> Result<Response, String> {
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
            let response = agent.get(&target).call().map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let mut body = Vec::new();
            response.into_body().into_reader().take(cap).read_to_end(&mut body).map_err(|e| e.to_string())?;
            Ok(Response { status, body: String::from_utf8_lossy(&body).into_owned() })
        })
        .await
        .map_err(|e| MeshError::Unavailable(format!("{shown}: {e}")))?;
        answer.map_err(|e| {
            if e.to_lowercase().contains("timeout") || e.to_lowercase().contains("timed out") {
                MeshError::TimedOut(format!("{shown} gave no answer within {}s", timeout.as_secs()))
            } else {
                MeshError::Unavailable(format!("{shown}: {e}"))
            }
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
        // A run on another node than this mesh's would push one node and predict from another.
        if holder.node != self.node {
            return Err(MeshError::Failed(format!(
                "the run is on node `{}`, and this live mesh reads node `{}`: open it for the run's node \
                 (`LiveMesh::on_node`)",
                holder.node, self.node
            )));
        }
        self.take_lock(holder).await
    }

    async fn unlock(&self, id: &str) -> Result<Unlocked, MeshError> {
        self.release_lock(id).await
    }

    async fn lock_holder(&self) -> Result<Option<LockHolder>, MeshError> {
        self.holder_of_lock().await
    }
}
