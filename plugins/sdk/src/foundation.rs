//! The foundation bundle genesis produced: finding the servers a module adopts in it.

use crate::{BundleResource, Container, Refusal, refuse};

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
