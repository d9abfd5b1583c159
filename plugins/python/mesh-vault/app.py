"""The `mesh-vault` module: nothing to adopt and nothing to carry in. It is installed by the
plain provider sequence and from its first push keeps the export of every operator-sealed
secret on its own disk."""

from mesh_adopt import Context, Plan, Plugin, Report, export
from mesh_adopt.host import say
from mesh_adopt.provider import Provider


class MeshVault(Plugin):
    """Installs `mesh-vault` from the catalogue; genesis raised nothing of it."""

    def check(self, ctx: Context) -> Plan:
        """The plain provider sequence, with nothing adopted."""
        return Plan(
            summary=[f"install `{ctx.module}` from the catalogue; nothing adopted"],
            commands=Provider(ctx, "").commands(),
        )

    def adopt(self, ctx: Context) -> Report:
        """Runs the sequence and says where the sealed export now lives."""
        Provider(ctx, "").install()
        summary = f"{ctx.module} installed: the operator-sealed export lives on this node, outside the store"
        say(summary)
        return Report(summary=summary)


WitWorld = export(MeshVault)
