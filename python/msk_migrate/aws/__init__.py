"""AWS operations of the runbook that act on the deployed stack (ECS one-off tasks)."""
