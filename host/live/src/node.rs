//! Which node a live mesh reads. A run acts on one node (its options' `node`, `--node`), and
//! every read of the node is told it: `inspect`, `state` and `images` as their `{node}` word,
//! so the prediction starts from the node the pushes change. A template without `{node}` answers for
//! one node only, the configuration's `node`, and a run on another node through it is refused
//! before anything moves.

use crate::LiveMesh;

impl LiveMesh {
    /// Whether a run on `node` can read that node through this mesh: refused when `inspect`,
    /// `state` or `images` has no `{node}` word and `node` is not the configuration's `node`,
    /// since such a command answers for that node alone, and a prediction read there would not
    /// be of the node the pushes change.
    pub(crate) fn serves_node(&self, node: &str) -> Result<(), String> {
        let blind = self.config.one_node_only();
        if node == self.config.node() || blind.is_empty() {
            return Ok(());
        }
        let one = blind.len() == 1;
        Err(format!(
            "the run is on node `{node}`, and the live mesh's {} no `{{node}}` word, so {} for node `{}` alone (its \
             `node`): a prediction read there would not be of the node the pushes change. Give {} a `{{node}}` word, \
             or set `node = \"{node}\"` in the configuration if that is the node it sees",
            crate::templates::listed(&blind.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>())
                + if one { " has" } else { " have" },
            if one { "it answers" } else { "they answer" },
            self.config.node(),
            if one { "it" } else { "each" },
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::{LiveConfig, LiveMesh};

    #[test]
    fn a_template_without_its_node_word_keeps_a_run_to_the_node_it_sees() {
        let config = LiveConfig::from_toml("state = [\"mesh\", \"state\"]\n", Path::new("m.toml")).unwrap();
        let mesh = LiveMesh::new(config);
        let error = mesh.serves_node("node-2").unwrap_err();
        for fragment in
            ["the run is on node `node-2`", "`inspect` and `state` have no `{node}` word", "for node `node-1` alone"]
        {
            assert!(error.contains(fragment), "{fragment}: {error}");
        }
        assert_eq!(mesh.serves_node("node-1"), Ok(()));
        let told = "inspect = [\"engine\", \"inspect\", \"{container}\", \"--host\", \"{node}\"]\n\
                    state = [\"mesh\", \"state\", \"{node}\"]\n";
        let told = LiveMesh::new(LiveConfig::from_toml(told, Path::new("m.toml")).unwrap());
        assert_eq!(told.serves_node("node-2"), Ok(()));
    }
}
