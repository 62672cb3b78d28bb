"""Placeholder until the validation job lands."""
import click


@click.command("validate")
def validate() -> None:
    """Prove the target holds the same records as the source (PySpark)."""
    raise click.ClickException("validate is not implemented yet")
