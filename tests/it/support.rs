//! A test catalogue built in a temporary directory from the example catalogue, edited per
//! test, and a run of it on a simulated mesh whose state the test can read back; and the
//! `mesh-adopt` binary as every test starts it ([`mesh_adopt`]).

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::record::transcript::Transcript;
use mesh_adopt_runtime::{Catalogue, Foundation};
use mesh_adopt_runtime::{Mode, ModuleOutcome, PHASE_THREE, Run, RunOptions, RunReport};
use serde_json::Value;

/// The project's top directory.
pub fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).canonicalize().unwrap()
}

/// A plugin built from source by `just build-plugins`: a misbehaving one by its program's
/// name (`tells_during_check`, from `tests/plugins/*/examples/`), any other by its crate's
/// (`adopt_nats`). The programs are looked for first, so a component left from before a
/// program's crate became one of its examples is never the one run.
pub fn plugin(name: &str) -> PathBuf {
    let built = root().join("plugins/target/wasm32-wasip2/release");
    let program = built.join("examples").join(format!("{name}.wasm"));
    let path = if program.is_file() { program } else { built.join(format!("{name}.wasm")) };
    assert!(path.is_file(), "`{}` is missing: run `just build-plugins` first", path.display());
    path
}

/// A copy of the example catalogue with freshly built plugins beside its manifests: what most
/// tests of the binary run on.
pub fn catalogue() -> tempfile::TempDir {
    example_catalogue(&plugin("adopt_postgres"))
}

/// What a process wrote, as text for an assertion and its message.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The compile cache the suite's runs of big JavaScript and Python plugins share (in cargo's
/// temporary directory): each is compiled once, not once per run of the suite, and each
/// compile reuses the functions of the language's engine or interpreter that the others
/// compiled.
pub fn shared_compile_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("compile-cache")
}

/// One engine for the whole test binary, so each plugin compiles once.
pub fn host() -> &'static PluginHost {
    static HOST: OnceLock<PluginHost> = OnceLock::new();
    HOST.get_or_init(|| PluginHost::new(Limits::default()).expect("plugin host"))
}

/// A copy of the example catalogue (foundation, manifests, genesis credentials) with
/// freshly built plugins beside its manifests, `postgres_plugin` as the postgres module's.
/// Takes the superuser's hand-over out of a postgres manifest's `adopts`: for a test plugin
/// that runs as `postgres` to show something else and leaves the hand-over out of its plan on
/// purpose, which the rule `credential-never-replaced` would otherwise stop in preflight (with
/// [`unlink_store_credential`], since the bundle says the store runs with it).
pub fn undeclare_handover(manifest: &mut Value) {
    for adoption in manifest["adopts"].as_array_mut().into_iter().flatten() {
        let adoption = adoption.as_object_mut().unwrap();
        adoption.remove("credential");
        adoption.remove("secret");
    }
}

/// Takes out of a foundation bundle the credential its store runs with: with
/// [`undeclare_handover`], what makes the superuser's hand-over nobody's business.
pub fn unlink_store_credential(foundation: &mut Value) {
    for resource in foundation["resources"].as_array_mut().into_iter().flatten() {
        resource.as_object_mut().unwrap().remove("credentials");
    }
}

/// [`undeclare_handover`] and [`unlink_store_credential`] on a catalogue on disk.
pub fn undeclare_handover_in(catalogue: &Path) {
    let path = catalogue.join("modules/postgres/manifest.json");
    let mut manifest = read_json(&path);
    undeclare_handover(&mut manifest);
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    let path = catalogue.join("foundation.json");
    let mut foundation = read_json(&path);
    unlink_store_credential(&mut foundation);
    std::fs::write(&path, serde_json::to_vec_pretty(&foundation).unwrap()).unwrap();
}

pub fn example_catalogue(postgres_plugin: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = root().join("catalogue");
    std::fs::copy(from.join("foundation.json"), dir.path().join("foundation.json")).unwrap();
    std::fs::create_dir_all(dir.path().join("genesis/credentials")).unwrap();
    std::fs::copy(
        from.join("genesis/credentials/store-superuser"),
        dir.path().join("genesis/credentials/store-superuser"),
    )
    .unwrap();
    for (module, wasm) in [
        ("postgres", postgres_plugin.to_path_buf()),
        ("nats", plugin("adopt_nats")),
        ("mesh-vault", plugin("adopt_mesh_vault")),
    ] {
        let at = dir.path().join("modules").join(module);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::copy(from.join("modules").join(module).join("manifest.json"), at.join("manifest.json")).unwrap();
        std::fs::copy(wasm, at.join("adopt.wasm")).unwrap();
    }
    dir
}

/// An engine with tight limits, for plugins that try to take the machine: a second of
/// guest time, 32 MiB of memory, 200 say lines.
pub fn tight_host() -> &'static PluginHost {
    static HOST: OnceLock<PluginHost> = OnceLock::new();
    HOST.get_or_init(|| {
        let limits =
            Limits { guest_time: Duration::from_secs(1), memory_bytes: 32 << 20, say_lines: 200, ..Limits::default() };
        PluginHost::new(limits).expect("plugin host")
    })
}

/// The genesis superuser the example catalogue ships.
pub const SUPERUSER: &str = "genesis-test-superuser-0b1c2d3e";

/// A catalogue, a foundation, credentials and a mesh, each editable before the run.
pub struct TestMesh {
    pub foundation: Value,
    pub manifests: Vec<(String, Value)>,
    pub plugins: Vec<(String, PathBuf)>,
    pub credentials: Vec<(String, String)>,
    /// Symlinks placed in the credentials directory: (name, target).
    pub credential_links: Vec<(String, PathBuf)>,
    pub options: RunOptions,
    /// Run on [`tight_host`] instead of [`host`].
    pub tight: bool,
    /// Run on this host instead (another set of limits).
    pub host: Option<&'static PluginHost>,
    pub setup: Box<dyn FnOnce(&mut SimSetup)>,
}

/// What a run left behind.
pub struct Ran {
    pub report: RunReport,
    pub mesh: Arc<SimulatedMesh>,
    pub transcript: Arc<Transcript>,
    _dir: tempfile::TempDir,
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

impl TestMesh {
    /// The example catalogue as shipped: adopts cleanly.
    pub fn new() -> TestMesh {
        let catalogue = root().join("catalogue");
        TestMesh {
            foundation: read_json(&catalogue.join("foundation.json")),
            manifests: PHASE_THREE
                .iter()
                .map(|m| (m.to_string(), read_json(&catalogue.join("modules").join(m).join("manifest.json"))))
                .collect(),
            plugins: vec![
                ("postgres".into(), plugin("adopt_postgres")),
                ("nats".into(), plugin("adopt_nats")),
                ("mesh-vault".into(), plugin("adopt_mesh_vault")),
            ],
            credentials: vec![("store-superuser".into(), format!("{SUPERUSER}\n"))],
            credential_links: Vec::new(),
            tight: false,
            host: None,
            options: RunOptions {
                node: "node-1".into(),
                catalog_source: Some(mesh_adopt_runtime::options::CatalogSource {
                    repository: "https://git.mesh.test/catalogue.git".into(),
                    reference: Some("v3".into()),
                }),
                wait: Duration::from_secs(120),
            },
            setup: Box::new(|_| {}),
        }
    }

    /// The manifest of `module`, to edit.
    pub fn manifest(&mut self, module: &str) -> &mut Value {
        &mut self.manifests.iter_mut().find(|(m, _)| m == module).unwrap().1
    }

    /// The foundation resource with `id`, to edit.
    pub fn foundation_resource(&mut self, id: &str) -> &mut Value {
        self.foundation["resources"].as_array_mut().unwrap().iter_mut().find(|r| r["id"] == id).unwrap()
    }

    /// [`undeclare_handover`] on this mesh's postgres manifest, and
    /// [`unlink_store_credential`] on its foundation.
    pub fn handover_undeclared(mut self) -> TestMesh {
        undeclare_handover(self.manifest("postgres"));
        unlink_store_credential(&mut self.foundation);
        self
    }

    /// Runs `module` with another plugin.
    pub fn with_plugin(mut self, module: &str, name: &str) -> TestMesh {
        self.plugins.retain(|(m, _)| m != module);
        self.plugins.push((module.into(), plugin(name)));
        self
    }

    /// Changes the simulated mesh's starting state or behaviour.
    pub fn with_setup(mut self, edit: impl FnOnce(&mut SimSetup) + 'static) -> TestMesh {
        self.setup = Box::new(edit);
        self
    }

    /// Runs phase three's modules, adopting.
    pub async fn run(self) -> Ran {
        self.run_modules(&PHASE_THREE, Mode::Adopt).await
    }

    /// Runs `modules` in `mode`.
    pub async fn run_modules(mut self, modules: &[&str], mode: Mode) -> Ran {
        let dir = tempfile::tempdir().unwrap();
        self.write_catalogue(dir.path());
        let foundation = Foundation::parse(&serde_json::to_vec(&self.foundation).unwrap()).unwrap();
        let mut setup = SimSetup::new(foundation.clone(), &self.options.node);
        let edit = std::mem::replace(&mut self.setup, Box::new(|_| {}));
        edit(&mut setup);
        let mesh = Arc::new(SimulatedMesh::new(setup));
        let transcript = Arc::new(Transcript::default());
        let report = self.run_on(dir.path(), &foundation, mesh.clone(), transcript.clone(), modules, mode).await;
        Ran { report, mesh, transcript, _dir: dir }
    }

    /// Runs `modules` on another mesh (a live one), with the catalogue written to `dir`.
    pub async fn run_live(self, dir: &Path, mesh: Arc<dyn Mesh>, modules: &[&str]) -> (RunReport, Arc<Transcript>) {
        self.write_catalogue(dir);
        let foundation = Foundation::parse(&serde_json::to_vec(&self.foundation).unwrap()).unwrap();
        let transcript = Arc::new(Transcript::default());
        let report = self.run_on(dir, &foundation, mesh, transcript.clone(), modules, Mode::Adopt).await;
        (report, transcript)
    }

    /// Writes the catalogue and the credentials directory under `dir`.
    pub fn write_catalogue(&self, dir: &Path) {
        for (module, manifest) in &self.manifests {
            let at = dir.join("modules").join(module);
            std::fs::create_dir_all(&at).unwrap();
            std::fs::write(at.join("manifest.json"), serde_json::to_vec_pretty(manifest).unwrap()).unwrap();
            if let Some((_, wasm)) = self.plugins.iter().find(|(m, _)| m == module) {
                std::fs::copy(wasm, at.join("adopt.wasm")).unwrap();
            }
        }
        let credentials_dir = dir.join("genesis/credentials");
        std::fs::create_dir_all(&credentials_dir).unwrap();
        for (name, value) in &self.credentials {
            std::fs::write(credentials_dir.join(name), value).unwrap();
        }
        for (name, target) in &self.credential_links {
            std::os::unix::fs::symlink(target, credentials_dir.join(name)).unwrap();
        }
    }

    async fn run_on(
        &self,
        dir: &Path,
        foundation: &Foundation,
        mesh: Arc<dyn Mesh>,
        transcript: Arc<Transcript>,
        modules: &[&str],
        mode: Mode,
    ) -> RunReport {
        let catalogue = Catalogue::at(dir);
        let run = Run::builder(
            self.host.unwrap_or(if self.tight { tight_host() } else { host() }),
            &catalogue,
            foundation,
            mesh,
        )
        .credentials(Arc::new(Credentials::open(&dir.join("genesis/credentials"))))
        .record(transcript)
        .options(self.options.clone())
        .build();
        let modules: Vec<String> = modules.iter().map(|m| m.to_string()).collect();
        run.run(&modules, mode).await
    }
}

impl Ran {
    /// The refusal message of `module`, failing the test if it was not refused.
    pub fn refusal(&self, module: &str) -> &str {
        match self.report.outcome(module) {
            Some(ModuleOutcome::Refused { message, .. }) => message,
            other => panic!("expected `{module}` to be refused, it was {other:?}"),
        }
    }

    /// The failure of `module` (not loaded, or stopped by the sandbox).
    pub fn failure(&self, module: &str) -> &str {
        match self.report.outcome(module) {
            Some(outcome @ (ModuleOutcome::Failed(_) | ModuleOutcome::Unusable(_))) => outcome.problem().unwrap(),
            other => panic!("expected `{module}` to fail, it was {other:?}"),
        }
    }

    /// Which input of `module` preflight found unusable.
    pub fn unusable_input(&self, module: &str) -> mesh_adopt_runtime::report::Input {
        match self.report.outcome(module) {
            Some(ModuleOutcome::Unusable(unusable)) => unusable.input,
            other => panic!("expected `{module}` to be unusable, it was {other:?}"),
        }
    }

    /// Why the sandbox stopped `module`'s plugin, in adopt or in preflight's check.
    pub fn stop_kind(&self, module: &str) -> mesh_adopt_runtime::error::StopKind {
        match self.report.outcome(module) {
            Some(ModuleOutcome::Failed(stopped)) => stopped.kind,
            Some(ModuleOutcome::Unusable(mesh_adopt_runtime::report::Unusable {
                input: mesh_adopt_runtime::report::Input::Stopped(kind),
                ..
            })) => *kind,
            other => panic!("expected `{module}` to be stopped, it was {other:?}"),
        }
    }

    /// Asserts `module` was adopted.
    pub fn assert_adopted(&self, module: &str) {
        assert!(
            matches!(self.report.outcome(module), Some(ModuleOutcome::Adopted(_))),
            "expected `{module}` adopted, it was {:?}\nsaid: {:#?}",
            self.report.outcome(module),
            self.transcript.said(module)
        );
    }

    /// The control-plane commands that reached the mesh, each as one string.
    pub fn commands(&self) -> Vec<String> {
        self.mesh.commands().iter().map(ToString::to_string).collect()
    }

    /// Whether `module` said a line containing `fragment`.
    pub fn said(&self, module: &str, fragment: &str) -> bool {
        self.transcript.said(module).iter().any(|l| l.contains(fragment))
    }

    /// The names of the invariants the run found broken.
    pub fn broken(&self) -> Vec<&'static str> {
        self.report.violations.iter().map(|v| v.rule.as_str()).collect()
    }
}

/// Asserts `text` contains each fragment, showing the text when it does not.
pub fn assert_mentions(text: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(text.contains(fragment), "expected {fragment:?} in:\n{text}");
    }
}

/// The `mesh-adopt` binary as a test runs it: every test that starts the binary starts it
/// here. A builder: `mesh_adopt().args(["check"]).catalogue(dir).output()`. Its standard input
/// is empty, and its standard output and error are captured unless sent elsewhere.
pub fn mesh_adopt() -> Cli {
    Cli {
        args: Vec::new(),
        envs: Vec::new(),
        catalogue: None,
        dir: None,
        stdout: None,
        stderr: None,
        timeout: None,
        terminal: false,
        stdin: None,
    }
}

/// A run of the binary being set up: see [`mesh_adopt`].
pub struct Cli {
    args: Vec<OsString>,
    envs: Vec<(String, OsString)>,
    catalogue: Option<PathBuf>,
    dir: Option<PathBuf>,
    stdout: Option<Stdio>,
    stderr: Option<Stdio>,
    timeout: Option<Duration>,
    terminal: bool,
    stdin: Option<Vec<u8>>,
}

/// How long a spawn waits for a binary that a cargo build beside the tests is replacing.
const BINARY_BACK_WITHIN: Duration = Duration::from_secs(30);

impl Cli {
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Cli {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Cli {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// `--catalogue DIR`, after every other argument, with the compile cache (`DIR/cache`)
    /// and the plan key (`DIR/state`) kept inside it; an [`env`](Cli::env) of either wins.
    pub fn catalogue(mut self, dir: impl AsRef<Path>) -> Cli {
        self.catalogue = Some(dir.as_ref().to_path_buf());
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Cli {
        self.envs.push((key.to_string(), value.as_ref().to_owned()));
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Cli {
        self.dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Standard output to `to` (a file, `Stdio::null()`, `Stdio::inherit()`), not captured.
    /// Gives `bytes` on the binary's standard input, then closes it (else it reads nothing).
    pub fn stdin_bytes(mut self, bytes: impl Into<Vec<u8>>) -> Cli {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn stdout(mut self, to: impl Into<Stdio>) -> Cli {
        self.stdout = Some(to.into());
        self
    }

    /// Standard error to `to`, not captured.
    pub fn stderr(mut self, to: impl Into<Stdio>) -> Cli {
        self.stderr = Some(to.into());
        self
    }

    /// Kills the binary once it has run this long: [`output`](Cli::output) then fails the
    /// test, [`try_output`](Cli::try_output) says so.
    pub fn timeout(mut self, after: Duration) -> Cli {
        self.timeout = Some(after);
        self
    }

    /// Runs the binary on a pseudo-terminal, through `script` (util-linux), whose output is
    /// what the terminal showed.
    pub fn on_a_terminal(mut self) -> Cli {
        self.terminal = true;
        self
    }

    /// The environment set for the run, the catalogue's first.
    fn environment(&self) -> Vec<(String, OsString)> {
        let inside = |name: &str| self.catalogue.as_ref().map(|dir| dir.join(name).into_os_string());
        let mut envs: Vec<(String, OsString)> =
            [("XDG_CACHE_HOME", inside("cache")), ("XDG_STATE_HOME", inside("state"))]
                .into_iter()
                .filter_map(|(key, value)| Some((key.to_string(), value?)))
                .collect();
        envs.extend(self.envs.iter().cloned());
        envs
    }

    /// The binary and its arguments.
    fn argv(&self) -> Vec<OsString> {
        let mut argv = vec![OsString::from(env!("CARGO_BIN_EXE_mesh-adopt"))];
        argv.extend(self.args.iter().cloned());
        if let Some(dir) = &self.catalogue {
            argv.extend([OsString::from("--catalogue"), dir.clone().into_os_string()]);
        }
        argv
    }

    /// The run as a shell line, for messages: `XDG_CACHE_HOME=… mesh-adopt "run" …`.
    pub fn shown(&self) -> String {
        let mut words: Vec<String> = self.dir.iter().map(|dir| format!("cd {dir:?} &&")).collect();
        words.extend(self.environment().iter().map(|(key, value)| format!("{key}={}", value.to_string_lossy())));
        let argv = self.argv();
        words.push(argv[0].to_string_lossy().into_owned());
        words.extend(argv[1..].iter().map(|a| format!("{a:?}")));
        words.join(" ")
    }

    /// Starts the binary, its standard output and error piped unless sent elsewhere.
    pub fn spawn(self) -> Child {
        let shown = self.shown();
        self.start().unwrap_or_else(|e| panic!("cannot start {shown}: {e}"))
    }

    fn start(mut self) -> std::io::Result<Child> {
        let argv = self.argv();
        let mut command = if self.terminal {
            // `script` takes the command as one shell line.
            let line: Vec<String> = argv.iter().map(|a| format!("'{}'", a.to_string_lossy())).collect();
            let mut command = Command::new("script");
            command.args(["--quiet", "--return", "--command", &line.join(" "), "/dev/null"]);
            command
        } else {
            let mut command = Command::new(&argv[0]);
            command.args(&argv[1..]);
            command
        };
        command.envs(self.environment());
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command.stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        command.stdout(self.stdout.take().unwrap_or_else(Stdio::piped));
        command.stderr(self.stderr.take().unwrap_or_else(Stdio::piped));
        let started = Instant::now();
        let mut child = loop {
            match command.spawn() {
                // A cargo build running beside the tests may be replacing the binary for a moment.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && started.elapsed() < BINARY_BACK_WITHIN => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                spawned => break spawned?,
            }
        };
        if let (Some(bytes), Some(mut input)) = (self.stdin.take(), child.stdin.take()) {
            std::thread::spawn(move || {
                use std::io::Write as _;
                let _ = input.write_all(&bytes);
            });
        }
        Ok(child)
    }

    /// Runs the binary to its end: its exit status and what it wrote. Fails the test if it
    /// cannot start or outlives its [`timeout`](Cli::timeout).
    pub fn output(self) -> Output {
        self.try_output().unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`output`](Cli::output), saying why instead of failing the test: it could not
    /// start, or it outlived its timeout (`HANG: …`, with what it had written).
    pub fn try_output(self) -> Result<Output, String> {
        let (shown, timeout) = (self.shown(), self.timeout);
        let mut child = self.start().map_err(|e| format!("cannot start {shown}: {e}"))?;
        let stdout = child.stdout.take().map(drain);
        let stderr = child.stderr.take().map(drain);
        let read = |pipe: Option<std::thread::JoinHandle<Vec<u8>>>| pipe.map(|p| p.join().unwrap()).unwrap_or_default();
        let status = match timeout {
            None => child.wait().unwrap(),
            Some(after) => {
                let started = Instant::now();
                loop {
                    if let Some(status) = child.try_wait().unwrap() {
                        break status;
                    }
                    if started.elapsed() > after {
                        let _ = child.kill();
                        let _ = child.wait();
                        let text = |bytes: Vec<u8>| cut(&String::from_utf8_lossy(&bytes), 4000);
                        return Err(format!(
                            "HANG: still running after {after:?}, killed\ncommand: {shown}\nstdout:\n{}\nstderr:\n{}",
                            text(read(stdout)),
                            text(read(stderr))
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        };
        Ok(Output { status, stdout: read(stdout), stderr: read(stderr) })
    }
}

/// Reads a pipe to its end on a thread of its own, so a child that fills one pipe while
/// nobody reads it is never held up.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// `text` cut to at most `most` bytes (at a character's boundary), saying how long it was.
pub fn cut(text: &str, most: usize) -> String {
    if text.len() <= most {
        return text.to_string();
    }
    let mut end = most;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}
