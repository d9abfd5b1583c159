//! Phase three's rules written natively in Rust against the same `Mesh` trait the plugins
//! reach through the host: the baseline a plugin's overhead is measured against. It makes
//! the same calls in the same order (a test in `tests/it/native_baseline.rs` holds it to
//! that), without the sandbox, the grants or the transcript. Like a run, it lets the last
//! push land before it returns, so both pay for the same simulator work.

use std::collections::BTreeMap;
use std::time::Duration;

use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::RunOptions;
use mesh_adopt_runtime::catalogue::FoundationResource;
use mesh_adopt_runtime::manifest::{ModuleManifest, mounts};
use mesh_adopt_runtime::mesh::{Command, Mesh, Payload};
use mesh_adopt_runtime::{Catalogue, Foundation};

const MONITOR: &str = "http://127.0.0.1:8222/healthz";

/// The dependencies one native adoption needs.
pub struct Native<'a> {
    pub catalogue: &'a Catalogue,
    pub foundation: &'a Foundation,
    pub credentials: &'a Credentials,
    pub mesh: &'a dyn Mesh,
    pub options: &'a RunOptions,
}

impl Native<'_> {
    /// Adopts postgres, nats and mesh-vault, stopping at the first refusal, then lets what
    /// the last push does to the node land.
    pub async fn phase_three(&self) -> Result<(), String> {
        self.postgres().await?;
        self.nats().await?;
        self.provider("mesh-vault", &self.manifest("mesh-vault")?.1, async || Ok(())).await?;
        self.mesh.quiesce().await;
        Ok(())
    }

    fn manifest(&self, module: &str) -> Result<(ModuleManifest, Vec<u8>), String> {
        let found = self.catalogue.module(module).map_err(|e| format!("{e:#}"))?;
        Ok((ModuleManifest::parse(&found.manifest).map_err(|e| format!("{e:#}"))?, found.manifest))
    }

    fn container(&self, id: &str) -> Result<(&str, &str, &[String]), String> {
        self.foundation.container(id).ok_or_else(|| format!("the foundation has no container `{id}`"))
    }

    async fn tell(&self, command: Command, timeout: u64) -> Result<String, String> {
        self.mesh.tell(&command, Duration::from_secs(timeout)).await.map_err(|e| format!("`{command}`: {e}"))
    }

    async fn provider(
        &self,
        module: &str,
        manifest: &[u8],
        before_push: impl AsyncFnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let (module, node) = (module.to_string(), self.options.node.clone());
        let remote = format!("/{module}-module.json");
        self.mesh.carry("manifest", Payload::Bytes(manifest.to_vec()), &remote).await.map_err(|e| e.to_string())?;
        self.tell(Command::ModuleAdd { remote }, 60).await?;
        let source = self.options.catalog_source.clone().ok_or("no catalogue source")?;
        let (repository, reference) = (source.repository, source.reference.unwrap_or_else(|| "main".into()));
        self.tell(Command::Build { repository, module: module.clone(), reference }, 1500).await?;
        let _not_fatal = self.tell(Command::ModuleIssue { module: module.clone(), node: node.clone() }, 60).await;
        self.tell(Command::Assign { node: node.clone(), module: module.clone() }, 60).await?;
        self.tell(Command::Prepare { node: node.clone(), module }, 60).await?;
        before_push().await?;
        self.tell(Command::Push { node }, 60).await?;
        Ok(())
    }

    async fn postgres(&self) -> Result<(), String> {
        let (manifest, bytes) = self.manifest("postgres")?;
        let (name, image, _) = self.container("store")?;
        let server = manifest.resolved_containers().into_iter().find(|c| c.name == name).ok_or("no store container")?;
        if server.image != image {
            return Err(format!("image drift: {} vs {image}", server.image));
        }
        self.credentials.read("store-superuser").map_err(|e| e.to_string())?;
        self.provider("postgres", &bytes, async || {
            let secret = self.credentials.read("store-superuser").map_err(|e| e.to_string())?;
            self.mesh
                .carry("superuser", Payload::Secret(secret), "/accepting-superuser")
                .await
                .map_err(|e| e.to_string())?;
            let accept = Command::SecretAccept {
                node: self.options.node.clone(),
                module: "postgres".into(),
                secret: "superuser".into(),
                from: "/accepting-superuser".into(),
            };
            self.tell(accept, 60).await?;
            Ok(())
        })
        .await
    }

    async fn nats(&self) -> Result<(), String> {
        let (manifest, bytes) = self.manifest("nats")?;
        let (name, image, volumes) = self.container("broker")?;
        let containers = manifest.resolved_containers();
        let [server] = containers.as_slice() else { return Err("not exactly one container".into()) };
        let users = self
            .foundation
            .resources
            .iter()
            .find_map(|r| match r {
                FoundationResource::File { id, path } if id == "bus-accounts" => Some(path.as_str()),
                _ => None,
            })
            .unwrap_or("");
        let layout = |container: &str, volumes: &[String], users: &str| -> Vec<String> {
            let at: BTreeMap<String, String> = mounts(volumes);
            let get = |inside: &str| at.get(inside).cloned().unwrap_or_default();
            vec![container.into(), get("/data"), get("/etc/nats"), get("/tls"), users.into()]
        };
        let theirs = layout(&server.name, &server.volumes, &manifest.bus_users);
        let ours = layout(name, volumes, users);
        let differences = theirs.iter().zip(&ours).filter(|(t, o)| t.is_empty() || t != o).count();
        if differences > 0 {
            return Err(format!("{differences} layout fields differ"));
        }
        self.provider("nats", &bytes, async || {
            let _running = self.mesh.inspect(&self.options.node, name).await;
            Ok(())
        })
        .await?;
        let deadline = self.mesh.now() + self.options.wait;
        loop {
            let running = self.mesh.inspect(&self.options.node, name).await.ok().flatten().map(|c| c.image);
            let running = running.unwrap_or_default();
            if !running.is_empty()
                && running != image
                && let Ok(response) = self.mesh.fetch(MONITOR).await
                && response.status == 200
            {
                return Ok(());
            }
            if self.mesh.now() >= deadline {
                return Err(format!("the bus did not come back: {running}"));
            }
            self.mesh.sleep(Duration::from_secs(2)).await;
        }
    }
}
