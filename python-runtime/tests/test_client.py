"""The Python client (hangar_client) against the real server binary and real runtimes
serving tiny real models: launch, chat (streaming too), generate, embeddings, rerank,
flexible infer, terminate, registrations, and errors."""

import json
import time

import pytest

from hangar_client import (
    Client,
    HangarClientError,
    RESTfulChatModelHandle,
    RESTfulEmbeddingModelHandle,
    RESTfulFlexibleModelHandle,
    RESTfulRerankModelHandle,
)
from hangar_server import HangarServer

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


GREEDY = {"temperature": 0, "max_tokens": 8}


def llm_definition(name, llm):
    return {
        "version": 2, "model_name": name, "model_family": "qwen2.5-instruct", "model_lang": ["en"],
        "model_ability": ["chat", "generate"], "context_length": 512,
        "model_specs": [{"model_format": "pytorch", "model_size_in_billions": 1, "quantization": "none", "model_uri": llm["path"]}],
    }


def encoder_spec(encoder):
    return [{"model_format": "pytorch", "quantization": "none", "model_uri": encoder["path"]}]


LAUNCHER = '''
def load(scale=1):
    return scale

def infer(model, values, offset=0):
    return [v * model + offset for v in values]
'''


@pytest.fixture(scope="module")
def server():
    server = HangarServer()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def client(server):
    with Client(server.url) as client:
        yield client


def test_registers_launches_chats_and_terminates_an_llm(client, tiny_llm):
    client.register_model("LLM", json.dumps(llm_definition("tiny-chat", tiny_llm)), persist=False)
    names = {r["model_name"]: r["is_builtin"] for r in client.list_model_registrations("LLM")}
    assert names["tiny-chat"] is False
    assert client.get_model_registration("LLM", "tiny-chat")["model_family"] == "qwen2.5-instruct"
    assert "Transformers" in client.query_engine_by_model_name("tiny-chat")

    uid = client.launch_model(model_name="tiny-chat", model_engine="Transformers", model_uid="chat", n_gpu=None)
    assert uid == "chat"
    assert list(client.list_models()) == ["chat"]
    assert client.describe_model("chat")["model_name"] == "tiny-chat"

    model = client.get_model("chat")
    assert isinstance(model, RESTfulChatModelHandle)
    messages = [{"role": "user", "content": "Hello there"}]
    whole = model.chat(messages, generate_config=GREEDY)
    assert whole["object"] == "chat.completion"
    text = whole["choices"][0]["message"]["content"]

    chunks = list(model.chat(messages, generate_config={**GREEDY, "stream": True}))
    assert len(chunks) > 1
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    streamed = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert streamed == text

    # Leaving a stream early closes it (the server stops that generation); the client goes on working.
    stream = model.chat(messages, generate_config={"max_tokens": 64, "stream": True})
    assert next(stream)["object"] == "chat.completion.chunk"
    stream.close()
    assert model.chat(messages, generate_config=GREEDY)["choices"][0]["message"]["content"] == text

    completion = model.generate("Once upon a time", generate_config=GREEDY)
    streamed = "".join(c["choices"][0]["text"] for c in model.generate("Once upon a time", generate_config={**GREEDY, "stream": True}) if c["choices"])
    assert streamed == completion["choices"][0]["text"]

    client.terminate_model("chat")
    assert client.list_models() == {}
    with pytest.raises(HangarClientError) as err:
        client.terminate_model("chat")
    assert err.value.status == 404
    assert err.value.code == "model_not_found"
    assert isinstance(err.value, RuntimeError)
    assert str(err.value) == "Failed to terminate model, detail: Model not found in the model list, uid: chat"

    client.unregister_model("LLM", "tiny-chat")
    assert "tiny-chat" not in {r["model_name"] for r in client.list_model_registrations("LLM")}


def test_embeddings_with_launch_progress(client, tiny_embedder):
    definition = {"model_name": "tiny-embed", "dimensions": tiny_embedder["dimensions"], "max_tokens": tiny_embedder["max_tokens"],
                  "language": ["en"], "model_specs": encoder_spec(tiny_embedder)}
    client.register_model("embedding", json.dumps(definition), persist=False)
    uid = client.launch_model(model_name="tiny-embed", model_type="embedding", model_uid="embed", wait_ready=False)
    assert uid == "embed"
    deadline = time.monotonic() + 120
    while True:
        [info] = client.get_instance_info(model_name="tiny-embed", model_uid="embed")
        if info["status"] != "CREATING" or time.monotonic() > deadline:
            break
        assert 0 <= client.get_launch_model_progress("embed")["progress"] <= 1
        time.sleep(0.2)
    assert info["status"] == "READY"
    assert client.get_launch_model_progress("embed")["progress"] == 1

    model = client.get_model("embed")
    assert isinstance(model, RESTfulEmbeddingModelHandle)
    one = model.create_embedding("write a poem.")
    assert len(one["data"]) == 1
    assert len(one["data"][0]["embedding"]) == tiny_embedder["dimensions"]
    many = model.create_embedding(["a", "b c", "d e f", "g"])
    assert [d["index"] for d in many["data"]] == [0, 1, 2, 3]
    client.terminate_model("embed")


def test_rerank(client, tiny_cross_encoder):
    definition = {"model_name": "tiny-rerank", "type": "normal", "max_tokens": tiny_cross_encoder["max_tokens"],
                  "language": ["en"], "model_specs": encoder_spec(tiny_cross_encoder)}
    client.register_model("rerank", definition, persist=False)
    client.launch_model(model_name="tiny-rerank", model_type="rerank", model_uid="rerank")
    model = client.get_model("rerank")
    assert isinstance(model, RESTfulRerankModelHandle)
    documents = ["the quick brown fox", "a lazy dog", "hello world", "stars at night"]
    full = model.rerank(documents, "a fox", return_documents=True, return_len=True)
    scores = [r["relevance_score"] for r in full["results"]]
    assert sorted(scores, reverse=True) == scores
    assert sorted(r["index"] for r in full["results"]) == [0, 1, 2, 3]
    assert all(r["document"]["text"] == documents[r["index"]] for r in full["results"])
    assert full["meta"]["tokens"]["input_tokens"] > 0
    top = model.rerank(documents, "a fox", top_n=2)
    assert [r["index"] for r in top["results"]] == [r["index"] for r in full["results"][:2]]
    client.terminate_model("rerank")


def test_flexible_infer(client, workdir):
    launcher = workdir / "scale_launcher.py"
    launcher.write_text(LAUNCHER)
    client.register_model("flexible", json.dumps({"model_name": "scaler", "model_uri": str(launcher), "launcher": "python",
                                                  "launcher_args": json.dumps({"scale": 3})}), persist=False)
    client.launch_model(model_name="scaler", model_type="flexible", model_uid="scaler")
    model = client.get_model("scaler")
    assert isinstance(model, RESTfulFlexibleModelHandle)
    assert model.infer([1, 2, 5]) == [3, 6, 15]
    assert model.infer([1, 2], offset=1) == [4, 7]
    client.terminate_model("scaler")


def test_errors_carry_status_and_message(client, server):
    with pytest.raises(HangarClientError) as err:
        client.launch_model(model_name="anything")
    assert err.value.status == 400
    assert "model_engine" in err.value.message
    with pytest.raises(HangarClientError) as err:
        client.get_model("missing")
    assert err.value.status == 404
    with pytest.raises(HangarClientError) as err:
        client.register_model("LLM", "{not json", persist=False)
    assert err.value.status == 400
    with pytest.raises(HangarClientError) as err:
        Client("http://127.0.0.1:9")
    assert err.value.status is None
    assert "http://127.0.0.1:9" in err.value.message


def test_audio_and_image_handles_speak_listen_and_read(client):
    """Xinference's audio and image handles, on the engines that need no download:
    espeak-ng speaks, pocketsphinx hears the speech back, tesseract reads an image."""
    import io

    from PIL import Image, ImageDraw, ImageFont

    from hangar_client import RESTfulAudioModelHandle, RESTfulImageModelHandle, RESTfulVideoModelHandle

    for name, model_type, uid in (("espeak-ng", "audio", "tts"), ("pocketsphinx-en-us", "audio", "asr"), ("tesseract-ocr", "image", "ocr")):
        assert client.launch_model(model_name=name, model_type=model_type, model_uid=uid) == uid
    try:
        tts, asr, ocr = client.get_model("tts"), client.get_model("asr"), client.get_model("ocr")
        assert isinstance(tts, RESTfulAudioModelHandle) and isinstance(ocr, RESTfulImageModelHandle)

        # espeak-ng at 150 words a minute; pocketsphinx hears synthetic speech only
        # approximately, so keywords are looked for (as test/integration/media-audio-image.test.ts does).
        spoken = tts.speech("please open the door and turn on the light", voice="en-us", response_format="wav", speed=150 / 175)
        assert spoken[:4] == b"RIFF" and len(spoken) > 22050
        # Without a voice the client sends voice "" (as Xinference's does): the model's default speaks.
        assert tts.speech("hello", response_format="wav")[:4] == b"RIFF"
        # A voice prompt goes as a form, as Xinference's client sends it, and is refused by name.
        with pytest.raises(HangarClientError, match="prompt_speech"):
            tts.speech("hello", response_format="wav", prompt_speech=b"RIFF0000WAVE")
        streamed = b"".join(tts.speech("please open the door", voice="en-us", response_format="wav", stream=True))
        assert streamed[:4] == b"RIFF"
        heard = asr.transcriptions(spoken)
        assert "door" in heard["text"].lower()
        as_text = asr.transcriptions(spoken, response_format="text")
        assert isinstance(as_text, str) and "door" in as_text.lower()

        font = ImageFont.load_default(size=40)
        text = "Hangar reads 42 words"
        image = Image.new("RGB", (int(font.getlength(text)) + 60, 110), "white")
        ImageDraw.Draw(image).text((30, 30), text, fill="black", font=font)
        png = io.BytesIO()
        image.save(png, format="PNG")
        assert ocr.ocr(png.getvalue())["text"] == text

        # A model of the wrong kind for the call: the server's refusal, as a client error.
        with pytest.raises(HangarClientError) as err:
            ocr.text_to_image("a cat")
        assert err.value.status == 400

        # The image-to-image calls' forms, as Xinference's client sends them, pass the
        # server's checks (fields, file names, image format) and reach the model, which
        # has no image2image: diffusers does not install here.
        source = png.getvalue()
        for call in (lambda: ocr.image_to_image(source, "a cat", size="64*64", num_inference_steps=2),
                     lambda: ocr.image_edit(source, "a cat"),
                     lambda: ocr.image_edit([source], "a cat", size="original")):
            with pytest.raises(HangarClientError) as err:
                call()
            assert (err.value.status, err.value.code) == (400, "ability_missing"), err.value.message
        with pytest.raises(HangarClientError) as err:
            ocr.image_edit([source, source], "a cat")
        assert err.value.code == "invalid_field" and "images[]" in err.value.message
        with pytest.raises(ValueError):
            ocr.image_edit([], "a cat")
        video = RESTfulVideoModelHandle("ocr", ocr._transport)
        for call in (lambda: ocr.inpainting(source, source, "a cat"),
                     lambda: video.image_to_video(source, "a cat"),
                     lambda: video.flf_to_video(source, source, "a cat")):
            with pytest.raises(HangarClientError) as err:
                call()
            assert err.value.code == "route_engine_missing" and "diffusers" in err.value.message
    finally:
        for uid in ("tts", "asr", "ocr"):
            client.terminate_model(uid)
