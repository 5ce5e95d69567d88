"""What a value holds, as the loggers and the call database record it: its size
estimated without copying, its content digest (whole or sampled), a pandas column's
values, arrays as ``.npy`` files, and values turned into artifact files."""
