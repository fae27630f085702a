"""Xinference's Python client API (this package's Client) launches a model by its hub id
(docs/registry.md, "Launch by hub id"): `launch_model(model_name="hf.co/<org>/<repo>")`
against a loopback stand-in of the Hugging Face hub, and an unknown id is a 404 error
naming it."""

import json

import pytest

from conftest import fixture_module
from hangar_client import Client
from hangar_client.errors import HangarClientError
from hangar_server import HangarServer


def test_launch_model_by_hub_id():
    # A GGUF repo: the llama.cpp engine starts in a second, where a Transformers runtime takes ten.
    gguf = fixture_module("model_cache").get("gguf")
    standin = fixture_module("hub_standin").HubStandin({"test-org/tiny-GGUF": gguf["dir"]}).start()
    server = HangarServer(env={"HF_HUB_OFFLINE": "", "TRANSFORMERS_OFFLINE": "", "HF_ENDPOINT": standin.url})
    try:
        with Client(server.url) as client:
            uid = client.launch_model(model_name="hf.co/test-org/tiny-GGUF:Q8_0", model_uid="hub", n_gpu=None)
            assert uid == "hub"
            registration = client.get_model_registration("LLM", "test-org--tiny-GGUF")
            assert {s["quantization"] for s in registration["model_specs"]} == {"q8_0", "f32"}
            assert all(s["model_id"] == "test-org/tiny-GGUF" and len(s["model_revision"]) == 40 for s in registration["model_specs"])
            assert "q8_0" in json.dumps(client.describe_model(uid))
            answer = client.get_model(uid).chat(messages=[{"role": "user", "content": "Hi"}], generate_config={"max_tokens": 3})
            assert answer["choices"][0]["message"]["role"] == "assistant"
            with pytest.raises(HangarClientError) as err:
                client.launch_model(model_name="hf.co/test-org/no-such-model")
            assert err.value.status == 404
            assert "test-org/no-such-model" in str(err.value)
            client.terminate_model(uid)
    finally:
        server.stop()
        standin.stop()
