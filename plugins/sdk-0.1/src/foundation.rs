//! The foundation bundle genesis produced: finding the servers a module adopts in it.

use crate::{BundleResource, Container, Context, Refusal, manifest, refuse};

/// The bundle's identity for a resource.
pub fn identity(resource: &BundleResource) -> &str {
    match resource {
        BundleResource::Container(c) => &c.id,
        BundleResource::File(f) => &f.id,
        BundleResource::Other(o) => &o.id,
    }
}

/// The bundle's kind for a resource, as a refusal would name it.
pub fn kind(resource: &BundleResource) -> &str {
    match resource {
        BundleResource::Container(_) => "container",
        BundleResource::File(_) => "file",
        BundleResource::Other(o) => &o.kind,
    }
}

/// Finds the container the bundle calls `id`, refusing when it is absent (listing what the
/// bundle does declare) or is not a container. `what` names the server for the operator.
pub fn container<'a>(
    foundation: &'a [BundleResource],
    id: &str,
    what: &str,
    module: &str,
) -> Result<&'a Container, Refusal> {
    match foundation.iter().find(|r| identity(r) == id) {
        Some(BundleResource::Container(c)) => Ok(c),
        Some(other) => Err(refuse(format!(
            "the foundation bundle's `{id}` is a {}, not a container: the `{module}` module has no {what} to adopt",
            kind(other)
        ))),
        None => {
            let ids: Vec<&str> = foundation.iter().map(identity).collect();
            let listed = if ids.is_empty() { "nothing".to_string() } else { ids.join(", ") };
            Err(refuse(format!(
                "the foundation bundle has no `{id}`, so there is no {what} for the `{module}` module to adopt; the bundle declares: {listed}"
            )))
        }
    }
}

/// The container the bundle calls `id`, once the module's manifest is known to adopt it in
/// place: it declares a container of the same name, pinned to the same image.
///
/// The node-engine keys containers on their name and compares a spec digest, so any other
/// name raises a second server beside the bundle's and any other image replaces it. Refuses
/// naming both sides; `what` names the server for the operator ("store") and
/// `different_image` says what another image would do and what to do instead, e.g. "a
/// different one would tear the mesh's store down and raise a new one on its data. Pin both
/// to one postgres image".
pub fn adopt_in_place<'a>(
    ctx: &'a Context,
    id: &str,
    what: &str,
    different_image: &str,
) -> Result<&'a Container, Refusal> {
    let module = &ctx.module;
    let declared = manifest::read(module, &ctx.manifest)?;
    let raised = container(&ctx.foundation, id, what, module)?;
    let Some(server) = declared.containers().find(|c| c.name == raised.name) else {
        return Err(refuse(format!(
            "the `{module}` module declares no container named `{}`, so nothing in it adopts the \
             foundation's {what}; its server container must carry the name genesis raised",
            raised.name
        )));
    };
    if server.image != raised.image {
        return Err(refuse(format!(
            "the `{module}` module's container `{}` is pinned to image `{}`, but the foundation's {what} \
             runs `{}`. Adopting in place needs the same image: {different_image}. Nothing has been \
             registered",
            raised.name, server.image, raised.image
        )));
    }
    Ok(raised)
}

/// The path of the file the bundle calls `id`, or "" when it declares none.
pub fn file_path<'a>(foundation: &'a [BundleResource], id: &str) -> &'a str {
    foundation
        .iter()
        .find_map(|r| match r {
            BundleResource::File(f) if f.id == id => Some(f.path.as_str()),
            _ => None,
        })
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Options;

    fn ctx(image: &str, name: &str) -> Context {
        Context {
            module: "postgres".into(),
            manifest: format!(r#"{{"resources":[{{"type":"container","name":"{name}","image":"{image}"}}]}}"#)
                .into_bytes(),
            foundation: vec![BundleResource::Container(Container {
                id: "store".into(),
                name: "mesh-store".into(),
                image: "postgres:16".into(),
                volumes: Vec::new(),
            })],
            options: Options { node: "node-1".into(), catalog_source: None, wait_seconds: 120 },
        }
    }

    #[test]
    fn adopts_the_container_of_the_same_name_and_image() {
        let same = ctx("postgres:16", "mesh-store");
        assert_eq!(adopt_in_place(&same, "store", "store", "x").unwrap().name, "mesh-store");
    }

    #[test]
    fn names_both_sides_of_a_different_name_or_image() {
        let renamed = adopt_in_place(&ctx("postgres:16", "other"), "store", "store", "x").unwrap_err();
        assert!(renamed.message.contains("declares no container named `mesh-store`"), "{}", renamed.message);
        let other = adopt_in_place(&ctx("postgres:17", "mesh-store"), "store", "store", "pin both").unwrap_err();
        assert_eq!(
            other.message,
            "the `postgres` module's container `mesh-store` is pinned to image `postgres:17`, but the \
             foundation's store runs `postgres:16`. Adopting in place needs the same image: pin both. \
             Nothing has been registered"
        );
        let missing = adopt_in_place(&ctx("postgres:16", "mesh-store"), "db", "database", "x").unwrap_err();
        assert!(missing.message.contains("no `db`, so there is no database"), "{}", missing.message);
    }
}
