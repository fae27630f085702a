"""A launcher that is a folder: checks that relative imports work."""

from .helper import double


def load(offset=0):
    return offset


def infer(model, x):
    return double(x) + model
