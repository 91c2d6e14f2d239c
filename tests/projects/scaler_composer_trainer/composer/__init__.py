"""Training library (test project shaped like mosaicml/composer)."""
