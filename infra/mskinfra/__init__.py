"""CDKTF constructs of the migration stack (one stack per environment file).

Pure helpers (no cdktf import, cheap to test): :mod:`.tfjson`, :mod:`.scope`, :mod:`.images`.
The constructs: :mod:`.kms`, :mod:`.network`, :mod:`.msk`, :mod:`.ecr_repositories`, :mod:`.config_bucket`,
:mod:`.discovery`, :mod:`.iam`, :mod:`.ecs`, :mod:`.outputs`, assembled by :mod:`.stack`.
"""
