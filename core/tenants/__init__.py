"""Many workspaces and servers, each a *tenant* (`slack:<team>` or `discord:<guild>`).

secrets.py        SecretBox: Fernet encryption under COUNCIL_SECRET_KEY (MultiFernet, rotation)
installations.py  Slack installations and OAuth states on our database (slack_sdk's async store interfaces)
keys.py           a tenant's own provider key, endpoint and line-up, stored encrypted; its budget
routing.py        which provider router a council uses: its tenant's, else the operator's
service.py        Tenants: what the service offers adapters and the CLI (service.tenants)
"""

from core.tenants.service import Tenants, tenant_of

__all__ = ["Tenants", "tenant_of"]
