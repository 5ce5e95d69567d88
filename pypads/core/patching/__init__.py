"""Duck punching: wrappers, the patches made with them, and the import hook."""
