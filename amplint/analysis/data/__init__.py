"""Data tables the rules read (API maps, op lists), kept apart from their logic."""
