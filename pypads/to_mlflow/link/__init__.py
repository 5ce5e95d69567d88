"""The script's side of its link to the uploader: one interface (:class:`UploaderLink`),
two ways to run the uploader behind it (a thread of the script, a process of its own)."""
