"""An adoption plugin in Python, built with componentize-py against wit/0.1.0/adopter.wit.

It shows that a component from another toolchain fits the sandbox: it loads (14 core
instances, wasi:filesystem and wasi:sockets imported but unused), its prints are kept for
the report, its random numbers and clocks come from the mesh, and its hour-long
`time.sleep` ends at the call's wall deadline.
"""

import random
import time

import wit_world
from wit_world.imports import log, types


class WitWorld(wit_world.WitWorld):
    def check(self, ctx: types.Context) -> types.Plan:
        print(f"python checks {ctx.module}")
        return types.Plan(summary=[f"python plans nothing for {ctx.module}"], commands=[])

    def adopt(self, ctx: types.Context) -> types.Report:
        log.say(f"random: {random.random()}")
        log.say(f"time: {int(time.time())}")
        time.sleep(60 * 60)
        return types.Report(summary="slept an hour")
