//! A run on a mesh an earlier run adopted: the prediction starts from what the control plane
//! and its node hold, so it keeps every container, seals nothing the node holds and says so,
//! and the node does what it said.

use std::sync::Arc;

use mesh_adopt_runtime::PHASE_THREE;
use mesh_adopt_runtime::effect::ContainerEffect;
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::record::transcript::{Entry, Transcript};

use crate::support::TestMesh;

/// The prediction a run recorded.
fn predicted(transcript: &Transcript) -> mesh_adopt_runtime::effect::Prediction {
    transcript
        .events()
        .into_iter()
        .find_map(|e| match e {
            Entry::Predicted { prediction, .. } => Some(prediction),
            _ => None,
        })
        .expect("the run predicted its pushes")
}

#[tokio::test]
async fn a_rerun_on_an_adopted_simulated_mesh_predicts_and_makes_no_change_and_no_seal() {
    let dir = tempfile::tempdir().unwrap();
    let foundation =
        mesh_adopt_runtime::Foundation::parse(&serde_json::to_vec(&TestMesh::new().foundation).unwrap()).unwrap();
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation, "node-1")));
    let (first, ran) = TestMesh::new().run_live(dir.path(), mesh.clone(), &PHASE_THREE).await;
    assert!(first.succeeded(), "{:?}", first.modules);
    assert_eq!(predicted(&ran).sealed(), [("mesh-vault".to_string(), "unseal-key".to_string())]);
    let (sealed, recreations) = (mesh.sealed(), mesh.recreations("mesh-bus"));

    let (again, ran) = TestMesh::new().run_live(dir.path(), mesh.clone(), &PHASE_THREE).await;
    assert!(again.succeeded(), "{:?}\n{:?}", again.modules, again.violations);
    let prediction = predicted(&ran);
    let changed: Vec<String> = prediction
        .changes()
        .iter()
        .filter(|t| !matches!(t.effect, ContainerEffect::Kept { .. }))
        .map(|t| format!("{} {}", t.container, t.effect))
        .collect();
    assert_eq!(changed, Vec::<String>::new());
    assert_eq!(prediction.sealed(), Vec::<(String, String)>::new());
    assert_eq!(
        prediction.held,
        [("postgres".to_string(), "superuser".to_string()), ("mesh-vault".to_string(), "unseal-key".to_string())]
    );
    // And the node did as predicted: no seal, no recreation beyond the first run's.
    assert_eq!((mesh.sealed(), mesh.recreations("mesh-bus")), (sealed, recreations));
}
