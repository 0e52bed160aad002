"""The rule table: one registration per primitive (``record`` the record, ``elementwise`` and ``structural``
the registrations, ``table`` the lookups every stage reads)."""
