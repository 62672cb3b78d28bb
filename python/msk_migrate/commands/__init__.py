"""The commands layer: every click command of ``msk-migrate`` and the flow resolution of its options.

The only layer that knows click and the console; each module is one command group (:mod:`.root` the
top-level group and entry point, :mod:`.flow` the options every operator command shares).
"""
