"""Literal text in Terraform strings: template syntax escaped, cdktf tokens kept."""

from mskinfra.tfjson import escape_template, tf_json, unescape_template


def test_literal_template_syntax_is_escaped_and_tokens_are_kept() -> None:
    text = 'password="${env:MM2_SOURCE_SASL_PASSWORD}" %{if} bootstrap=${TfToken[TOKEN.42]}'
    escaped = escape_template(text)
    assert escaped == 'password="$${env:MM2_SOURCE_SASL_PASSWORD}" %%{if} bootstrap=${TfToken[TOKEN.42]}'
    assert unescape_template(escaped) == text


def test_tf_json_substitutes_placeholders_after_rendering() -> None:
    out = tf_json({"b": "${env:X}", "a": "host.invalid:9098"}, {"host.invalid:9098": "${TfToken[TOKEN.7]}"})
    assert out == '{\n  "a": "${TfToken[TOKEN.7]}",\n  "b": "$${env:X}"\n}\n'
