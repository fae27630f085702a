"""The Python client against a server with authentication: Xinference's upstream
sequence (test_client_with_auth.py), with the tiny real embedder."""

import json

import pytest

from hangar_client import Client, HangarClientError, RESTfulEmbeddingModelHandle
from hangar_server import HangarServer

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


SECRET = "09d25e094faa6ca2556c818166b7a9563b93f7099f6f0f4caa6cf63b88e8d3e7"
USERS = [
    {"username": "user1", "password": "pass1", "permissions": ["admin"], "api_keys": ["sk-3sjLbdwqAhhAF", "sk-0HCRO1rauFQDL"]},
    {"username": "user2", "password": "pass2", "permissions": ["models:list"], "api_keys": ["sk-72tkvudyGLPMi"]},
    {"username": "user3", "password": "pass3", "permissions": ["models:list", "models:read", "models:start"], "api_keys": ["sk-m6jEzEwmCc4iQ", "sk-ZOTLIY4gt9w11"]},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    config = tmp_path_factory.mktemp("auth") / "auth.json"
    config.write_text(json.dumps({"auth_config": {"algorithm": "HS256", "secret_key": SECRET, "token_expire_in_minutes": 30}, "user_config": USERS}))
    server = HangarServer(args=["--auth-config", str(config)])
    yield server
    server.stop()


def status_of(call):
    with pytest.raises(HangarClientError) as err:
        call()
    return err.value.status


def test_upstream_auth_sequence(server, tiny_embedder):
    definition = {"model_name": "tiny-embed", "dimensions": tiny_embedder["dimensions"], "max_tokens": tiny_embedder["max_tokens"],
                  "language": ["en"], "model_specs": [{"model_format": "pytorch", "quantization": "none", "model_uri": tiny_embedder["path"]}]}
    launch = {"model_name": "tiny-embed", "model_type": "embedding"}

    client = Client(server.url)
    assert status_of(client.list_models) == 401
    Client(server.url, api_key="sk-3sjLbdwqAhhAF").register_model("embedding", json.dumps(definition), persist=False)

    client.login("user2", "pass2")
    assert client.list_models() == {}
    assert status_of(lambda: client.launch_model(**launch)) == 403

    client.login("user3", "pass3")
    assert client.launch_model(**launch) == "tiny-embed"
    model = client.get_model("tiny-embed")
    assert isinstance(model, RESTfulEmbeddingModelHandle)
    assert len(model.create_embedding("write a poem.")["data"][0]["embedding"]) == tiny_embedder["dimensions"]
    assert status_of(lambda: client.terminate_model("tiny-embed")) == 403

    client.login("user1", "pass1")
    assert len(client.list_models()) == 1
    client.terminate_model("tiny-embed")
    assert client.list_models() == {}

    with pytest.raises(HangarClientError) as err:
        Client(server.url).login("user1", "wrong")
    assert (err.value.status, err.value.message) == (401, "Incorrect username or password")

    assert status_of(Client(server.url, api_key="sk-wrongapikey12").list_models) == 401
    user2 = Client(server.url, api_key="sk-72tkvudyGLPMi")
    assert user2.list_models() == {}
    assert status_of(lambda: user2.launch_model(**launch)) == 403

    user3 = Client(server.url, api_key="sk-ZOTLIY4gt9w11")
    assert user3.launch_model(**launch) == "tiny-embed"
    assert len(user3.get_model("tiny-embed").create_embedding("hello")["data"]) == 1
    with pytest.raises(HangarClientError) as err:
        user3.terminate_model("tiny-embed")
    assert err.value.status == 403
    assert err.value.message == "Not enough permissions"

    admin = Client(server.url, api_key="sk-3sjLbdwqAhhAF")
    assert list(admin.list_models()) == ["tiny-embed"]
    admin.terminate_model("tiny-embed")
    assert admin.list_models() == {}


def test_keys_users_and_usage_from_the_client(server, tiny_embedder):
    admin = Client(server.url, api_key="sk-3sjLbdwqAhhAF")
    definition = {"model_name": "tiny-embed-2", "dimensions": tiny_embedder["dimensions"], "max_tokens": tiny_embedder["max_tokens"],
                  "language": ["en"], "model_specs": [{"model_format": "pytorch", "quantization": "none", "model_uri": tiny_embedder["path"]}]}
    admin.register_model("embedding", json.dumps(definition), persist=False)
    assert admin.launch_model(model_name="tiny-embed-2", model_type="embedding", model_uid="e2") == "e2"

    user = admin.create_user("dana", "a long enough password", ["models:list", "models:read", "keys:create"])
    assert user["username"] == "dana"
    assert "dana" in [u["username"] for u in admin.list_users()]

    created = admin.create_api_key("batch", owner="dana", rpm=2, model_permissions=["e2"])
    assert set(created) == {"id", "key", "prefix", "name"}
    keyed = Client(server.url, api_key=created["key"])
    handle = keyed.get_model("e2")
    assert isinstance(handle, RESTfulEmbeddingModelHandle)
    assert len(handle.create_embedding("one")["data"]) == 1
    assert len(handle.create_embedding("two")["data"]) == 1
    with pytest.raises(HangarClientError) as err:
        handle.create_embedding("three")
    assert err.value.status == 429

    [row] = admin.get_usage(key_id=created["id"])
    assert (row["model"], row["requests"], row["errors"]) == ("e2", 3, 1)
    assert [k["name"] for k in admin.list_api_keys(owner="dana")] == ["batch"]
    # limits= as update_api_key takes it (it was a TypeError); a flat one wins over it.
    shaped = admin.create_api_key("shaped", owner="dana", limits={"rpm": 5, "tpm": 100}, tpm=200)
    assert admin.get_api_key(shaped["id"])["limits"] == {"rpm": 5, "tpm": 200, "max_parallel": None}
    admin.delete_api_key(shaped["id"])
    assert any(e["action"] == "key.create" for e in admin.list_audit_events())

    admin.revoke_api_key(created["id"])
    assert status_of(lambda: handle.create_embedding("four")) == 401
    admin.delete_user(user["id"])
    admin.terminate_model("e2")
