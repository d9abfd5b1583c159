//! Which node a live mesh reads. A run acts on one node (`--node`); `inspect` and `state` are
//! told it as their `{node}` word, so the prediction starts from the node the pushes change. A
//! template with no `{node}` answers for one node only, the configuration's `node`, and a run
//! on another node through it is refused before anything moves.

use anyhow::Result;

use crate::{LiveConfig, LiveMesh};

impl LiveConfig {
    /// Refuses a `node` that is no node's name, a `state` that names no command, and a
    /// `{node}` word where nothing fills it in (only `inspect` and `state` are told the node;
    /// the control plane's commands carry it in their own words).
    pub(crate) fn check_node_words(&self) -> Result<()> {
        mesh_adopt_runtime::check_node_name("`node`", &self.node)?;
        anyhow::ensure!(self.state.as_ref().is_none_or(|c| !c.is_empty()), "`state` names no command");
        for (what, command) in [
            ("control", Some(&self.control)),
            ("carry", Some(&self.carry)),
            ("carry_secret", Some(&self.carry_secret)),
            ("lock", self.lock.as_ref()),
            ("unlock", self.unlock.as_ref()),
            ("lock_holder", self.lock_holder.as_ref()),
        ] {
            anyhow::ensure!(
                !command.is_some_and(|words| words.iter().any(|w| w.contains("{node}"))),
                "`{what}` has a `{{node}}` word, which only `inspect` and `state` are given: the control plane's \
                 commands name the node in their own words"
            );
        }
        Ok(())
    }

    /// The commands that answer for one node only, the configuration's `node`: `inspect` and
    /// `state` (when there is one) that have no `{node}` word.
    pub fn one_node_only(&self) -> Vec<&'static str> {
        let blind = |command: &[String]| !command.iter().any(|w| w.contains("{node}"));
        let mut found = Vec::new();
        if blind(&self.inspect) {
            found.push("inspect");
        }
        if self.state.as_deref().is_some_and(blind) {
            found.push("state");
        }
        found
    }
}

impl LiveMesh {
    /// This mesh for runs on `node` (by default the configuration's `node`): `{node}` in
    /// `inspect` and `state` is `node`, so the prediction reads that node's containers and
    /// state. Refused when `inspect` or `state` has no `{node}` word and `node` is not the
    /// configuration's `node`: such a command answers for that node alone, and a prediction
    /// read there would not be of the node the pushes change.
    pub fn on_node(mut self, node: &str) -> Result<LiveMesh> {
        let blind = self.config.one_node_only();
        if node != self.config.node && !blind.is_empty() {
            anyhow::bail!(
                "the run is on node `{node}`, and the live mesh's {} no `{{node}}` word, so {} for node `{}` alone \
                 (its `node`): a prediction read there would not be of the node the pushes change. Give {} a \
                 `{{node}}` word, or set `node = \"{node}\"` in the configuration if that is the node it sees",
                blind.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(" and ")
                    + if blind.len() == 1 { " has" } else { " have" },
                if blind.len() == 1 { "it answers" } else { "they answer" },
                self.config.node,
                if blind.len() == 1 { "it" } else { "each" },
            );
        }
        self.node = node.to_string();
        Ok(self)
    }

    /// The node runs on this mesh act on.
    pub fn node(&self) -> &str {
        &self.node
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_template_without_its_node_word_keeps_a_run_to_the_node_it_sees() {
        let config = LiveConfig { state: Some(words(&["mesh", "state"])), ..LiveConfig::default() };
        assert_eq!(config.one_node_only(), ["inspect", "state"]);
        let error = LiveMesh::new(config.clone()).on_node("node-2").err().unwrap().to_string();
        for fragment in
            ["the run is on node `node-2`", "`inspect` and `state` have no `{node}` word", "for node `node-1` alone"]
        {
            assert!(error.contains(fragment), "{fragment}: {error}");
        }
        assert_eq!(LiveMesh::new(config).on_node("node-1").unwrap().node(), "node-1");
        let told = LiveConfig {
            inspect: words(&["engine", "inspect", "{container}", "--host", "{node}"]),
            state: Some(words(&["mesh", "state", "{node}"])),
            ..LiveConfig::default()
        };
        assert_eq!(told.one_node_only(), Vec::<&str>::new());
        assert_eq!(LiveMesh::new(told).on_node("node-2").unwrap().node(), "node-2");
    }

    #[test]
    fn a_node_word_where_nothing_fills_it_and_a_node_that_is_no_name_are_refused() {
        let control = LiveConfig { control: words(&["mesh", "--on", "{node}"]), ..LiveConfig::default() };
        let error = control.check_node_words().unwrap_err().to_string();
        assert!(error.contains("`control` has a `{node}` word"), "{error}");
        let node = LiveConfig { node: "Node_1".into(), ..LiveConfig::default() };
        let error = node.check_node_words().unwrap_err().to_string();
        assert!(error.contains("`node` `Node_1` cannot be used"), "{error}");
        let empty = LiveConfig { state: Some(vec![]), ..LiveConfig::default() };
        assert!(empty.check_node_words().unwrap_err().to_string().contains("`state` names no command"));
    }
}
