//! A mesh wrapped by another that changes only what it says: an installer's audit log, a
//! fault to inject, a command to rewrite. Everything it leaves alone reaches the mesh inside
//! it, the trait's provided methods included, so a wrapper never silently swaps the inner
//! mesh's own `view`, `audit`, clock, seed or lock for a default.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use super::{Audit, Command, ContainerState, Mesh, MeshError, Payload, Response};

/// What a wrapper changes of the mesh inside it. Each method is handed that mesh and, by
/// default, passes the call to it as it is: implement only the ones to change.
///
/// `view` is what preflight predicts from; it follows the inner mesh's unless the layer says
/// otherwise. A layer that changes `inspect` and would have preflight see the mesh through it
/// makes its `view` with [`super::inspected_view`] of `outer`, the layered mesh itself.
#[async_trait]
pub trait Layer: Send + Sync {
    /// Names the wrapped mesh in messages.
    fn summary(&self, inner: &dyn Mesh) -> String {
        inner.summary()
    }

    /// See [`Mesh::carry`].
    async fn carry(&self, inner: &dyn Mesh, name: &str, payload: Payload, remote: &str) -> Result<(), MeshError> {
        inner.carry(name, payload, remote).await
    }

    /// See [`Mesh::tell`].
    async fn tell(&self, inner: &dyn Mesh, command: &Command, timeout: Duration) -> Result<String, MeshError> {
        inner.tell(command, timeout).await
    }

    /// See [`Mesh::inspect`].
    async fn inspect(
        &self,
        inner: &dyn Mesh,
        node: &str,
        container: &str,
    ) -> Result<Option<ContainerState>, MeshError> {
        inner.inspect(node, container).await
    }

    /// See [`Mesh::fetch`].
    async fn fetch(&self, inner: &dyn Mesh, url: &str) -> Result<Response, MeshError> {
        inner.fetch(url).await
    }

    /// See [`Mesh::view`]; `outer` is the layered mesh, whose calls pass through this layer.
    async fn view(
        &self,
        outer: &dyn Mesh,
        inner: &dyn Mesh,
        node: &str,
        containers: &[String],
    ) -> crate::effect::MeshView {
        let _ = outer;
        inner.view(node, containers).await
    }

    /// See [`Mesh::reread`]; `outer` is the layered mesh. Follows the inner mesh's unless the
    /// layer says otherwise: a layer that changes `view` and would have the re-read before a
    /// push see the mesh through it answers with `outer`'s default, [`crate::effect::Reread::of`]
    /// `outer.view(&ahead.node, &ahead.names)`.
    async fn reread(
        &self,
        outer: &dyn Mesh,
        inner: &dyn Mesh,
        ahead: &crate::effect::AheadOfPush,
    ) -> crate::effect::Reread {
        let _ = outer;
        inner.reread(ahead).await
    }
}

/// `inner` with `layer` over it: a [`Mesh`] that is the inner one but for what the layer
/// changes.
pub struct Layered<L> {
    inner: Arc<dyn Mesh>,
    layer: L,
}

impl<L: Layer> Layered<L> {
    /// `layer` over `inner`.
    pub fn new(inner: Arc<dyn Mesh>, layer: L) -> Layered<L> {
        Layered { inner, layer }
    }

    /// The layer, to read what it kept.
    pub fn layer(&self) -> &L {
        &self.layer
    }

    /// The mesh inside.
    pub fn inner(&self) -> &Arc<dyn Mesh> {
        &self.inner
    }
}

#[async_trait]
impl<L: Layer> Mesh for Layered<L> {
    fn summary(&self) -> String {
        self.layer.summary(&*self.inner)
    }

    async fn carry(&self, name: &str, payload: Payload, remote: &str) -> Result<(), MeshError> {
        self.layer.carry(&*self.inner, name, payload, remote).await
    }

    async fn tell(&self, command: &Command, timeout: Duration) -> Result<String, MeshError> {
        self.layer.tell(&*self.inner, command, timeout).await
    }

    async fn inspect(&self, node: &str, container: &str) -> Result<Option<ContainerState>, MeshError> {
        self.layer.inspect(&*self.inner, node, container).await
    }

    async fn fetch(&self, url: &str) -> Result<Response, MeshError> {
        self.layer.fetch(&*self.inner, url).await
    }

    fn now(&self) -> Duration {
        self.inner.now()
    }

    async fn sleep(&self, duration: Duration) {
        self.inner.sleep(duration).await
    }

    fn opened_at(&self) -> SystemTime {
        self.inner.opened_at()
    }

    fn seed(&self) -> Option<u64> {
        self.inner.seed()
    }

    fn restart_time(&self, node: &str) -> Option<Duration> {
        self.inner.restart_time(node)
    }

    fn random_drawn(&self, module: &str) {
        self.inner.random_drawn(module)
    }

    async fn land_pushes(&self, within: Duration) {
        self.inner.land_pushes(within).await
    }

    async fn quiesce(&self) {
        self.inner.quiesce().await
    }

    async fn view(&self, node: &str, containers: &[String]) -> crate::effect::MeshView {
        self.layer.view(self, &*self.inner, node, containers).await
    }

    async fn images(&self, node: &str, images: &[String]) -> Result<super::NodeImages, MeshError> {
        self.inner.images(node, images).await
    }

    async fn reread(&self, ahead: &crate::effect::AheadOfPush) -> crate::effect::Reread {
        self.layer.reread(self, &*self.inner, ahead).await
    }

    fn audit(&self) -> Audit {
        self.inner.audit()
    }

    fn serves(&self, node: &str) -> Result<(), String> {
        self.inner.serves(node)
    }

    async fn lock(&self, holder: &super::lock::LockHolder) -> Result<super::lock::Locking, MeshError> {
        self.inner.lock(holder).await
    }

    async fn unlock(&self, id: &str) -> Result<super::lock::Unlocked, MeshError> {
        self.inner.unlock(id).await
    }

    async fn lock_holder(&self) -> Result<Option<(super::lock::LockHolder, super::lock::LockScope)>, MeshError> {
        self.inner.lock_holder().await
    }

    fn lock_broken(&self) -> Option<super::lock::LockBroken> {
        self.inner.lock_broken()
    }

    fn unlock_blocking(&self, id: &str) -> Result<super::lock::Unlocked, MeshError> {
        self.inner.unlock_blocking(id)
    }
}
