"""The `sklearn` engine against a real runtime and real fitted models."""

import pickle

import joblib
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from harness import ERROR, LOAD_FAILED, RESULT, load_spec


# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


def _data():
    rng = np.random.default_rng(7)
    features = rng.normal(size=(240, 4))
    labels = (features[:, 0] + features[:, 1] > 0).astype(int) + (features[:, 2] > 1.0).astype(int)
    return features, labels


@pytest.fixture
def classifier(workdir):
    features, labels = _data()
    model = LogisticRegression(max_iter=1000).fit(features, labels)
    path = workdir / "classifier.joblib"
    joblib.dump(model, path)
    return model, path, features[:6]


def _ready(spawn, uri):
    runtime = spawn()
    runtime.hello()
    return runtime, runtime.load_ok(load_spec("sklearn", uri))


def test_predict_and_predict_proba_match_the_model(spawn, classifier):
    model, path, rows = classifier
    runtime, ready = _ready(spawn, str(path))
    assert ready["engine"] == "sklearn"
    assert ready["description"]["model_class"] == "sklearn.linear_model._logistic.LogisticRegression"
    assert ready["description"]["n_features_in"] == 4
    assert "predict_proba" in ready["description"]["methods"]

    msg_type, body = runtime.ask(1, rows.tolist())
    assert msg_type == RESULT
    expected = model.predict(rows).tolist()
    assert body["value"] == expected and len(set(model.predict(_data()[0]))) == 3

    msg_type, body = runtime.ask(2, rows.tolist(), method="predict_proba")
    assert msg_type == RESULT
    assert np.allclose(body["value"], model.predict_proba(rows))
    assert all(abs(sum(row) - 1.0) < 1e-9 for row in body["value"])

    msg_type, body = runtime.ask(3, rows.tolist(), method="decision_function")
    assert np.allclose(body["value"], model.decision_function(rows))


def test_file_uri_and_plain_pickle(spawn, workdir, classifier):
    model, _, rows = classifier
    path = workdir / "model with space.pkl"
    path.write_bytes(pickle.dumps(model))
    runtime, _ = _ready(spawn, "file://" + str(path).replace(" ", "%20"))
    assert runtime.ask(1, rows.tolist())[1]["value"] == model.predict(rows).tolist()


def test_transformer_serves_transform_only(spawn, workdir):
    features, _ = _data()
    scaler = StandardScaler().fit(features)
    joblib.dump(scaler, workdir / "scaler.joblib")
    runtime, ready = _ready(spawn, str(workdir / "scaler.joblib"))
    assert ready["description"]["methods"] == ["transform"]
    msg_type, body = runtime.ask(1, features[:2].tolist(), method="transform")
    assert msg_type == RESULT and np.allclose(body["value"], scaler.transform(features[:2]))
    msg_type, body = runtime.ask(2, features[:2].tolist())
    assert (msg_type, body["kind"]) == (ERROR, "invalid") and "predict" in body["message"]


def test_bad_calls_are_invalid(spawn, workdir):
    features, labels = _data()
    joblib.dump(SVC().fit(features, labels), workdir / "svc.joblib")  # no probability=True
    runtime, _ = _ready(spawn, str(workdir / "svc.joblib"))
    cases = [
        ((features[:2].tolist(),), {"method": "fit"}, "allowed: predict"),
        ((features[:2].tolist(),), {"method": "predict_proba"}, "no predict_proba"),
        (([[1.0, 2.0]],), {}, "features"),
        ((), {}, "one positional argument"),
        (([[1, 2], [3]],), {}, ""),
        ((features[:2].tolist(),), {"methd": "predict"}, "methd"),
    ]
    for call_id, (args, kwargs, fragment) in enumerate(cases, start=1):
        msg_type, body = runtime.ask(call_id, *args, **kwargs)
        assert (msg_type, body["kind"]) == (ERROR, "invalid"), (args, kwargs, body)
        assert fragment in body["message"], body
    assert runtime.ask(99, features[:3].tolist())[0] == RESULT


def _load_fails(spawn, uri) -> dict:
    runtime = spawn()
    runtime.hello()
    _, msg_type, body = runtime.load(load_spec("sklearn", uri))
    assert msg_type == LOAD_FAILED, body
    assert runtime.wait_exit() == 3
    return body


def test_missing_file(spawn, workdir):
    body = _load_fails(spawn, str(workdir / "gone.joblib"))
    assert body == {"kind": "invalid", "message": f"Model file does not exist: {workdir / 'gone.joblib'}"}


@pytest.mark.parametrize("content", [b"definitely not a pickle", b"", pickle.dumps({"weights": [1, 2]})[:-5]])
def test_corrupt_file(spawn, workdir, content):
    path = workdir / "corrupt.joblib"
    path.write_bytes(content)
    body = _load_fails(spawn, str(path))
    assert body["kind"] == "invalid"
    assert str(path) in body["message"] and body["message"].startswith("Cannot load model file")


def test_object_that_is_no_model(spawn, workdir):
    joblib.dump({"weights": [1, 2]}, workdir / "dict.joblib")
    body = _load_fails(spawn, str(workdir / "dict.joblib"))
    assert body["kind"] == "invalid" and "has none of" in body["message"]


def test_directory_instead_of_file(spawn, workdir):
    body = _load_fails(spawn, str(workdir))
    assert body["kind"] == "invalid" and "not a file" in body["message"]
