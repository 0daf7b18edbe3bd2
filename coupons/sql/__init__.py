"""The application's hand-written SQL: every statement Django's public ORM does not write.

The rule (docs/sql.md lists each statement and the framework behaviour it relies on):

- Hand-written SQL lives here and nowhere else, as literal statements: the text is a module
  constant a reader can paste into psql, never assembled from a model's metadata at run time.
  A statement made of a few constant parts (the command's rows) is joined from constants.
- One module per statement family (claims.py: the Idempotency-Key claim and the row lock;
  transitions.py: a command's one write; journaled.py: an evidence row's insert declaring
  its actor), each constant with a docstring saying why the ORM does not write it.
- Statements run on Django's connection cursor, so transactions, the connection pool, the
  replica router and the statement counters stay Django's; values are bound as plain
  parameters (%s), never formatted into the text.
- On the command path they answer tuples or small frozen dataclasses; the services turn
  those into model instances only through the ORM's public `Model.from_db`.

Everywhere else the code uses Django's public ORM; tests/architecture/
test_no_private_internals.py holds that no module leans on the ORM's internals instead.
"""
