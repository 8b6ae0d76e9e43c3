"""Each tenant's webhook secret: the secrets file, and which secret signs whose webhooks.

The secrets file (``OCRGW_WEBHOOK_SECRETS_FILE``) has one line per tenant,
``tenant:whsec_<base64>`` (Standard Webhooks' form of a secret: its key is
the decoded bytes); blank lines and ``#`` comments are allowed.  A line that
cannot be used stops the process at start with a ``BadSecrets`` that names
its number and never repeats the line.

A tenant's webhooks are signed with its own secret only, so that no tenant
can make a webhook that another's receiver takes for its own.  The single
``OCRGW_WEBHOOK_SECRET`` is the ``default`` tenant's (a deployment without
API keys), unless the file names ``default`` too; a tenant with neither
gets unsigned webhooks.
"""

from __future__ import annotations

import base64
import binascii

from jobs.ids import DEFAULT_TENANT, is_tenant
from jobs.line_files import numbered_lines

SECRET_PREFIX = "whsec_"
# Standard Webhooks asks for 24 to 64 random bytes; fewer make a weak HMAC key.
MIN_KEY_BYTES = 24
LINE_SHAPE = "tenant:whsec_<base64>"

Secrets = tuple[tuple[str, str], ...]


class BadSecrets(ValueError):
    """Raised when the secrets file cannot be used; the message never holds a secret."""


def read_secrets_file(path: str) -> Secrets:
    """Every (tenant, secret) of the file at ``path``, in order."""
    secrets: dict[str, tuple[str, int]] = {}
    for number, content in numbered_lines(path, BadSecrets):
        tenant, secret = _parse_line(content, f"line {number}")
        if tenant in secrets:
            raise BadSecrets(f"line {number}: tenant {tenant} is given twice (first on line {secrets[tenant][1]})")
        secrets[tenant] = (secret, number)
    return tuple((tenant, secret) for tenant, (secret, _) in secrets.items())


def _parse_line(line: str, where: str) -> tuple[str, str]:
    tenant, colon, secret = (part.strip() for part in line.partition(":"))
    if not colon or not secret:
        raise BadSecrets(f"{where}: expected {LINE_SHAPE}")
    if not is_tenant(tenant):
        raise BadSecrets(f"{where}: not a tenant name (lower-case letters, digits, '_', '.', '-'; up to 63)")
    if not secret.startswith(SECRET_PREFIX):
        raise BadSecrets(f"{where}: the secret must be whsec_ and base64")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise BadSecrets(f"{where}: the secret must be whsec_ and base64") from None
    if len(key) < MIN_KEY_BYTES:
        raise BadSecrets(f"{where}: the secret must be at least {MIN_KEY_BYTES} bytes")
    return tenant, secret


def secret_for(secrets: Secrets, single: str, tenant: str) -> str:
    """The secret that signs ``tenant``'s webhooks: its own in the file, else for ``default`` the single
    secret; '' (unsigned) for any other."""
    for name, secret in secrets:
        if name == tenant:
            return secret
    return single if tenant == DEFAULT_TENANT else ""


def signing_key(secret: str) -> bytes:
    """The HMAC key of the Standard Webhooks signature: a ``whsec_`` secret's decoded bytes, any other's text."""
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            pass  # a single secret that only looks like one: its text, as for any other
    return secret.encode()
