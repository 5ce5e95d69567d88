"""What is recorded, the fourth floor: the loggers of tracked calls, the run loggers
that describe the run once, the call-recording database, and the event table that ties
mapping hooks to loggers (with pypads' defaults)."""
