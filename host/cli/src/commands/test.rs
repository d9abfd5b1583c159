//! `mesh-adopt test`: plugins' scenarios on the simulated mesh, a line each and what differed
//! on failure; with `--sweep`, each run again with every call failed, then timed out, in turn.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;

use crate::args::{CacheArgs, CatalogueArg, CodeArg, CodeArgs};
use crate::exit::ExitStatus;
use crate::output::{Output, Style};
use mesh_adopt_runtime::Catalogue;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::events::OutcomeWord;
use mesh_adopt_testkit as scenario;

/// The arguments of `test`.
#[derive(Debug, Args)]
#[command(mut_arg("catalogue", |arg| arg.help(
    "The catalogue the scenarios start from (its foundation, manifests and plugins) [default: ./catalogue if there \
     is one, else the current directory]"
)))]
pub struct TestArgs {
    /// Scenario files, or directories searched for `scenarios/*.toml` [default: each module's
    /// directory and source, and the catalogue's own `scenarios/`].
    paths: Vec<PathBuf>,
    /// Also show, for each scenario, every line said, every host call and the outcome.
    #[arg(long, short)]
    verbose: bool,
    /// The catalogue the scenarios start from.
    #[command(flatten)]
    catalogue: CatalogueArg,
    /// Also run each scenario with every call failed in turn, then timed out in turn.
    #[arg(long)]
    sweep: bool,
    /// Where compiled plugins are kept, so an unchanged plugin is not compiled again.
    #[command(flatten)]
    cache: CacheArgs,
    /// Which native code plugins run as.
    #[command(flatten)]
    code: CodeArgs,
}

/// The scenarios `test` runs when given no paths: those beside each module of the catalogue
/// and beside its source, and the catalogue's own.
fn default_scenario_paths(catalogue: &Path) -> Vec<PathBuf> {
    let at = Catalogue::at(catalogue);
    let mut paths = Vec::new();
    for module in at.module_names().unwrap_or_default() {
        paths.push(catalogue.join("modules").join(&module));
        if let Ok(source) = super::build::source::locate(&at, &module)
            && source.source.is_dir()
        {
            paths.push(source.source);
        }
    }
    // The catalogue's own `scenarios/`, and not the whole catalogue: a checkout holds other
    // projects' files (a vendored plugin's examples, a copy of another catalogue) whose
    // `scenarios/` are not this catalogue's to run.
    if catalogue.join("scenarios").is_dir() {
        paths.push(catalogue.join("scenarios"));
    }
    paths
}

/// Runs scenarios, a line each; with `--sweep`, sweeps each and reports the figures.
pub async fn test(args: TestArgs) -> Result<ExitStatus> {
    let catalogue = &args.catalogue.dir;
    let paths = if args.paths.is_empty() { default_scenario_paths(catalogue) } else { args.paths.clone() };
    let files = scenario::discover(&paths)?;
    if files.is_empty() && args.paths.is_empty() {
        bail!(
            "no scenarios beside the modules of the catalogue `{}` (none in a `scenarios/` directory beside a \
             module's manifest or its plugin's source, nor in `{}`): run `mesh-adopt test` from the catalogue's \
             top directory, or pass `--catalogue DIR` or the scenarios' paths",
            catalogue.display(),
            catalogue.join("scenarios").display()
        );
    }
    if files.is_empty() {
        bail!(
            "no scenarios under {}",
            paths.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", ")
        );
    }
    warn_of_plugins_older_than_their_source(catalogue);
    // A plugin author runs the scenarios after every change: compiling the unchanged plugins
    // again each time would be most of a quick run.
    let host = args.cache.host(Limits::default(), args.code.policy(CodeArg::Auto))?;
    let (mut passed, mut failed) = (0, 0);
    let mut totals = scenario::SweepResult::default();
    for file in &files {
        let ran = scenario::run(&host, catalogue, file, None).await?;
        let differences = scenario::differences(&file.scenario, &ran);
        // The sweep drives its runs on threads of its own, one a core, and waits for them. A
        // scenario whose sweep found a problem has not passed, whatever its clean run did.
        let swept = match args.sweep {
            true => Some(tokio::task::block_in_place(|| scenario::sweep(&host, catalogue, file))?),
            false => None,
        };
        if differences.is_empty() && swept.as_ref().is_none_or(|swept| swept.problems.is_empty()) {
            passed += 1;
            crate::outln!("ok    {:<40} {}", file.label, file.scenario.name);
            // Passed on the words alone: say so, so no one takes the code as tested.
            if let Some(code) = &file.scenario.expect.code
                && scenario::outcome_of(&ran.report).0 == Some(OutcomeWord::Refused)
                && scenario::refusal_code(&ran.report).is_none()
            {
                crate::outln!(
                    "      code `{code}` not compared: the plugin that refused is built for contract 0.1.0, whose \
                     refusals have none"
                );
            }
        } else {
            failed += 1;
            crate::outln!("FAIL  {:<40} {}", file.label, file.scenario.name);
            for difference in differences {
                crate::outln!("  {}", difference.replace('\n', "\n  "));
            }
        }
        if args.verbose {
            show_scenario_run(&ran);
        }
        if let Some(swept) = swept {
            crate::outln!(
                "      swept {} steps: {} survived, {} did not converge",
                swept.steps,
                swept.survived,
                swept.not_converged
            );
            for problem in &swept.problems {
                crate::outln!("      ✗ {}", problem.replace('\n', "\n        "));
            }
            totals.steps += swept.steps;
            totals.survived += swept.survived;
            totals.not_converged += swept.not_converged;
            totals.problems.extend(swept.problems);
        }
    }
    crate::outln!("\n{passed} passed, {failed} failed");
    if args.sweep {
        crate::outln!(
            "sweep: {} steps swept, {} faults survived, {} runs did not converge",
            totals.steps,
            totals.survived,
            totals.not_converged
        );
    }
    Ok(ExitStatus::of(failed == 0 && totals.problems.is_empty()))
}

/// Says which placed plugins are older than a file of their source: `test` tests the plugin
/// in place, and after an edit, or a build that failed, that is not what the source says.
fn warn_of_plugins_older_than_their_source(catalogue: &Path) {
    let catalogue = Catalogue::at(catalogue);
    let Some(modules) = catalogue.module_names() else { return };
    // A module whose source cannot be found here is `build`'s to report, not this warning's.
    for source in modules.iter().filter_map(|module| super::build::source::locate(&catalogue, module).ok()) {
        if let Some(changed) = super::build::source::changed_since_built(&source) {
            crate::errln!(
                "warning: the `{}` plugin in place (`{}`) is older than `{}`: this tests the plugin as last built; \
                 `mesh-adopt build {}` tests what the source says now",
                source.module,
                source.plugin_path.display(),
                changed.display(),
                source.module
            );
        }
    }
}

/// `test -v`: a scenario's run as `run -v` shows one (lines said, plans, host calls), then
/// each module's outcome.
fn show_scenario_run(ran: &scenario::ScenarioRun) {
    let output = Output::new(Style::Human { verbose: true }, false, None).expect("an output without a record opens");
    for event in ran.transcript.events() {
        output.observe(&event);
    }
    for (module, outcome) in &ran.report.modules {
        crate::outln!("      {module:>10} │ {outcome}");
    }
    crate::outln!("");
}
