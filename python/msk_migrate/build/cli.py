"""Placeholder until the image build module lands (owned by the images work)."""
import click


@click.command("build-images", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1)
def build_images_cmd(args: tuple[str, ...]) -> None:
    """Build and push the images (see ./build_images.py)."""
    raise click.ClickException("build-images is not implemented yet")
