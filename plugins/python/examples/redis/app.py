"""The `redis` module adopts the cache genesis raised, in place, and hands the cache's
password over as its own secret before the push."""

from mesh_adopt import Container, Context, Plan, Plugin, Report, export
from mesh_adopt.foundation import adopt_in_place
from mesh_adopt.grants import Reads
from mesh_adopt.handover import Handover
from mesh_adopt.host import say
from mesh_adopt.provider import Provider
from mesh_adopt.wait import wait_for_image

BUILD_NOTE = "(the server is adopted, not built)"


def cache(ctx: Context) -> Container:
    """The bundle's `cache`, once the manifest declares a container of its name and image."""
    other_image = (
        "a different one would replace the running server and raise a new one on its data. "
        "Pin both to one image"
    )
    return adopt_in_place(ctx, "cache", "cache", other_image)


def password(ctx: Context) -> Handover:
    """Genesis credential `cache-password`, handed over as the module's secret `password`."""
    return Handover(ctx, "password", "cache-password", "the cache's password")


class Redis(Plugin):
    def check(self, ctx: Context) -> Plan:
        server = cache(ctx)
        Reads().inspect(server.name).check(ctx)
        handover = password(ctx)
        handover.check()
        return Plan(
            summary=[
                f"adopt `{server.name}` ({server.image}) in place: kept, not recreated",
                handover.summary(),
            ],
            commands=Provider(ctx, BUILD_NOTE).commands([handover.command()]),
        )

    def adopt(self, ctx: Context) -> Report:
        server = cache(ctx)
        say(f"adopting {server.name}: the cache genesis raised, unchanged")
        Provider(ctx, BUILD_NOTE).install(password(ctx).deliver)
        # Seconds here (or a timedelta), as the context's wait is.
        wait_for_image(server.name, server.image, ctx.options.wait_seconds, 2)
        summary = f"{server.name} is now the {ctx.module} module's cache, kept in place"
        say(f"adopted {summary}")
        return Report(summary=summary)


WitWorld = export(Redis)
