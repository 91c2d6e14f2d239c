"""What is wrong in a file, and why: the engine (prefilter, parse, facts, rules, fix loop),
the per-file facts, the project pass, the rules, their data tables and the Diagnostic
every layer above passes on."""
