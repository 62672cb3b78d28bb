"""Where the validation job may run besides the stack's EMR Serverless application (``validation``).

The EMR Serverless application is always provisioned (``validate --on emr-serverless``). ``validation.glue``
adds an AWS Glue 5.0 Spark job of the same package (``validate --on glue``): off by default, since it is a
second home with its own network connection and role (docs/validation.md, "AWS Glue 5.x").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

#: Glue's floor for G.1X workers, and a ceiling that keeps a typo off the bill.
GLUE_MIN_WORKERS = 2
GLUE_MAX_WORKERS = 100


class ValidationHomes(BaseModel):
    """The validation job's optional second home."""

    model_config = ConfigDict(extra="forbid")

    glue: bool = Field(False, description="Also provision the validation job as an AWS Glue 5.0 Spark job `<prefix>-validation` "
                       "with its network connection and scoped role (`msk-migrate validate --on glue`).")
    glue_workers: int = Field(GLUE_MIN_WORKERS, ge=GLUE_MIN_WORKERS, le=GLUE_MAX_WORKERS,
                              description="G.1X workers of the Glue job (4 vCPU, 16 GB each; Glue's minimum is 2).")
