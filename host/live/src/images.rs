//! Whether the node has the images a run's modules run, as its `images` command answers:
//! asked in preflight for every image, so a node that cannot run one refuses the run before any
//! effect instead of at that module's build, after the modules before it were adopted.
//!
//! The command's contract (docs/operating.md's "The node's images" says it for an operator):
//! read-only; given the node as its `{node}` word and the images asked on its standard input,
//! one a line, it prints one JSON object on its standard output and exits 0:
//!
//! ```json
//! {"node": "node-1", "images": {"localhost/mesh-node/store:15": true, "localhost/mesh-node/bus:2.9-mesh.1": false}}
//! ```
//!
//! - `node`: the node it answers for, which is the node asked;
//! - `images`: every image asked, each once, and no other, with `true` when the node has it
//!   (it can run a container of it now) and `false` when it does not.
//!
//! No other key, and no key twice. Anything else is no answer: the run stops before any effect,
//! naming the command and what is wrong with its answer.

use std::collections::BTreeMap;

use mesh_adopt_runtime::mesh::{MeshError, NodeImages};
use serde::Deserialize;

use crate::LiveMesh;
use crate::templates::Template;

/// The answer as its contract writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    node: String,
    #[serde(deserialize_with = "each_once")]
    images: BTreeMap<String, bool>,
}

/// The `images` object, refused when it gives an image twice: which of the two counts would be
/// up to the reader.
fn each_once<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, bool>, D::Error> {
    struct Once;
    impl<'de> serde::de::Visitor<'de> for Once {
        type Value = BTreeMap<String, bool>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object of images, each `true` or `false`")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut images = BTreeMap::new();
            while let Some((image, present)) = map.next_entry::<String, bool>()? {
                if images.insert(image.clone(), present).is_some() {
                    return Err(serde::de::Error::custom(format!("it gives the image `{image}` twice")));
                }
            }
            Ok(images)
        }
    }
    deserializer.deserialize_map(Once)
}

/// Why an image cannot be asked about on a line of its own: it would be read as two images,
/// or as none.
fn unaskable(image: &str) -> bool {
    image.trim().is_empty() || image.chars().any(|c| c == '\n' || c == '\r')
}

/// Reads an `images` command's answer for `node`, asked about `asked`: the images the node
/// lacks, in the order asked. An error says what is wrong with the answer.
pub fn read_answer(answer: &str, node: &str, asked: &[String]) -> Result<Vec<String>, String> {
    let read: Answer = serde_json::from_str(answer)
        .map_err(|e| format!("it is not one JSON object `{{\"node\", \"images\": {{IMAGE: true|false}}}}`: {e}"))?;
    if read.node != node {
        return Err(format!("it answers for the node `{}`, and the node asked was `{node}`", read.node.escape_debug()));
    }
    if let Some(unasked) = read.images.keys().find(|image| !asked.contains(image)) {
        return Err(format!("it answers for the image `{}`, which was not asked about", unasked.escape_debug()));
    }
    let mut lacks = Vec::new();
    for image in asked {
        match read.images.get(image) {
            Some(true) => {}
            Some(false) => lacks.push(image.clone()),
            None => return Err(format!("it says nothing of the image `{image}`, which was asked about")),
        }
    }
    Ok(lacks)
}

impl LiveMesh {
    /// Asks the node whether it has each of `asked`, when the configuration has an `images`
    /// command; [`NodeImages::Unasked`] when it has none. An image that cannot be written on a
    /// line of its own is one no node has, and is not asked about.
    pub(crate) async fn node_images(&self, node: &str, asked: &[String]) -> Result<NodeImages, MeshError> {
        let Some(command) = &self.config.images else { return Ok(NodeImages::Unasked) };
        let (odd, fit): (Vec<String>, Vec<String>) = asked.iter().cloned().partition(|image| unaskable(image));
        let mut lacks = match fit.is_empty() {
            true => Vec::new(),
            false => self.ask_images(command, node, &fit).await?,
        };
        lacks.extend(odd);
        Ok(if lacks.is_empty() { NodeImages::Present } else { NodeImages::Missing(lacks) })
    }

    /// Runs the `images` command for `node` with `asked` on its standard input, and reads its
    /// answer ([`read_answer`]).
    async fn ask_images(&self, command: &Template, node: &str, asked: &[String]) -> Result<Vec<String>, MeshError> {
        let argv = command.fill(|_| node.to_string());
        let stdin: String = asked.iter().map(|image| format!("{image}\n")).collect();
        let stdout = self.run_ok(&argv, Some(stdin.as_bytes()), self.config.images_timeout).await?;
        read_answer(&stdout, node, asked).map_err(|why| {
            let cut = if stdout.len() >= self.config.output_bytes {
                format!(" (its answer was cut at `output_bytes`, {} bytes)", self.config.output_bytes)
            } else {
                String::new()
            };
            MeshError::Failed(format!(
                "`{}` answered what is not which images node `{node}` has: {why}{cut}",
                argv.join(" ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked() -> Vec<String> {
        vec!["store:15".to_string(), "bus:2.9-mesh.1".to_string()]
    }

    #[test]
    fn the_images_the_node_lacks_are_read_in_the_order_asked() {
        let answer = r#"{"node": "node-1", "images": {"bus:2.9-mesh.1": false, "store:15": true}}"#;
        assert_eq!(read_answer(answer, "node-1", &asked()).unwrap(), ["bus:2.9-mesh.1"]);
        let all = r#"{"node": "node-1", "images": {"bus:2.9-mesh.1": true, "store:15": true}}"#;
        assert!(read_answer(all, "node-1", &asked()).unwrap().is_empty());
    }

    #[test]
    fn an_answer_that_is_not_the_contracts_is_refused_saying_why() {
        for (text, why) in [
            ("", "is not one JSON object"),
            ("[]", "is not one JSON object"),
            (r#"{"images": {}}"#, "missing field `node`"),
            (r#"{"node": "node-1", "images": {}, "extra": 1}"#, "unknown field `extra`"),
            (r#"{"node": "node-2", "images": {}}"#, "answers for the node `node-2`"),
            (r#"{"node": "node-1", "images": {"store:15": true}}"#, "says nothing of the image `bus:2.9-mesh.1`"),
            (
                r#"{"node": "node-1", "images": {"store:15": true, "bus:2.9-mesh.1": true, "x:1": true}}"#,
                "the image `x:1`, which was not asked about",
            ),
            (r#"{"node": "node-1", "images": {"store:15": "yes", "bus:2.9-mesh.1": true}}"#, "invalid type"),
            (
                r#"{"node": "node-1", "images": {"store:15": true, "store:15": true, "bus:2.9-mesh.1": true}}"#,
                "gives the image `store:15` twice",
            ),
        ] {
            let error = read_answer(text, "node-1", &asked()).err().unwrap_or_else(|| panic!("{text} was read"));
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn an_image_no_line_can_carry_is_one_no_node_has() {
        assert!(unaskable("") && unaskable("a\nb") && unaskable("a\r") && unaskable("  "));
        assert!(!unaskable("localhost/mesh-node/store:15"));
    }
}
