//! The `nats` module adopts the bus genesis raised, in place.
//!
//! The bus holds the mesh's streams, so the module must declare it where the bundle raised it:
//! same container name, same streams, configuration and certificate directories, same user
//! list. Otherwise the node-engine would raise a second bus beside the first, or an empty one
//! in its place. The image is the one thing that changes: the module builds its own server
//! image, so the push recreates the bus once onto it, and this waits until it answers.
//!
//! Its own refusal codes, besides the SDK's: `not-one-container`, `bus-layout-differs`,
//! `bus-gone`, `push-not-applied`, `monitor-not-healthy` (docs/writing-a-plugin.md, Refusal
//! codes).

use std::time::Duration;

use mesh_adopt_sdk::foundation;
use mesh_adopt_sdk::grants::Reads;
use mesh_adopt_sdk::host::{fetch, say};
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::wait::{WaitError, container_state, wait_until};
use mesh_adopt_sdk::{Container, Context, Error, Plan, Plugin, Refusal, Report, mounts, refuse};

const BROKER_ID: &str = "broker";
/// The bundle's file resource holding the bus's first user list.
const BUS_USERS_ID: &str = "bus-accounts";
/// Where the server reads each directory inside its container, the same for bundle and module.
const STREAMS_INSIDE: &str = "/data";
const CONF_INSIDE: &str = "/etc/nats";
const CERTIFICATE_INSIDE: &str = "/tls";
/// The bus's health endpoint, published on the node's loopback by bundle and module alike.
const MONITOR: &str = "http://127.0.0.1:8222/healthz";
/// How often the bus is asked again while waiting for it.
const POLL: Duration = Duration::from_millis(2_000);
const BUILD_NOTE: &str = "(the server, adopting the foundation's bus)";

struct Nats;

/// Where a bus lives; compared field by field between bundle and module.
#[derive(Default)]
struct BusLayout {
    container: String,
    streams: String,
    conf: String,
    certificate: String,
    users: String,
}

impl BusLayout {
    fn from_volumes(container: &str, volumes: &[String], users: &str) -> BusLayout {
        let mut at = mounts(volumes);
        let mut take = |inside: &str| at.remove(inside).unwrap_or_default();
        BusLayout {
            container: container.to_string(),
            streams: take(STREAMS_INSIDE),
            conf: take(CONF_INSIDE),
            certificate: take(CERTIFICATE_INSIDE),
            users: users.to_string(),
        }
    }
}

/// The bus, once the module's manifest is known to keep it where the bundle raised it.
fn adoptable_bus(ctx: &Context) -> Result<&Container, Refusal> {
    let module = &ctx.module;
    let manifest = &ctx.manifest;
    let bus = foundation::container(&ctx.foundation, BROKER_ID, "bus", module)?;
    let containers = &manifest.containers;
    let [server] = containers.as_slice() else {
        let declared = if containers.is_empty() {
            "no container".to_string()
        } else {
            let names: Vec<String> = containers.iter().map(|c| format!("`{}`", c.name)).collect();
            format!("{} containers ({})", names.len(), names.join(", "))
        };
        return Err(refuse(
            "not-one-container",
            format!(
                "the `{module}` module declares {declared}; the bus it adopts is one server, so it must \
                 declare exactly one container. Nothing has been registered"
            ),
        ));
    };
    let theirs = BusLayout::from_volumes(&server.name, &server.volumes, &manifest.bus_users);
    let ours = BusLayout::from_volumes(&bus.name, &bus.volumes, foundation::file_path(&ctx.foundation, BUS_USERS_ID));
    let fields = [
        ("the server container".to_string(), &theirs.container, &ours.container),
        (format!("its streams ({STREAMS_INSIDE})"), &theirs.streams, &ours.streams),
        (format!("its configuration ({CONF_INSIDE})"), &theirs.conf, &ours.conf),
        (format!("its certificate ({CERTIFICATE_INSIDE})"), &theirs.certificate, &ours.certificate),
        ("its user list".to_string(), &theirs.users, &ours.users),
    ];
    // A field the module leaves empty differs even from an empty bundle field: the module
    // would then declare nothing for the bus to keep.
    let differences: Vec<String> = fields
        .iter()
        .filter(|(_, module_side, bundle_side)| module_side.is_empty() || module_side != bundle_side)
        .map(|(what, module_side, bundle_side)| {
            format!("{what}: the module's is {module_side:?}, the bundle's {bundle_side:?}")
        })
        .collect();
    if !differences.is_empty() {
        return Err(refuse(
            "bus-layout-differs",
            format!(
                "the bus genesis raised is not where the `{module}` module keeps it:\n - {}\nThe module \
             adopts the bus in place, so the bundle must raise it under the module's name and paths; \
             otherwise a second bus would rise beside the first, or an empty one on other paths. \
             Nothing has been registered",
                differences.join("\n - ")
            ),
        ));
    }
    reads(bus).check(ctx)?;
    Ok(bus)
}

/// What `adopt` reads on the node: the bus, before the push and while waiting, and its monitor.
fn reads(bus: &Container) -> Reads {
    Reads::new().inspect(&bus.name).fetch(MONITOR)
}

/// The image the named container runs, or "" when it is not there or the node cannot say
/// right now. A denied inspect is an error: waiting would only end in a misleading "gone".
fn running_image(name: &str) -> Result<String, Error> {
    Ok(container_state(name)?.map(|s| s.image).unwrap_or_default())
}

/// Waits, bounded by `--wait` and asking at least once, until the bus runs an image other than
/// the bundle's and its monitor answers 200; refuses naming which of the three did not happen.
fn wait_for_adopted_bus(ctx: &Context, bus: &Container) -> Result<(), Refusal> {
    let wait = ctx.options.wait_seconds;
    let mut running = String::new();
    let mut monitor_said = String::new();
    let answered =
        wait_until("the bus to answer on the module's image", Duration::from_secs(wait.into()), POLL, || {
            running = running_image(&bus.name)?;
            if !running.is_empty() && running != bus.image {
                match fetch(MONITOR) {
                    Ok(response) if response.status == 200 => return Ok(Some(())),
                    Ok(response) => monitor_said = format!("HTTP {}: {}", response.status, response.body.trim()),
                    // A monitor that cannot be reached yet is an answer: the bus is still coming up.
                    Err(error) => monitor_said = error.reason(),
                }
            }
            Ok(None)
        });
    match answered {
        Ok(()) => {
            say(&format!("bus answers: {} on {running}", bus.name));
            return Ok(());
        }
        Err(WaitError::Refused(refusal)) => return Err(refusal),
        Err(WaitError::TimedOut(_)) => {}
    }
    let module = &ctx.module;
    let (code, message) = if running.is_empty() {
        (
            "bus-gone",
            format!(
                "the bus container `{}` is gone after the `{module}` module was pushed, so nothing after \
             this step could reach the mesh; the node-engine's journal says why it did not raise it",
                bus.name
            ),
        )
    } else if running == bus.image {
        (
            "push-not-applied",
            format!(
                "`{}` still runs the bundle's image `{}` {wait}s after the `{module}` module was pushed: \
             the node has not applied the push. Its streams are untouched; run this again once the \
             node-engine applies (its journal says why it did not)",
                bus.name, bus.image
            ),
        )
    } else {
        let said = if monitor_said.trim().is_empty() { "(nothing)".to_string() } else { monitor_said };
        (
            "monitor-not-healthy",
            format!(
                "`{}` runs the `{module}` module's image `{running}`, but its monitor ({MONITOR}) did not \
             answer ok within {wait}s: {said}",
                bus.name
            ),
        )
    };
    Err(refuse(code, message))
}

/// What the bus's push does, in the plan's words: recreated once from the bundle's image onto
/// the module's, or kept where it already runs the module's (a re-run). Said of both, not read
/// from the node: a plan is checked again just before its module adopts, after the pushes of
/// the modules before it, and one of those may apply this module (left prepared by a run that
/// stopped short) and move the bus; words read from the node would then differ from the ones
/// reviewed, and the run would refuse a change its own prediction showed. The effect under the
/// plan says which, from the node.
fn restart_line(ctx: &Context, bus: &Container) -> String {
    let module_image = ctx.manifest.containers.first().map_or("", |c| c.image.as_str());
    format!(
        "recreate `{}` once, from `{}` onto the module's image `{module_image}` (kept as it is where it already runs \
         that: a re-run), then wait up to {}s for it to answer",
        bus.name, bus.image, ctx.options.wait_seconds
    )
}

impl Plugin for Nats {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let bus = adoptable_bus(ctx)?;
        Ok(Plan {
            summary: vec![
                format!("adopt `{}` in place: its streams, configuration, certificate and user list kept", bus.name),
                restart_line(ctx, bus),
            ],
            commands: Provider::new(ctx, BUILD_NOTE).commands(Vec::new())?,
        })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let bus = adoptable_bus(ctx)?;
        say(&format!("adopting {}: the bus genesis raised, its streams kept", bus.name));
        Provider::new(ctx, BUILD_NOTE).install(|| {
            let running = running_image(&bus.name)?;
            if !running.is_empty() && running != bus.image {
                say(&format!("already restarted {}: it runs the module's image {running}", bus.name));
            } else {
                say(&format!(
                    "restarting {} once, onto the {} module's image; its streams, users and certificate stay where they are",
                    bus.name, ctx.module
                ));
            }
            Ok(())
        })?;
        wait_for_adopted_bus(ctx, bus)?;
        let summary =
            format!("{} is now the {} module's bus; its user list is the module's from here on", bus.name, ctx.module);
        say(&format!("adopted {summary}"));
        Ok(Report { summary })
    }
}

mesh_adopt_sdk::export!(Nats);
