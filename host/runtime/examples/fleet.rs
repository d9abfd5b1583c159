//! Adopts phase three on N simulated meshes concurrently from one process and prints the
//! wall time and the process's peak resident memory: `cargo run --release --example fleet
//! -- 1000 64`. Run once per N, so each figure's peak memory is its own.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mesh_adopt_runtime::CompileCache;
use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::fleet::{Site, adopt_fleet};
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::{Catalogue, Foundation};
use mesh_adopt_runtime::{PHASE_THREE, RunOptions};

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
    let sites: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(100);
    let parallelism: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(64);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue");
    let foundation = Foundation::load(&dir.join("foundation.json"))?;
    let credentials = Arc::new(Credentials::open(&dir.join("genesis/credentials")));
    let cache = tempfile::tempdir()?;
    let host = Arc::new(PluginHost::new(Limits::default())?.with_cache(CompileCache::open(cache.path())?)?);
    // Warm the cache and the linked plugins, as an operator's second run would find them.
    let catalogue = Arc::new(Catalogue::at(&dir));
    for module in PHASE_THREE {
        host.load(&catalogue.module(module)?.plugin_path)?;
    }
    let make_sites = || -> Vec<Site> {
        (0..sites)
            .map(|i| Site {
                name: format!("site-{i}"),
                foundation: foundation.clone(),
                mesh: Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), &format!("node-{i}")))),
                credentials: credentials.clone(),
                options: RunOptions {
                    node: format!("node-{i}"),
                    catalog_source: Some(mesh_adopt_runtime::CatalogSource {
                        repository: "https://git.mesh.local/catalogue.git".into(),
                        reference: None,
                    }),
                    wait: Duration::from_secs(120),
                },
            })
            .collect()
    };
    let modules: Arc<[String]> = PHASE_THREE.iter().map(|m| m.to_string()).collect();
    let started = Instant::now();
    let reports = adopt_fleet(host, catalogue, make_sites(), modules, parallelism).await;
    let wall = started.elapsed();
    let adopted = reports.iter().filter(|(_, r)| r.succeeded()).count();
    println!(
        "sites={sites} parallelism={parallelism} adopted={adopted} wall_ms={:.1} peak_rss_mib={:.1}",
        wall.as_secs_f64() * 1e3,
        peak_rss_mib()
    );
    anyhow::ensure!(adopted == sites, "{} sites were not adopted", sites - adopted);
    Ok(())
}
