"""Runbook commands (preflight, offsets, rehearse) — being written."""
import click


@click.command("preflight")
def preflight() -> None:
    """Check both clusters before replication starts."""
    raise click.ClickException("not implemented yet")


@click.command("offsets")
def offsets() -> None:
    """Verify translated consumer-group offsets on the target."""
    raise click.ClickException("not implemented yet")


@click.command("rehearse")
def rehearse() -> None:
    """Run the local migration rehearsal end to end."""
    raise click.ClickException("not implemented yet")
