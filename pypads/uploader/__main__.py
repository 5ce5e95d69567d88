"""``python -m pypads.uploader``: the uploader process (see :mod:`pypads.uploader.serving`)."""

from pypads.uploader.serving import main

main()
