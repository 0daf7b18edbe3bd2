"""Writes schemas/facts/<FactType>.json from the API's schema of POST /events (run it after
changing a fact's serializer; tests/contract/test_asyncapi.py fails while they differ).

    DJANGO_SETTINGS_MODULE=config.test_settings .venv/bin/python scripts/write_fact_schemas.py
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import django  # noqa: E402

django.setup()

from coupons.api.fact_schemas import fact_schemas  # noqa: E402

for fact_type, schema in fact_schemas().items():
    path = ROOT / "schemas" / "facts" / f"{fact_type}.json"
    path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
    print(path.relative_to(ROOT))
