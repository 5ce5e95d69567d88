"""``python -m pypads.to_mlflow.uploader``: the uploader process (see :mod:`pypads.to_mlflow.uploader.serving`)."""

from pypads.to_mlflow.uploader.serving import main

main()
