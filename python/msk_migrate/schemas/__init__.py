"""Schema Registry migration: read every subject, version, id, type, reference, compatibility and mode of one
registry through the Confluent API, plan what the other registry lacks, and write it there keeping every id
and version (``msk-migrate schemas plan|copy|verify``; docs/schemas.md).

Modules: :mod:`.model` (what a registry holds), :mod:`.canonical` (when two schema texts are the same
schema), :mod:`.client` (HTTP, auth, one-line errors), :mod:`.export` (an Apicurio registry's whole inventory in one
request), :mod:`.reader` (inventory through the Confluent API), :mod:`.renames` (a renamed topic's subjects, pure),
:mod:`.planner` (pure: inventories -> plan), :mod:`.apicurio_import` (Apicurio's import archive), :mod:`.writers` (the target's
id-keeping route, chosen by probing), :mod:`.operations` (the commands' Outcomes).
"""
