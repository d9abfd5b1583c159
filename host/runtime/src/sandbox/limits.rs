//! Bounds on one plugin run, so a plugin cannot take the installer's memory, time or output.

use std::time::Duration;

/// Limits applied to every plugin run; the defaults suit phase three's plugins with room.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Linear memory a plugin may grow to.
    pub memory_bytes: usize,
    /// Time the plugin's own code may run, not counting time spent waiting on host calls
    /// (a build can take twenty minutes; a plugin's logic takes milliseconds).
    pub guest_time: Duration,
    /// Time one export call (`check`, `adopt`) may take in all, whatever it waits on: host
    /// calls, `clock.sleep`, a WASI sleep or poll. Measured on the mesh's clock: virtual on
    /// the simulator, real on a live mesh. The default covers the longest legitimate wait of
    /// phase three with room: a build told with up to 1500 s, then a push and the bus's
    /// `--wait` (120 s by default), then the commands around them. `Duration::MAX`: none.
    pub wall_time: Duration,
    /// Real time one export call may spend in WASI sleeps and polls, all together. A plugin
    /// waits through the contract's `clock.sleep`, which the mesh's clock and the wall deadline
    /// govern; a WASI sleep is a library's or a mistake's, and on a live mesh it would
    /// otherwise hold a call until its wall deadline, an hour by default. On the simulator
    /// such waits take no real time.
    pub wasi_wait: Duration,
    /// The longest a single `tell` may wait, whatever the plugin asks for.
    pub tell_timeout_ceiling: Duration,
    /// The longest a single line said may be; longer lines are cut.
    pub say_line_bytes: usize,
    /// How many lines one run may say before the rest are dropped.
    pub say_lines: usize,
    /// Total size of one `tell`'s arguments.
    pub tell_args_bytes: usize,
    /// How many arguments one `tell` may have; the longest command has eight.
    pub tell_args_count: usize,
    /// How many host calls one export call may make: a wait that polls every few seconds
    /// for twenty minutes makes a few hundred.
    pub host_calls: usize,
    /// How many bytes of text (call arguments and results, lines said) one run may record.
    pub record_bytes: usize,
    /// How much of a fetched body reaches the plugin.
    pub fetch_body_bytes: usize,
    /// How many commands a plan may have; the provider sequence has seven or eight.
    pub plan_commands: usize,
    /// How many lines a plan's summary may have.
    pub plan_summary_lines: usize,
    /// How many plugin instances may be alive at once on one [`crate::PluginHost`]. The engine
    /// keeps a pool of this many memories and stacks, reused from run to run instead of mapped
    /// and unmapped each time; a call beyond it waits until an instance ends (a run waiting on
    /// the mesh holds its instance), so runs spawned past it queue instead of failing.
    pub concurrent_instances: u32,
    /// Core instances one plugin component may create. A Rust plugin needs a handful (its
    /// module and the shims that adapt WASI); a componentize-py one 14; a JavaScript one
    /// more: the default leaves room for them.
    pub core_instances_per_plugin: u32,
    /// Linear memories one plugin component may define; each may grow to `memory_bytes`.
    pub memories_per_plugin: u32,
    /// Tables one plugin component may define.
    pub tables_per_plugin: u32,
    /// Elements any one table of a plugin may hold (a runtime such as CPython's or
    /// SpiderMonkey's has many functions called indirectly).
    pub table_elements: usize,
}

/// The default of [`Limits::wall_time`]: one hour.
pub const DEFAULT_WALL_TIME: Duration = Duration::from_secs(60 * 60);

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            guest_time: Duration::from_secs(10),
            wall_time: DEFAULT_WALL_TIME,
            wasi_wait: Duration::from_secs(60),
            tell_timeout_ceiling: Duration::from_secs(30 * 60),
            say_line_bytes: 4 << 10,
            say_lines: 1_000,
            tell_args_bytes: 64 << 10,
            tell_args_count: 64,
            host_calls: 10_000,
            record_bytes: 16 << 20,
            fetch_body_bytes: 64 << 10,
            plan_commands: 64,
            plan_summary_lines: 64,
            concurrent_instances: 256,
            core_instances_per_plugin: 64,
            memories_per_plugin: 8,
            tables_per_plugin: 64,
            table_elements: 100_000,
        }
    }
}

/// Cuts `text` to at most `bytes` bytes on a character boundary; true when it was cut.
pub fn cut_to(text: &mut String, bytes: usize) -> bool {
    if text.len() <= bytes {
        return false;
    }
    let mut cut = bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    true
}

/// One of the sandbox's limits a plugin ran into, as the engine said it: which, what this host
/// allows, and the engine's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{engine} (this host allows {allowed}; raise limits.{limit})")]
pub struct LimitHit {
    /// The limit, as [`Limits`] names its field.
    pub limit: &'static str,
    /// What this host allows, in words (`2 core instances per plugin`).
    pub allowed: String,
    /// What the engine said.
    pub engine: crate::model::faults::EngineWords,
}

impl LimitHit {
    /// What mends it: the limit raised.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        crate::remedy::Remedy::SetLimit { limit: self.limit.to_string(), must: format!("more than {}", self.allowed) }
    }
}

impl Limits {
    /// The limit the engine's error says was hit, if it is one of the sandbox's: a component
    /// too big for the pool is refused at load, a store that grows past its limits at
    /// instantiation. The engine says which only in its words, so they are what is read.
    pub(crate) fn limit_hit(&self, error: &wasmtime::Error) -> Option<LimitHit> {
        let engine = crate::model::faults::EngineWords::of(error);
        let (limit, allowed) = self.limit_named(engine.text())?;
        Some(LimitHit { limit, allowed, engine })
    }

    /// A plugin's instantiation refused by one of the sandbox's limits, as a stop of kind
    /// [`StopKind::Limit`](crate::model::stop::StopKind::Limit) naming the limit and how to raise
    /// it; any other error as it is.
    pub(crate) fn limit_stop(&self, error: wasmtime::Error) -> wasmtime::Error {
        match self.limit_hit(&error) {
            Some(hit) => crate::model::stop::StopReason::error(crate::model::stop::StopKind::Limit, hit.to_string()),
            None => error,
        }
    }

    /// Which of the sandbox's limits `text` says was hit, and how to raise it.
    pub(crate) fn limit_hint(&self, text: &str) -> Option<String> {
        self.limit_named(text).map(|(limit, allowed)| format!("this host allows {allowed}; raise limits.{limit}"))
    }

    /// The field of the limit `text` says was hit, and what this host allows of it.
    fn limit_named(&self, text: &str) -> Option<(&'static str, String)> {
        let l = self;
        if text.contains("core module instances") || text.contains("instance count too high") {
            Some(("core_instances_per_plugin", format!("{} core instances per plugin", l.core_instances_per_plugin)))
        } else if text.contains("linear memories")
            || text.contains("memory count too high")
            || text.contains("defined memories count")
        {
            Some(("memories_per_plugin", format!("{} memories per plugin", l.memories_per_plugin)))
        } else if text.contains("tables, which exceeds")
            || text.contains("table count too high")
            || text.contains("defined tables count")
        {
            Some(("tables_per_plugin", format!("{} tables per plugin", l.tables_per_plugin)))
        } else if text.contains("minimum element size") {
            Some(("table_elements", format!("{} elements per table", l.table_elements)))
        } else if text.contains("memory does not fit") || text.contains("growing memory") {
            Some(("memory_bytes", format!("each memory {} MiB", l.memory_bytes >> 20)))
        } else if text.contains("concurrent") && text.contains("limit") {
            Some(("concurrent_instances", format!("{} plugins at once", l.concurrent_instances)))
        } else {
            None
        }
    }
}

/// A limit of the sandbox's, named so a caller can say how its user sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitName {
    /// `limits.wall_time`: how long an export call may take, waits included.
    WallTime,
}

impl LimitName {
    /// The field of [`Limits`] it is.
    pub fn field(self) -> &'static str {
        match self {
            LimitName::WallTime => "wall_time",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_a_character_boundary() {
        let mut text = "héllo".to_string();
        assert!(cut_to(&mut text, 2));
        assert_eq!(text, "h");
        assert!(!cut_to(&mut text, 10));
    }
    #[test]
    fn a_pool_limit_hit_is_named_with_the_limit_to_raise() {
        let limits = Limits { concurrent_instances: 1, ..Limits::default() };
        // What wasmtime's pooling allocator says, one message for each limit.
        for (said, named) in [
            (
                "The component transitively contains 70 core module instances, which exceeds",
                "core_instances_per_plugin",
            ),
            ("The component transitively contains 9 Wasm linear memories, which exceeds", "memories_per_plugin"),
            ("defined memories count of 5 exceeds the per-instance limit of 4", "memories_per_plugin"),
            (
                "The component transitively contains 70 tables, which exceeds the configured maximum",
                "tables_per_plugin",
            ),
            ("defined tables count of 5 exceeds the per-instance limit of 4", "tables_per_plugin"),
            ("table index 0 has a minimum element size of 200000 which exceeds the limit of 100000", "table_elements"),
            ("forcing trap when growing memory to 1074855936 bytes", "memory_bytes"),
        ] {
            let hint = limits.limit_hint(said).unwrap_or_default();
            assert!(hint.contains(&format!("raise limits.{named}")), "{said}: {hint}");
        }
        assert_eq!(limits.limit_hint("wasm trap: wasm `unreachable` instruction executed"), None);
    }
}
