"""Pressing the policy editor's controls the way a person does, in either language."""


def add_condition(page, rule: int, condition: str) -> None:
    """Rule `rule` (0-based) shows `condition` (its field name) through "Add condition"."""
    page.locator(f"#id_form-{rule}-add_condition").select_option(condition)
    page.locator(f"#rule-{rule} button[data-add-condition]").click()
