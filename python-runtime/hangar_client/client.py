"""``Client``: Xinference's RESTful client, method for method, against a Hangar server.

Existing Xinference scripts run after changing one import::

    from hangar_client import Client      # was: from xinference.client import Client
"""

import json
from urllib.parse import quote

from .admin import AdminMethods
from .errors import error_from_response
from .handle_choice import handle_for
from .transport import Transport, json_body


def _path(value) -> str:
    # Xinference builds paths with f-strings, so a uid given as a number worked there too.
    return quote(str(value), safe="")


class Client(AdminMethods):
    def __init__(self, base_url: str, api_key=None, timeout=None):
        """Connects to ``base_url``. ``api_key`` (an ``sk-`` key or a token) is sent only
        when the server has authentication on, as Xinference's client does.
        ``timeout`` (seconds, default none) bounds every HTTP call."""
        self.base_url = base_url.rstrip("/")
        self._transport = Transport(self.base_url, timeout=timeout)
        self._auth = self._cluster_authed()
        if self._auth and api_key is not None:
            self._transport.set_credential(api_key)

    def _cluster_authed(self) -> bool:
        response = self._transport.raw("GET", "/v1/cluster/auth", "check whether authentication is on")
        # A server without the route (404) has no authentication, as Xinference's client assumes.
        if response.status_code == 404:
            return False
        if response.status_code != 200:
            raise error_from_response("check whether authentication is on", response)
        body = json_body(response, "check whether authentication is on")
        return bool(body.get("auth")) if isinstance(body, dict) else False

    def close(self):
        self._transport.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # Authentication

    def login(self, username: str, password: str):
        """POST /token; later calls send the token it returns."""
        if not self._auth:
            return
        body = self._transport.call("POST", "/token", "login", json={"username": username, "password": password})
        self._transport.set_credential(body["access_token"])

    # Running models

    def list_models(self) -> dict:
        """Running models, as a dict uid -> description."""
        body = self._transport.call("GET", "/v1/models", "list models")
        return {item["id"]: item for item in body["data"]}

    def launch_model(
        self,
        model_name: str,
        model_type: str = "LLM",
        model_engine=None,
        model_uid=None,
        model_size_in_billions=None,
        model_format=None,
        quantization=None,
        replica: int = 1,
        n_worker: int = 1,
        n_gpu="auto",
        peft_model_config=None,
        request_limits=None,
        worker_ip=None,
        gpu_idx=None,
        model_path=None,
        enable_thinking=None,
        enable_virtual_env=None,
        virtual_env_packages=None,
        envs=None,
        **kwargs,
    ) -> str:
        """POST /v1/models; returns the model uid. ``wait_ready=False`` returns at once
        (follow with ``get_instance_info`` / ``get_launch_model_progress``); every other
        keyword goes to the engine."""
        wait_ready = kwargs.pop("wait_ready", True)
        if isinstance(model_size_in_billions, float) and model_size_in_billions.is_integer():
            model_size_in_billions = int(model_size_in_billions)
        body = {
            "model_uid": model_uid,
            "model_name": model_name,
            "model_type": model_type,
            "model_engine": model_engine,
            "model_size_in_billions": model_size_in_billions,
            "model_format": model_format,
            "quantization": quantization,
            "replica": replica,
            "n_worker": n_worker,
            "n_gpu": n_gpu,
            "peft_model_config": peft_model_config,
            "request_limits": request_limits,
            "worker_ip": worker_ip,
            "gpu_idx": gpu_idx,
            "model_path": model_path,
            "envs": envs,
        }
        if enable_thinking is not None:
            body["enable_thinking"] = enable_thinking
        if enable_virtual_env is not None:
            body["enable_virtual_env"] = enable_virtual_env
        if virtual_env_packages is not None:
            body["virtual_env_packages"] = virtual_env_packages
        body.update(kwargs)
        params = {"wait_ready": "true" if wait_ready else "false"}
        return self._transport.call("POST", "/v1/models", "launch model", json=body, params=params)["model_uid"]

    def terminate_model(self, model_uid: str):
        self._transport.call("DELETE", f"/v1/models/{_path(model_uid)}", "terminate model")

    def describe_model(self, model_uid: str) -> dict:
        return self._transport.call("GET", f"/v1/models/{_path(model_uid)}", "describe model")

    def get_model(self, model_uid: str):
        """A handle on a running model, by its type: chat/generate for LLMs,
        ``create_embedding``, ``rerank``, ``infer``."""
        return handle_for(self.describe_model(model_uid), model_uid, self._transport)

    def get_launch_model_progress(self, model_uid: str) -> dict:
        return self._transport.call("GET", f"/v1/models/{_path(model_uid)}/progress", "get launch model progress")

    def cancel_launch_model(self, model_uid: str):
        self._transport.call("POST", f"/v1/models/{_path(model_uid)}/cancel", "cancel launch model")

    def get_instance_info(self, model_name: str, model_uid: str) -> list:
        params = {k: v for k, v in (("model_name", model_name), ("model_uid", model_uid)) if v}
        return self._transport.call("GET", "/v1/models/instances", "get instance info", params=params)

    # Registrations

    def register_model(self, model_type: str, model: str, persist: bool, worker_ip=None):
        """``model`` is the definition as a JSON string (Xinference's shape); a dict works too."""
        if not isinstance(model, str):
            model = json.dumps(model)
        body = {"model": model, "persist": persist, "worker_ip": worker_ip}
        self._transport.call("POST", f"/v1/model_registrations/{_path(model_type)}", "register model", json=body)

    def unregister_model(self, model_type: str, model_name: str):
        self._transport.call("DELETE", f"/v1/model_registrations/{_path(model_type)}/{_path(model_name)}", "unregister model")

    def list_model_registrations(self, model_type: str, detailed: bool = False) -> list:
        params = {"detailed": "true" if detailed else "false"}
        return self._transport.call("GET", f"/v1/model_registrations/{_path(model_type)}", "list model registration", params=params)

    def get_model_registration(self, model_type: str, model_name: str) -> dict:
        return self._transport.call("GET", f"/v1/model_registrations/{_path(model_type)}/{_path(model_name)}", "get model registration")

    def query_engine_by_model_name(self, model_name: str, model_type="LLM", enable_virtual_env=None) -> dict:
        path = f"/v1/engines/{_path(model_type)}/{_path(model_name)}" if model_type else f"/v1/engines/{_path(model_name)}"
        params = {} if enable_virtual_env is None else {"enable_virtual_env": "true" if enable_virtual_env else "false"}
        return self._transport.call("GET", path, "query engine by model name", params=params)


    # Registrations from a local folder

    def build_llm_registration(self, model_path: str, model_family=None, model_name=None, register: bool = False,
                               persist: bool = False) -> dict:
        """POST /v1/models/llm/auto-register: a registration read from a save_pretrained
        folder on the server's disk, to review, or registered at once with ``register``."""
        body = {"model_path": model_path, "model_family": model_family, "model_name": model_name, "register": register,
                "persist": persist}
        return self._transport.call("POST", "/v1/models/llm/auto-register", "build a registration", json=body)

    # Replicas of a running model

    def add_model_replica(self, model_uid: str) -> dict:
        """Starts one more replica; answers its record once it is READY."""
        return self._transport.call("POST", f"/v1/models/{_path(model_uid)}/replicas", "add a replica", json={})

    def remove_model_replica(self, model_uid: str, replica_id: int) -> bool:
        """Drains one replica (its calls finish) and stops it; the last one is refused."""
        return self._transport.call("DELETE", f"/v1/models/{_path(model_uid)}/replicas/{int(replica_id)}", "remove a replica")["result"]

    # Request control

    def abort_request(self, model_uid: str, request_id: str, block_duration: int = 30) -> dict:
        """Aborts a request in flight (by its ``x-request-id`` or the ``request_id`` it was
        sent with); answers ``{"msg": "DONE"}`` or ``{"msg": "NOT_FOUND"}``. ``block_duration``
        is accepted for Xinference's signature and ignored."""
        return self._transport.call("POST", f"/v1/models/{_path(model_uid)}/requests/{_path(request_id)}/abort", "abort the request",
                                    json={"block_duration": block_duration})

    def get_request_progress(self, request_id: str) -> float:
        return self._transport.call("GET", f"/v1/requests/{_path(request_id)}/progress", "get the request's progress")["progress"]

    # The weights cache (Xinference's list_cached_models, list_deletable_models,
    # confirm_and_remove_model)

    def list_cached_models(self, model_name=None, worker_ip=None) -> list:
        params = {k: v for k, v in {"model_name": model_name, "worker_ip": worker_ip}.items() if v is not None}
        return self._transport.call("GET", "/v1/cache/models", "list cached models", params=params)["list"]

    def list_deletable_models(self, model_version: str, worker_ip=None) -> dict:
        params = {k: v for k, v in {"model_version": model_version, "worker_ip": worker_ip}.items() if v is not None}
        return self._transport.call("GET", "/v1/cache/models/files", "list the files of a cached model", params=params)

    def confirm_and_remove_model(self, model_version: str, worker_ip=None) -> bool:
        params = {k: v for k, v in {"model_version": model_version, "worker_ip": worker_ip}.items() if v is not None}
        return self._transport.call("DELETE", "/v1/cache/models", "remove a cached model", params=params)["result"]


# Xinference exports the same class under this name too.
RESTfulClient = Client
