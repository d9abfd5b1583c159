//! Adopts phase three on N simulated meshes from one process, as docs/embedding.md shows an
//! installer doing it (a run spawned a mesh, at most P in flight at once, `P = 0` for all at
//! once), and prints the wall time and the process's peak resident memory: `cargo run
//! --release --example fleet -- 1000 64`. Run once per N, so each figure's peak memory is its
//! own.

use std::sync::Arc;
use std::time::Instant;

use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::options::parse_catalog_source;
use mesh_adopt_runtime::plugin::CompileCache;
use mesh_adopt_runtime::{Catalogue, Credentials, Foundation, Limits, Mode, PHASE_THREE, PluginHost, Run, RunOptions};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// The process's peak resident set, from the kernel's own count.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN);
    kib / 1024.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let meshes: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(100);
    let in_flight: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(64);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue");
    let foundation = Foundation::load(&dir.join("foundation.json"))?;
    let credentials = Arc::new(Credentials::open(&dir.join("genesis/credentials")));
    let cache = tempfile::tempdir()?;
    let host = Arc::new(PluginHost::cached(Limits::default(), CompileCache::open(cache.path())?)?);
    // Warm the cache and the linked plugins, as an operator's second run would find them.
    let catalogue = Arc::new(Catalogue::at(&dir));
    for module in PHASE_THREE {
        host.load(&catalogue.module(module)?.plugin_path)?;
    }
    let source = parse_catalog_source("https://git.mesh.local/catalogue.git")?;
    let modules: Arc<[String]> = PHASE_THREE.iter().map(|m| m.to_string()).collect();
    let started = Instant::now();
    // docs/embedding.md's pattern: one run a mesh, each spawned with its parts shared, at most
    // `in_flight` of them holding a plugin at once.
    let turns = Arc::new(Semaphore::new(if in_flight == 0 { Semaphore::MAX_PERMITS } else { in_flight }));
    let mut runs = JoinSet::new();
    for i in 0..meshes {
        let node = format!("node-{i}");
        let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), &node)));
        let options = RunOptions { node, catalog_source: Some(source.clone()), ..RunOptions::default() };
        let run = Run::builder(host.clone(), catalogue.clone(), foundation.clone(), mesh)
            .credentials(credentials.clone())
            .options(options)
            .build();
        let (turns, modules) = (turns.clone(), modules.clone());
        runs.spawn(async move {
            let _turn = turns.acquire_owned().await?;
            anyhow::Ok(run.run(&modules, Mode::Adopt).await)
        });
    }
    let mut adopted = 0;
    while let Some(report) = runs.join_next().await {
        adopted += usize::from(report??.succeeded());
    }
    let wall = started.elapsed();
    println!(
        "meshes={meshes} in_flight={in_flight} adopted={adopted} wall_ms={:.1} peak_rss_mib={:.1}",
        wall.as_secs_f64() * 1e3,
        peak_rss_mib()
    );
    anyhow::ensure!(adopted == meshes, "{} meshes were not adopted", meshes - adopted);
    Ok(())
}
