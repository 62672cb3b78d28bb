"""Container images: build for linux/amd64 (docker buildx or buildah), push to the stacks' ECR repositories and
record what was pushed (``build/manifest-<account>-<region>.json``) for the infra stacks to pin.

``./build_images.py ACCOUNT REGION`` and ``msk-migrate build-images`` are the same click command
(:mod:`msk_migrate.commands.build_images`). Modules: :mod:`.images` (what is built), :mod:`.bases` (their
pinned bases), :mod:`.inputs` (argument validation), :mod:`.gitinfo`, :mod:`.builders` with :mod:`.docker`
and :mod:`.buildah`, :mod:`.ecr_client` and :mod:`.registry` (where images go), :mod:`.manifest`,
:mod:`.runner` (the ordered steps); for this machine: :mod:`.standins`, :mod:`.localregistry`,
:mod:`.localbuild` (``make images``) and :mod:`.rehearsal_image`.
"""
