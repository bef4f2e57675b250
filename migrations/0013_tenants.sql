-- v13: many workspaces (core/tenants). Slack installations made through bolt's OAuth flow, the
-- OAuth flow's state values, each tenant's own provider key and its daily budget.
-- A tenant is `slack:<team or enterprise id>` or `discord:<guild id>`.
-- Tokens and keys are stored encrypted (Fernet under COUNCIL_SECRET_KEY): `data` and `api_key` hold
-- ciphertext only; the plain columns are what a lookup needs. An absent enterprise or team id is
-- '' so that it can be part of a primary key. Times are Unix seconds (DOUBLE PRECISION).
CREATE TABLE slack_oauth_states (
    state TEXT PRIMARY KEY,
    expires_at DOUBLE PRECISION NOT NULL
);
-- The latest bot of each workspace (or organisation, for an org-wide install).
CREATE TABLE slack_bots (
    enterprise_key TEXT NOT NULL,
    team_key TEXT NOT NULL,
    installed_at DOUBLE PRECISION NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (enterprise_key, team_key)
);
-- The latest installation by each installing user (user_key '' for a bot-only one).
CREATE TABLE slack_installations (
    enterprise_key TEXT NOT NULL,
    team_key TEXT NOT NULL,
    user_key TEXT NOT NULL,
    installed_at DOUBLE PRECISION NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (enterprise_key, team_key, user_key)
);
CREATE TABLE tenant_keys (
    tenant TEXT PRIMARY KEY,
    api_key TEXT NOT NULL,
    key_tail TEXT NOT NULL,
    base_url TEXT,
    members TEXT,
    chairman TEXT,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);
CREATE TABLE tenant_budgets (
    tenant TEXT PRIMARY KEY,
    daily_budget_usd DOUBLE PRECISION NOT NULL,
    updated_at TEXT NOT NULL
);
