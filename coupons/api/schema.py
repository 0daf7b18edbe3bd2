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

    def get_operation(self, *args, **kwargs):
        # Added to the finished operation: a view's own extend_schema(description=...) replaces
        # get_description, and the requirement must be stated whatever the view wrote.
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        capability = self.capability()
        needs = (f"Needs the `{capability.value}` capability ({capability.label})."
                 if capability else "No caller may do this.")
        operation["description"] = "\n\n".join(
            part for part in (operation.get("description"), needs) if part
        )
        return operation

    def get_extensions(self):
        capability = self.capability()
        return {**super().get_extensions(),
                "x-capability": capability.value if capability else None}
