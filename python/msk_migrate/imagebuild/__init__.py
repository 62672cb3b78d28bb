"""Container images: build for linux/amd64 with docker buildx, push to the stacks' ECR repositories and
record what was pushed (``build/manifest-<account>-<region>.json``) for the infra stacks to pin.

``./build_images.py ACCOUNT REGION`` and ``msk-migrate build-images`` are the same click command
(:mod:`.cli`). Modules: :mod:`.images` (what is built), :mod:`.inputs` (argument validation),
:mod:`.gitinfo`, :mod:`.docker`, :mod:`.ecr`, :mod:`.manifest`, :mod:`.runner` (the ordered steps).
"""
