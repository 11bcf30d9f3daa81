"""Writers that turn results into text: one module per format."""
