"""The OpenAPI schema says which capability each operation needs, read from the view itself."""

from drf_spectacular.openapi import AutoSchema

from .permissions import required_capability


class CapabilitySchema(AutoSchema):
    """Adds `x-capability` and a line of description from the view's `capabilities`.

    It reads the same `required_capability` that `HasCapability` enforces, so the documented
    requirement cannot drift from the checked one.
    """

    def capability(self):
        return required_capability(self.view, self.method)

    def get_description(self):
        capability = self.capability()
        needs = (f"Needs the `{capability.value}` capability ({capability.label})."
                 if capability else "No caller may do this.")
        return "\n\n".join(part for part in (super().get_description(), needs) if part)

    def get_extensions(self):
        capability = self.capability()
        return {**super().get_extensions(),
                "x-capability": capability.value if capability else None}
