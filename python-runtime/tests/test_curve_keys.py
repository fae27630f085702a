"""The runtime takes its CURVE keys out of the environment before any user code runs."""

import pytest
import zmq

from hangar_runtime.curve_keys import (PUBLIC_KEY_ENV, SECRET_KEY_ENV, SERVER_KEY_ENV, BadCurveKeys,
                                       take_from_environment)


def test_no_keys_means_plain_zeromq():
    env = {"OTHER": "x"}
    assert take_from_environment(env) is None
    assert env == {"OTHER": "x"}


def test_keys_are_removed_from_the_environment():
    server_public, _ = zmq.curve_keypair()
    public, secret = zmq.curve_keypair()
    env = {SERVER_KEY_ENV: server_public.decode(), PUBLIC_KEY_ENV: public.decode(),
           SECRET_KEY_ENV: secret.decode(), "OTHER": "x"}
    keys = take_from_environment(env)
    assert (keys.server_public, keys.public, keys.secret) == (server_public, public, secret)
    assert env == {"OTHER": "x"}


def test_half_given_keys_are_refused_and_still_removed():
    public, secret = zmq.curve_keypair()
    env = {PUBLIC_KEY_ENV: public.decode(), SECRET_KEY_ENV: secret.decode()}
    with pytest.raises(BadCurveKeys, match=SERVER_KEY_ENV):
        take_from_environment(env)
    assert env == {}


def test_a_key_of_the_wrong_length_is_refused():
    public, secret = zmq.curve_keypair()
    env = {SERVER_KEY_ENV: "short", PUBLIC_KEY_ENV: public.decode(), SECRET_KEY_ENV: secret.decode()}
    with pytest.raises(BadCurveKeys, match="40-character"):
        take_from_environment(env)
