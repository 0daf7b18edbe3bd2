"""The error envelope every JSON answer shares, from the API's refusals to the health check."""


def error_body(code: str, message, details: dict | None = None) -> dict:
    # str(): a lazy message is worded now, in the language of the request being answered.
    return {"error": {"code": code, "message": str(message), "details": details or {}}}
