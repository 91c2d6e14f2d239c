"""BasicSR-like package (XPixelGroup/BasicSR): every module imports the others as `basicsr.*`."""
