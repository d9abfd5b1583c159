//! The engines plugins are compiled for and run on, one per kind of code: its compiler, the
//! pooling allocator sized by the sandbox's limits, epoch interruption with its ticker, and
//! the linker of the WASI the sandbox offers and the contract's imports.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::model::code::CodeKind;
use crate::plugin::functions::FunctionStore;
use crate::plugin::{EngineError, EngineWords};
use crate::sandbox;
use crate::sandbox::limits::Limits;
use crate::sandbox::state::RunState;

/// Memories and tables the pool keeps per plugin slot, on average: a Rust plugin has one
/// memory and a few tables, a componentize-py one more; one plugin may have up to the
/// `limits.*_per_plugin` maximum while others have fewer.
const MEMORIES_PER_SLOT: u32 = 2;
const TABLES_PER_SLOT: u32 = 8;

/// Bytes of each pooled table kept resident between runs: more than a plugin's tables use.
const TABLE_KEEP_RESIDENT: usize = 1 << 20;

/// How often the epoch advances; the guest-time deadline is checked at this grain.
const EPOCH_TICK: Duration = Duration::from_millis(10);
/// One compiler's engine, and the contract's and WASI's imports linked on it: what plugins
/// compiled to one kind of code run on.
pub(super) struct Tier {
    pub(super) engine: Engine,
    pub(super) linker: Linker<RunState>,
}

impl Tier {
    /// An engine compiling to `kind` of code under `limits` (epoch interruption on, a ticker
    /// thread driving it, the pooling allocator sized by the limits), and its linker.
    pub(super) fn build(
        limits: &Limits,
        kind: CodeKind,
        functions: Option<&Arc<FunctionStore>>,
    ) -> Result<Tier, EngineError> {
        let mut config = Config::new();
        match kind {
            CodeKind::Optimised => {
                config.strategy(wasmtime::Strategy::Cranelift);
                // Cranelift's incremental cache: Winch has none.
                if let Some(functions) = functions {
                    config
                        .enable_incremental_compilation(functions.clone())
                        .map_err(|e| EngineError::Build(EngineWords::of(&e)))?;
                }
            }
            CodeKind::Baseline => {
                config.strategy(wasmtime::Strategy::Winch);
            }
        }
        config.epoch_interruption(true);
        // A plugin run instantiates, runs for a millisecond and is dropped: pooling its
        // memory and stack saves an mmap and munmap of each per run.
        let mut pool = PoolingAllocationConfig::default();
        let slots = limits.concurrent_instances.max(1);
        let per_plugin = |n: u32, per_slot: u32| slots.saturating_mul(per_slot.max(1)).max(n);
        pool.total_component_instances(slots)
            .total_core_instances(slots.saturating_mul(limits.core_instances_per_plugin))
            .max_core_instances_per_component(limits.core_instances_per_plugin)
            .total_memories(per_plugin(limits.memories_per_plugin, MEMORIES_PER_SLOT))
            .max_memories_per_component(limits.memories_per_plugin)
            .total_tables(per_plugin(limits.tables_per_plugin, TABLES_PER_SLOT))
            .max_tables_per_component(limits.tables_per_plugin)
            .max_tables_per_module(limits.tables_per_plugin.min(4))
            .max_memories_per_module(limits.memories_per_plugin.clamp(1, 4))
            .table_elements(limits.table_elements)
            .total_stacks(slots)
            .max_memory_size(limits.memory_bytes);
        // Where the kernel can say which pages an instance dirtied (PAGEMAP_SCAN, Linux 6.7),
        // a returned instance's memory and tables stay mapped and only those pages are reset:
        // the next run starts without page faults and nothing is unmapped. Without it,
        // resetting a whole resident memory costs more than the faults it saves.
        if PoolingAllocationConfig::is_pagemap_scan_available() {
            pool.pagemap_scan(wasmtime::Enabled::Yes)
                .linear_memory_keep_resident(limits.memory_bytes)
                .table_keep_resident(TABLE_KEEP_RESIDENT);
        }
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config).map_err(|e| EngineError::Build(EngineWords::of(&e)))?;
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("mesh-adopt-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .map_err(|e| EngineError::Ticker(EngineWords::said(e.to_string())))?;
        let mut linker = Linker::<RunState>::new(&engine);
        sandbox::add_offered_to_linker(&mut linker).map_err(|e| EngineError::Link(EngineWords::of(&e)))?;
        crate::contract::add_to_linker(&mut linker).map_err(|e| EngineError::Link(EngineWords::of(&e)))?;
        Ok(Tier { engine, linker })
    }
}
