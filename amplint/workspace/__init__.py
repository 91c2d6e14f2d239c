"""What to lint and how: file discovery, ignore files, the project root and its torch
target, `[tool.amplint]` settings, the cache, the baseline and `# noqa` comments."""
