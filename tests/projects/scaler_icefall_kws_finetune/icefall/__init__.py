"""Speech recognition recipes (test project shaped like k2-fsa/icefall)."""
