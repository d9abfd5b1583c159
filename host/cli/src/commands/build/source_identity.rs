//! What a component says it was built from: the source identity the JavaScript and Python
//! SDKs' build commands write into it, so a build of an unchanged source keeps the plugin
//! placed before.

/// The name of the custom section the JavaScript and Python SDKs' build commands add to a
/// component: `sha256:<hex>` of everything it was built from.
pub const SOURCE_SECTION: &str = "mesh-adopt:source";

/// What `component` says it was built from: its last [`SOURCE_SECTION`], if it has one.
/// Reads only the framing (wasmparser's, the top level's custom sections); anything that is
/// not framed as a binary has none.
pub fn source_identity(component: &[u8]) -> Option<&str> {
    if !component.starts_with(b"\0asm") {
        return None;
    }
    mesh_adopt_runtime::plugin::top_level_custom_sections(component)?
        .into_iter()
        .rev()
        .filter(|(name, _)| *name == SOURCE_SECTION)
        .find_map(|(_, payload)| std::str::from_utf8(payload).ok().filter(|p| p.starts_with("sha256:")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A component's preamble, then sections of (id, content).
    fn binary(sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        for (id, content) in sections {
            bytes.push(*id);
            let mut size = content.len();
            loop {
                let byte = (size & 0x7f) as u8;
                size >>= 7;
                bytes.push(if size == 0 { byte } else { byte | 0x80 });
                if size == 0 {
                    break;
                }
            }
            bytes.extend(content);
        }
        bytes
    }

    fn custom(name: &str, payload: &str) -> (u8, Vec<u8>) {
        let mut content = vec![name.len() as u8];
        content.extend(name.as_bytes());
        content.extend(payload.as_bytes());
        (0, content)
    }

    #[test]
    fn reads_the_source_section_wherever_it_is_among_the_sections() {
        let identity = format!("sha256:{}", "ab".repeat(32));
        // A core module nested in the component, and sections of other names around it.
        let module = (1, b"\0asm\x01\0\0\0".to_vec());
        let big = custom("other", &"7".repeat(300));
        let component =
            binary(&[module.clone(), big.clone(), custom("x", "y"), custom(SOURCE_SECTION, &identity), big, module]);
        assert_eq!(source_identity(&component), Some(identity.as_str()));
        assert_eq!(source_identity(&binary(&[custom("name", "x")])), None);
    }

    #[test]
    fn a_binary_cut_short_or_not_wasm_has_none() {
        let component = binary(&[custom(SOURCE_SECTION, "sha256:00")]);
        assert!(source_identity(&component).is_some());
        assert_eq!(source_identity(&component[..component.len() - 1]), None);
        assert_eq!(source_identity(b"not wasm"), None);
        assert_eq!(source_identity(&binary(&[custom(SOURCE_SECTION, "md5:00")])), None);
    }
}
