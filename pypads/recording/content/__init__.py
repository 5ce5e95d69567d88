"""What the loggers share about the values they record: a value's size estimated without
copying, its content digest (whole or sampled), a pandas column's values, arrays as
``.npy`` files, values turned into artifact files, the names the script gives its values
(frames), where a value came from (lineage), and the pipeline's picture."""
