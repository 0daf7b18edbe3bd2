"""A command's input serializer with its fields made and bound once per class, not per request.

DRF gives every serializer instance its own deep copy of the declared fields (each field built
again from its arguments, validators and messages included) and binds them to it: for a
command's body that was a visible share of the HTTP layer's CPU. `run_command` always builds
its input serializer the same way (the body as `data`, no context, `partial` only as the class
sets it), and a bound field keeps nothing of one validation for the next: what a field reads of
its serializer is the root's `partial` and `context`, the same for every instance of the class.
So every instance of a class shares the fields of one bound prototype.

Why not a compiled validator (msgspec and the like): the serializers are also the schema
(drf-spectacular reads them) and the error contract (every field's errors at once, DRF's
messages in both languages); a second validator would have to match both exactly, for every
command, and could drift from them.
"""

from rest_framework import serializers

_bound: dict[type, dict] = {}


def input_of(serializer_class: type[serializers.Serializer], data) -> serializers.Serializer:
    """`serializer_class(data=data)` with the class's shared, already bound fields."""
    serializer = serializer_class(data=data)
    fields = _bound.get(serializer_class)
    if fields is None:
        # Made twice at worst when two threads race: both are alike and either is kept.
        fields = _bound[serializer_class] = serializer_class().fields
    serializer.__dict__["fields"] = fields  # what DRF's cached_property would hold
    return serializer
