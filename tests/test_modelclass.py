"""Model classes as data: membership, inclusion, round trips, bad input."""

from __future__ import annotations

import pytest

import sinkproof as sp
from sinkproof.constructions import relu_solution, softmax_solution
from sinkproof.modelclass import ModelClass


def test_of_and_contains():
    task = sp.TriggerTask(p=2, T=3)
    relu = relu_solution(task)
    assert ModelClass.of(relu) == ModelClass("relu", 1, "fixed", "inverse", "token")
    assert ModelClass("relu").contains(relu)  # learned values include U_fix
    assert not ModelClass("softmax").contains(relu)
    assert not ModelClass("relu", positions="onehot").contains(relu)


def test_inclusion_is_field_by_field():
    fixed2 = ModelClass("softmax", heads=2, values="fixed", positions="inverse")
    assert fixed2.is_subclass_of(ModelClass("softmax", heads=2))
    assert fixed2.is_subclass_of(ModelClass("softmax", heads=None, values="fixed"))
    assert not fixed2.is_subclass_of(ModelClass("softmax", heads=1, values="fixed"))
    assert not ModelClass("softmax", heads=None).is_subclass_of(ModelClass("softmax", heads=2))
    assert not ModelClass("softmax", value_features="position").is_subclass_of(
        ModelClass("softmax"))
    assert "any-head" in str(ModelClass(heads=None))


def test_round_trip_and_any_head_membership():
    mc = ModelClass("softmax", heads=None, values="fixed", positions="any")
    assert ModelClass.from_dict(mc.to_dict()) == mc
    task = sp.TriggerTask(p=1, T=2)
    assert mc.contains(softmax_solution(task, 3.0))


@pytest.mark.parametrize("kwargs, exc", [
    (dict(kind="linear"), ValueError), (dict(heads=0), ValueError),
    (dict(heads=1.5), TypeError), (dict(values="frozen"), ValueError),
    (dict(positions="rope"), ValueError), (dict(value_features="both"), ValueError),
])
def test_bad_classes(kwargs, exc):
    with pytest.raises(exc):
        ModelClass(**kwargs)
    with pytest.raises(ValueError, match="unknown model-class fields"):
        ModelClass.from_dict({"colour": "red"})
