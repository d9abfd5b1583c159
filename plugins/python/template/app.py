"""The `{{module}}` module: installed by the shared provider sequence. Add its own rules here:
read `ctx.manifest` (parsed by the host: its containers, secrets, adopts and grants) and
`ctx.foundation`, raise `refuse("a-code", "…")` before anything is registered, and do the
module's own step in the function passed to `install`."""

from mesh_adopt import Context, Plan, Plugin, Report, export
from mesh_adopt.host import say
from mesh_adopt.provider import Provider


class {{type}}(Plugin):
    """The `{{module}}` module's adoption rules."""

    def check(self, ctx: Context) -> Plan:
        """What adopting the module would do, changing nothing."""
        return Plan(
            summary=[f"install `{ctx.module}` from the catalogue"],
            commands=Provider(ctx, "").commands(),
        )

    def adopt(self, ctx: Context) -> Report:
        """Installs the module by the provider sequence."""
        Provider(ctx, "").install()
        summary = f"{ctx.module} installed"
        say(summary)
        return Report(summary=summary)


# componentize-py wraps the class this module calls `WitWorld`.
WitWorld = export({{type}})
