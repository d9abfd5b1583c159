"""The `postgres` module adopts the store genesis raised, in place.

The node-engine keys containers on their name and compares a spec digest, so the module's
server container must carry the store's name and the very image the foundation runs: anything
else would replace the mesh's memory instead of adopting it. The superuser the store was
created with is carried in before the push, or the push would seal random bytes where a
working password has to be."""

from mesh_adopt import Container, Context, Plan, Plugin, Report, export
from mesh_adopt.foundation import adopt_in_place
from mesh_adopt.handover import Handover
from mesh_adopt.host import say
from mesh_adopt.provider import Provider

#: The bundle's identity for the store.
STORE_ID = "store"
#: What a store on another image would do, and what to do instead.
OTHER_IMAGE = (
    "a different one would tear the mesh's store down and raise a new one on its data. "
    "Pin both to one postgres image"
)
#: The module secret the superuser is delivered as.
SUPERUSER_SECRET = "superuser"
#: The genesis credential holding the store's superuser password.
SUPERUSER_CREDENTIAL = "store-superuser"
SUPERUSER_WHAT = "the store's superuser"
BUILD_NOTE = "(the provisioner; the server is adopted, not built)"


def adoptable_store(ctx: Context) -> Container:
    """The store, once the module's manifest is known to adopt it."""
    return adopt_in_place(ctx, STORE_ID, "store", OTHER_IMAGE)


def superuser(ctx: Context) -> Handover:
    """The superuser genesis made, handed to the module before its push."""
    return Handover(ctx, SUPERUSER_SECRET, SUPERUSER_CREDENTIAL, SUPERUSER_WHAT)


class Postgres(Plugin):
    """Adopts the foundation's store in place and hands its superuser over."""

    def check(self, ctx: Context) -> Plan:
        """Refuses a store the manifest would not adopt in place, or a superuser it could not
        take; otherwise the provider sequence with the superuser accepted before the push."""
        store = adoptable_store(ctx)
        handover = superuser(ctx)
        handover.check()
        return Plan(
            summary=[
                f"adopt `{store.name}` ({store.image}) in place: kept, not recreated",
                handover.summary(),
            ],
            commands=Provider(ctx, BUILD_NOTE).commands([handover.command()]),
        )

    def adopt(self, ctx: Context) -> Report:
        """Installs the module over the store genesis raised, keeping it."""
        store = adoptable_store(ctx)
        say(f"adopting {store.name}: the store genesis raised, unchanged")
        Provider(ctx, BUILD_NOTE).install(superuser(ctx).deliver)
        summary = f"{store.name} is now the {ctx.module} module's store, kept in place"
        say(f"adopted {summary}")
        return Report(summary=summary)


WitWorld = export(Postgres)
