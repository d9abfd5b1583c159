//! An installer's adoption step, embedding the runtime: phase three of the shipped catalogue
//! adopted on the simulated mesh, each module's outcome printed. Run from the project root:
//! `cargo run -p mesh-adopt-embed-example` (after `just build-plugins`).

use std::path::Path;
use std::sync::Arc;

use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::options::CatalogSource;
use mesh_adopt_runtime::{Catalogue, Credentials, Foundation, Limits, Mode, PHASE_THREE, PluginHost, Run, RunOptions};

#[tokio::main]
async fn main() -> anyhow::Result<std::process::ExitCode> {
    let host = PluginHost::new(Limits::default())?;
    let catalogue = Catalogue::at("catalogue");
    let foundation = Foundation::load(Path::new("catalogue/foundation.json"))?;
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
    let source =
        CatalogSource { repository: "https://git.mesh.local/catalogue.git".into(), reference: Some("v3.2.0".into()) };
    let report = Run::builder(&host, &catalogue, &foundation, mesh)
        .credentials(Arc::new(Credentials::open(Path::new("catalogue/genesis/credentials"))))
        .options(RunOptions { catalog_source: Some(source), ..RunOptions::default() })
        .build()
        .run(&PHASE_THREE.map(String::from), Mode::Adopt)
        .await;
    for (module, outcome) in &report.modules {
        println!("{module}: {outcome}");
    }
    Ok(report.exit_code().into())
}
