"""Users, API keys, usage and the audit log (/v1/admin/*, docs/auth.md).

Mixed into ``Client``; the routes are Xinference 3's database auth where it has them.
"""


def _drop_none(values: dict) -> dict:
    return {k: v for k, v in values.items() if v is not None}


class AdminMethods:
    # Users (scope users:manage)

    def create_user(self, username: str, password: str, permissions=()) -> dict:
        """Creates a database user; answers ``{"id", "username"}``."""
        return self._transport.call("POST", "/v1/admin/users", "create user", json={"username": username, "password": password, "permissions": list(permissions)}, ok=(201,))

    def list_users(self) -> list:
        return self._transport.call("GET", "/v1/admin/users", "list users")

    def get_user(self, user_id: int) -> dict:
        return self._transport.call("GET", f"/v1/admin/users/{int(user_id)}", "get user")

    def update_user(self, user_id: int, permissions=None, enabled=None):
        body = _drop_none({"permissions": None if permissions is None else list(permissions), "enabled": enabled})
        return self._transport.call("PUT", f"/v1/admin/users/{int(user_id)}", "update user", json=body)

    def change_user_password(self, user_id: int, new_password: str):
        return self._transport.call("PUT", f"/v1/admin/users/{int(user_id)}/password", "change password", json={"new_password": new_password})

    def delete_user(self, user_id: int):
        return self._transport.call("DELETE", f"/v1/admin/users/{int(user_id)}", "delete user")

    # API keys (scopes keys:create, keys:read, keys:manage)

    def create_api_key(self, name: str, description=None, owner=None, expires_at=None, model_permissions=None, scopes=None, rpm=None, tpm=None, max_parallel=None, limits=None) -> dict:
        """Creates a key; answers ``{"id", "key", "prefix", "name"}``. The clear ``key``
        is in this answer only: the server keeps a digest and cannot show it again.
        Limits go as ``rpm=``, ``tpm=``, ``max_parallel=``, or as ``limits={...}`` (the
        HTTP body's shape, which ``update_api_key`` takes); the flat ones win."""
        body = _drop_none({
            "name": name,
            "description": description,
            "owner": owner,
            "expires_at": expires_at,
            "model_permissions": None if model_permissions is None else list(model_permissions),
            "scopes": None if scopes is None else list(scopes),
        })
        limits = {**dict(limits or {}), **_drop_none({"rpm": rpm, "tpm": tpm, "max_parallel": max_parallel})}
        if limits:
            body["limits"] = limits
        return self._transport.call("POST", "/v1/admin/keys", "create API key", json=body, ok=(201,))

    def list_api_keys(self, owner=None) -> list:
        return self._transport.call("GET", "/v1/admin/keys", "list API keys", params=_drop_none({"owner": owner}))

    def get_api_key(self, key_id: int) -> dict:
        return self._transport.call("GET", f"/v1/admin/keys/{int(key_id)}", "get API key")

    def update_api_key(self, key_id: int, **changes):
        """Changes any of ``name, description, enabled, expires_at, model_permissions,
        scopes, limits`` (``limits`` a dict of ``rpm, tpm, max_parallel``)."""
        return self._transport.call("PUT", f"/v1/admin/keys/{int(key_id)}", "update API key", json=changes)

    def delete_api_key(self, key_id: int):
        """Revokes the key: it stops working at once."""
        return self._transport.call("DELETE", f"/v1/admin/keys/{int(key_id)}", "revoke API key")

    revoke_api_key = delete_api_key

    # Reports

    def get_usage(self, key_id=None, model=None, start=None, end=None) -> list:
        """Rows of ``{key_id, model, hour, requests, prompt_tokens, completion_tokens, errors}``."""
        params = _drop_none({"key_id": key_id, "model": model, "from": start, "to": end})
        return self._transport.call("GET", "/v1/admin/usage", "get usage", params=params)

    def list_audit_events(self, limit: int = 100, actor=None, action=None) -> list:
        params = _drop_none({"limit": limit, "actor": actor, "action": action})
        return self._transport.call("GET", "/v1/admin/audit", "list audit events", params=params)
